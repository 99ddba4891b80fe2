"""REST API for OCR runs and proposals: one view per operation, nested Input/Output serializers, the roles of
``annotation.ocr.permissions``, one service or selector each."""

from __future__ import annotations

from django.http import Http404
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import (
    ApiCursorPagination,
    choice_string,
    cursor_page,
    errors,
    json_list,
    number,
    role_permission,
)
from physalign_site.errors import ApplicationError

from ..api.serializers import PassStateOutput
from ..api.views import parent_or_404, pass_state_response
from ..models import OcrProposal, OcrRun, Source
from . import permissions as perms
from .selectors import ocr_proposals_for, ocr_run_get
from .services import OcrDecision, ocr_proposals_decide, ocr_run_create

CanViewOcr = role_permission(perms.can_view_ocr, name="CanViewOcr")
CanRunOcr = role_permission(perms.can_run_ocr, name="CanRunOcr")
CanRunOcrForSource = role_permission(perms.can_run_ocr_for_source, name="CanRunOcrForSource")
CanDecideOcr = role_permission(perms.can_decide_ocr, name="CanDecideOcr")

PROBLEM_ID = OpenApiParameter("problem_id", OpenApiTypes.STR, OpenApiParameter.PATH)
BOX = {"type": "integer", "minimum": 0, "maximum": 1000}


class OcrOptionsInput(serializers.Serializer):
    """Preprocessing options (``annotation.ocr.proposals.OcrOptions``); an omitted one keeps its tuned default."""

    scale = serializers.IntegerField(min_value=1, max_value=6, required=False)
    binarize = serializers.IntegerField(
        min_value=1, max_value=254, required=False, help_text="ink below this grey"
    )
    psm = serializers.ChoiceField(
        choices=[6, 7, 8, 13], required=False, help_text="Tesseract's mode per label"
    )
    min_confidence = serializers.FloatField(min_value=0, max_value=100, required=False)
    max_glyph_px = serializers.IntegerField(min_value=4, max_value=400, required=False)
    join_gap = serializers.FloatField(min_value=0, max_value=5, required=False)
    clean = serializers.BooleanField(required=False, help_text="erase ink that cannot be a glyph")
    antialias = serializers.BooleanField(required=False)
    repair = serializers.BooleanField(required=False, help_text="repair Tesseract's usual label misreadings")


class OcrPreprocessingOutput(serializers.Serializer):
    scale = serializers.IntegerField()
    binarize = serializers.IntegerField()
    psm = serializers.IntegerField()
    min_confidence = number()
    max_glyph_px = serializers.IntegerField()
    join_gap = number()
    lang = serializers.CharField()
    clean = serializers.BooleanField()
    antialias = serializers.BooleanField()
    repair = serializers.BooleanField()


class OcrRunOptionsOutput(serializers.Serializer):
    preprocessing = OcrPreprocessingOutput()
    engine = serializers.CharField()
    pipeline = serializers.CharField(help_text="the version of annotation.ocr.proposals' pipeline")


class OcrRunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = choice_string(OcrRun.Status.choices)
    problem_id = serializers.CharField(source="parent.problem_id", allow_null=True, default=None)
    source_id = serializers.IntegerField(allow_null=True)
    options = OcrRunOptionsOutput(
        help_text="the preprocessing the run reads with, the engine and the pipeline"
    )
    total = serializers.IntegerField(help_text="images to read")
    done = serializers.IntegerField(help_text="images read so far")
    error = serializers.CharField(help_text="why the run failed (empty otherwise)")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class OcrProposalOutput(serializers.Serializer):
    id = serializers.IntegerField()
    run_id = serializers.IntegerField()
    image_id = serializers.CharField(source="image.image_id")
    bbox_1000 = json_list(BOX, description="[x_min, y_min, x_max, y_max] as proposed (Kit §2.6)")
    text = serializers.CharField()
    confidence = number("Tesseract's mean word confidence, 0–100.")
    status = choice_string(OcrProposal.Status.choices)
    visual_id = serializers.CharField(help_text="the Pass 1 record it became (accepted or edited)")
    final_bbox_1000 = json_list(BOX, description="the box kept (accepted or edited)", allow_null=True)
    final_text = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)


class OcrRunCreateInput(serializers.Serializer):
    options = OcrOptionsInput(required=False, help_text="omitted: the tuned defaults")


def _run_response(run: OcrRun, created: bool) -> Response:
    return Response(
        OcrRunOutput(run).data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
    )


class ParentOcrRunCreateApi(APIView):
    """Queue an OCR run for one problem (Pass 1 editors); a run still going is returned instead (200)."""

    permission_classes = [CanRunOcr]

    @extend_schema(
        operation_id="ocr_runs_create_for_parent",
        parameters=[PROBLEM_ID],
        request=OcrRunCreateInput,
        responses={202: OcrRunOutput, 200: OcrRunOutput, **errors(400, 401, 403, 404)},
        description="202: queued; 200: a run of this problem is still queued or running, that one is returned.",
    )
    def post(self, request: Request, problem_id: str) -> Response:
        parent = parent_or_404(problem_id)
        data = OcrRunCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        run, created = ocr_run_create(
            actor=request.user, parent=parent, options=data.validated_data.get("options") or {}
        )
        return _run_response(run, created)


class SourceOcrRunCreateApi(APIView):
    """Queue an OCR run over every problem of a source (admins)."""

    permission_classes = [CanRunOcrForSource]

    @extend_schema(
        operation_id="ocr_runs_create_for_source",
        parameters=[OpenApiParameter("source_id", OpenApiTypes.INT, OpenApiParameter.PATH)],
        request=OcrRunCreateInput,
        responses={202: OcrRunOutput, 200: OcrRunOutput, **errors(400, 401, 403, 404)},
        description="202: queued; 200: a run of this source is still queued or running, that one is returned.",
    )
    def post(self, request: Request, source_id: int) -> Response:
        source = Source.objects.filter(pk=source_id).first()
        if source is None:
            raise Http404("No such source.")
        data = OcrRunCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        run, created = ocr_run_create(
            actor=request.user, source=source, options=data.validated_data.get("options") or {}
        )
        return _run_response(run, created)


class OcrRunDetailApi(APIView):
    """A run's status and progress (the workspace polls it)."""

    permission_classes = [CanViewOcr]

    @extend_schema(operation_id="ocr_runs_retrieve", responses={200: OcrRunOutput, **errors(401, 403, 404)})
    def get(self, request: Request, run_id: int) -> Response:
        run = ocr_run_get(run_id=run_id)
        if run is None:
            raise Http404("No such OCR run.")
        return Response(OcrRunOutput(run).data)


class OcrProposalListApi(APIView):
    """A problem's OCR proposals in cursor pages, oldest first (``?status=proposed`` for the undecided)."""

    permission_classes = [CanViewOcr]
    pagination_class = ApiCursorPagination
    ordering = "pk"  # unique; proposals are created in reading order (top to bottom, left to right)

    @extend_schema(
        operation_id="ocr_proposals_list",
        parameters=[
            PROBLEM_ID,
            OpenApiParameter("status", OpenApiTypes.STR, enum=[c for c, _ in OcrProposal.Status.choices]),
        ],
        responses={200: OcrProposalOutput(many=True), **errors(400, 401, 403, 404)},
        description="Cursor pages (`?cursor=`, `?page_size=` up to 500). 400: an unknown status; 404: a bad "
        "cursor.",
    )
    def get(self, request: Request, problem_id: str) -> Response:
        parent = parent_or_404(problem_id)
        wanted = request.query_params.get("status") or None
        if wanted is not None and wanted not in OcrProposal.Status.values:
            raise ApplicationError(
                f"status must be one of {', '.join(OcrProposal.Status.values)}.", code="invalid_filter"
            )
        rows = ocr_proposals_for(parent=parent, status=wanted).order_by()
        return cursor_page(self, request, rows, lambda page: OcrProposalOutput(page, many=True).data)


class OcrDecisionInput(serializers.Serializer):
    proposal_id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=["accept", "edit", "drop"])
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="edit: the label's text (omitted: as proposed)",
    )
    bbox_1000 = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=1000),
        min_length=4,
        max_length=4,
        required=False,
        help_text="edit: [x_min, y_min, x_max, y_max] (omitted: as proposed)",
    )


class OcrProposalDecideApi(APIView):
    """Accept, edit or drop proposals of one problem; kept ones join Pass 1 in one versioned save."""

    permission_classes = [CanDecideOcr]

    @extend_schema_serializer(component_name="OcrDecideInput")
    class InputSerializer(serializers.Serializer):
        expected_version = serializers.IntegerField(
            min_value=0,
            allow_null=True,
            help_text="The Pass 1 version you last loaded (If-Match of the versioned save); 0 or null when "
            "Pass 1 does not exist yet. A stale version is a 409 and nothing changes.",
        )
        # many=True makes a ListSerializer, which takes min_length/max_length (the stubs know only the child)
        decisions = OcrDecisionInput(many=True, min_length=1, max_length=500)  # type: ignore[call-arg]

    @extend_schema(
        operation_id="ocr_proposals_decide",
        parameters=[PROBLEM_ID],
        request=InputSerializer,
        responses={
            200: inline_serializer(
                "OcrDecideOutput",
                {
                    "pass_state": PassStateOutput(
                        allow_null=True,
                        help_text="Pass 1 after the decisions (as the pass API answers), null when Pass 1 does "
                        "not exist and only drops were sent",
                    ),
                    "proposals": OcrProposalOutput(many=True),
                },
            ),
            **errors(400, 401, 403, 404, 409, 428),
        },
    )
    def post(self, request: Request, problem_id: str) -> Response:
        parent = parent_or_404(problem_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decisions = [
            OcrDecision(
                proposal_id=d["proposal_id"],
                action=d["action"],
                text=d.get("text"),
                bbox_1000=d.get("bbox_1000"),
            )
            for d in data.validated_data["decisions"]
        ]
        decided = ocr_proposals_decide(
            parent=parent,
            decisions=decisions,
            actor=request.user,
            expected_version=data.validated_data["expected_version"],
        )
        headers = {}
        state = None
        if decided.doc is not None:
            state = pass_state_response(decided.doc).data
            headers["ETag"] = quote_etag(str(decided.doc.version))
        body = {"pass_state": state, "proposals": OcrProposalOutput(decided.proposals, many=True).data}
        return Response(body, headers=headers)
