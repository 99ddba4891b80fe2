"""A pass document's versions over REST: list, one version, a diff between two, and revert."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import (
    ApiCursorPagination,
    JsonValueField,
    choice_string,
    cursor_page,
    errors,
    json_object,
)
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from ..models import PassDocument, PassDocumentVersion
from ..selectors import (
    pass_version_get,
    pass_version_list,
)
from ..services import (
    pass_document_revert,
)
from ..workspace_diff import document_diff
from .serializers import (
    PassStateOutput,
)
from .views import (
    IF_MATCH,
    PASS_PATH_PARAMS,
    PassReadPermission,
    PassWritePermission,
    expected_version,
    parent_or_404,
    pass_or_404,
    pass_state_response,
    require_pass5_open,
)


class PassVersionOutput(serializers.Serializer):
    """One history version. Autosaves by one user close together are one version (``save_count`` saves, from
    ``saved_at`` to ``last_saved_at``, holding the last one's document)."""

    version = serializers.IntegerField(help_text="the history number (1, 2, 3… per pass document)")
    document_version = serializers.IntegerField(
        help_text="the pass document's save counter (its If-Match / ETag) at this version's last save"
    )
    document_sha256 = serializers.CharField()
    saved_by = serializers.SerializerMethodField()
    saved_at = serializers.DateTimeField(help_text="the first save this version holds")
    last_saved_at = serializers.DateTimeField(help_text="the last save this version holds (its document)")
    save_count = serializers.IntegerField(help_text="how many saves this version holds (1 or more)")
    note = serializers.CharField()

    @extend_schema_field(OpenApiTypes.STR)
    def get_saved_by(self, row: Any) -> str | None:
        return row.saved_by.get_username() if row.saved_by_id else None


class PassVersionDetailOutput(PassVersionOutput):
    document = json_object("The Kit pass document as saved in this version (Kit §2.4: pass 1–5).")


class DiffCountsOutput(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField()


class FieldChangeOutput(serializers.Serializer):
    field = serializers.CharField()
    before = JsonValueField(allow_null=True, help_text="The field's value in the earlier Kit record.")
    after = JsonValueField(allow_null=True, help_text="The field's value in the later Kit record.")


class RecordChangeOutput(serializers.Serializer):
    collection = serializers.CharField()
    record_id = serializers.CharField()
    change = choice_string([("added", ""), ("removed", ""), ("changed", "")])
    # A declared field named like Serializer.fields: DRF's metaclass moves it into _declared_fields, so the
    # property still works; the stubs only see the class attribute.
    fields = FieldChangeOutput(many=True, help_text="Changed fields (``changed`` records only).")  # type: ignore[assignment]
    before = JsonValueField(
        allow_null=True,
        help_text="The record before (null when added): a record of the Kit pass document, or the value of a "
        "top-level field (``record_id`` empty).",
    )
    after = JsonValueField(allow_null=True, help_text="The record after (null when removed), as ``before``.")


# ``from`` is a keyword, so the fields are given as a mapping (declaration order is the output order).
PassDiffOutput = type(
    "PassDiffOutput",
    (serializers.Serializer,),
    {
        "__module__": __name__,
        "__doc__": "Record-level changes from version ``from`` (0: the empty document) to version ``to``.",
        "from": serializers.IntegerField(),
        "to": serializers.IntegerField(),
        "counts": DiffCountsOutput(),
        "changes": RecordChangeOutput(many=True),
    },
)


def _open_pass(problem_id: str, pass_no: int) -> PassDocument:
    parent = parent_or_404(problem_id)
    require_pass5_open(parent, pass_no)
    return pass_or_404(parent, pass_no)


class PassVersionListApi(APIView):
    """Every saved version of a pass document, newest first (documents omitted; see the detail), in cursor
    pages."""

    permission_classes = [PassReadPermission]
    pagination_class = ApiCursorPagination
    ordering = "-version"  # unique within the pass document

    @extend_schema(
        operation_id="passes_versions_list",
        parameters=PASS_PATH_PARAMS,
        responses={200: PassVersionOutput(many=True), **errors(401, 403, 404, 409)},
        description="Cursor pages, newest version first (`?cursor=`, `?page_size=` up to 500). 404: no such "
        "parent or pass document, or a bad cursor; 409: pass 5 before passes 1–4 are approved.",
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        doc = _open_pass(problem_id, pass_no)
        return cursor_page(
            self, request, pass_version_list(doc=doc), lambda page: PassVersionOutput(page, many=True).data
        )


class PassVersionDetailApi(APIView):
    permission_classes = [PassReadPermission]

    @extend_schema(
        operation_id="passes_versions_retrieve",
        parameters=[*PASS_PATH_PARAMS, OpenApiParameter("version", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses={200: PassVersionDetailOutput, **errors(401, 403, 404, 409)},
    )
    def get(self, request: Request, problem_id: str, pass_no: int, version: int) -> Response:
        row = pass_version_get(doc=_open_pass(problem_id, pass_no), version=version)
        if row is None:
            raise Http404("No such version.")
        return Response(PassVersionDetailOutput(row).data)


class PassDiffApi(APIView):
    """Record-level diff between two saved versions (``?from=`` may be 0 for the empty document)."""

    permission_classes = [PassReadPermission]

    @extend_schema(
        operation_id="passes_diff",
        parameters=[
            *PASS_PATH_PARAMS,
            OpenApiParameter("from", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True),
            OpenApiParameter("to", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True),
        ],
        responses={200: PassDiffOutput, **errors(400, 401, 403, 404, 409)},
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        doc = _open_pass(problem_id, pass_no)
        from_v = int_param(request.query_params.get("from"), name="from")
        to_v = int_param(request.query_params.get("to"), name="to")
        if from_v is None or to_v is None:
            raise ApplicationError("Give ?from=<version>&to=<version>.", code="versions_required")
        wanted = {from_v, to_v} - {0}
        rows = {
            row.version: row.document
            for row in PassDocumentVersion.objects.filter(pass_document=doc, version__in=wanted)
        }
        if wanted - set(rows):
            raise Http404("No such version.")
        diff = document_diff(rows.get(from_v), rows.get(to_v))
        return Response(PassDiffOutput({"from": from_v, "to": to_v, **diff.as_dict()}).data)


class PassRevertApi(APIView):
    """Save an earlier version's content as a new version (path: its history number; If-Match: the document's
    current save counter, its ETag)."""

    permission_classes = [PassWritePermission]

    @extend_schema(
        operation_id="passes_revert",
        parameters=[
            *PASS_PATH_PARAMS,
            IF_MATCH,
            OpenApiParameter("version", OpenApiTypes.INT, OpenApiParameter.PATH),
        ],
        request=None,
        responses={200: PassStateOutput, **errors(400, 401, 403, 404, 409, 428)},
    )
    def post(self, request: Request, problem_id: str, pass_no: int, version: int) -> Response:
        doc = _open_pass(problem_id, pass_no)
        saved = pass_document_revert(
            doc=doc, version=version, actor=request.user, expected_version=expected_version(request)
        )
        return pass_state_response(saved)
