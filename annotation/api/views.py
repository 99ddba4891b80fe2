"""REST API for sources, parent problems, pass documents, events and imports.

One view per resource/operation; each checks roles through ``annotation.permissions``, validates its
input with a nested serializer, calls one service or selector, and renders an Output serializer.
Business refusals are ``ApplicationError``s, rendered by ``physalign_site.errors``.
"""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.utils.http import parse_etags, quote_etag
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    extend_schema_view,
)
from rest_framework import filters, generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.disclosure import may_show_targets
from physalign_site.api import (
    ApiCursorPagination,
    ApiErrorOutput,
    cursor_page,
    errors,
    json_object,
    role_permission,
)
from physalign_site.errors import ApplicationError
from physalign_site.params import int_param

from .. import permissions as perms
from ..exporters.jobs import can_export_workspace, workspace_export_create, workspace_export_download
from ..importers import import_job_create
from ..models import ImportJob, ParentProblem, PassDocument, WorkspaceExport
from ..selectors import (
    import_job_get,
    parent_get,
    parent_list,
    parent_passes_approved,
    pass_document_get,
    pass_issues,
    source_list,
)
from ..services import (
    SOLUTION_PASS,
    pass_document_approve,
    pass_document_reject,
    pass_document_save,
    pass_document_submit,
    source_create,
)
from ..source_reviews import RecordCommentIn, record_comments_for_annotator
from .filters import ParentFilter
from .serializers import (
    ImportJobOutput,
    ParentDetailOutput,
    ParentDetailPrivateOutput,
    ParentListOutput,
    PassStateOutput,
    PassSummaryOutput,
    RecordCommentInput,
    SourceOutput,
    WorkspaceExportOutput,
)

# --- permissions --------------------------------------------------------------------------------------

# The pass number comes from the URL (the ``pass_no`` converter: 1–5).
PassPermission = role_permission(
    perms.can_read_pass, unsafe=perms.can_edit_pass, kwargs=("pass_no",), name="PassPermission"
)
PassReadPermission = role_permission(perms.can_read_pass, kwargs=("pass_no",), name="PassReadPermission")
PassWritePermission = role_permission(perms.can_edit_pass, kwargs=("pass_no",), name="PassWritePermission")
PassSubmitPermission = role_permission(
    perms.can_submit_pass, kwargs=("pass_no",), name="PassSubmitPermission"
)
PassReviewPermission = role_permission(
    perms.can_review_pass_no, kwargs=("pass_no",), name="PassReviewPermission"
)
CanViewProblems = role_permission(perms.can_view_problems, name="CanViewProblems")
CanViewSources = role_permission(
    perms.can_view_problems, unsafe=perms.can_manage_sources, name="CanViewSources"
)
CanImport = role_permission(perms.can_view_import_jobs, unsafe=perms.can_import, name="CanImport")
CanExportWorkspace = role_permission(can_export_workspace, name="CanExportWorkspace")
CanReadPassSummary = role_permission(lambda user: perms.can_read_pass(user, 1), name="CanReadPassSummary")


# --- helpers ------------------------------------------------------------------------------------------


def parent_or_404(problem_id: str) -> ParentProblem:
    parent = parent_get(problem_id=problem_id)
    if parent is None:
        raise Http404("No such parent problem.")
    return parent


def pass_or_404(parent: ParentProblem, pass_no: int) -> PassDocument:
    doc = pass_document_get(parent=parent, pass_no=pass_no)
    if doc is None:
        raise Http404("This pass has no document yet.")
    return doc


def require_pass5_open(parent: ParentProblem, pass_no: int) -> None:
    if pass_no == SOLUTION_PASS and not parent_passes_approved(parent=parent):
        raise ApplicationError(
            "Pass 5 opens only after passes 1–4 are approved.", code="pass5_locked", status=409
        )


def expected_version(request: Request) -> int | None:
    """``If-Match: "3"`` (the ETag we sent), ``W/"3"`` or a bare ``3`` → 3; absent → None (RFC 9110 §13.1.1,
    versions as entity tags). One tag only: a list or ``*`` names no version."""
    raw = request.headers.get("If-Match")
    if raw is None or not raw.strip():
        return None
    value = raw.strip()
    if value != "*" and parse_etags(value) == [value]:  # exactly one well-formed tag, nothing around it
        value = value.removeprefix("W/")[1:-1]
    else:  # a bare version, as clients and curl users type it
        value = value.removeprefix("W/")
    try:
        version = int_param(value, name="If-Match")
    except ApplicationError:
        version = None
    if version is None:
        raise ApplicationError(
            'If-Match must carry the document version you loaded, e.g. If-Match: "3".',
            code="precondition_invalid",
        )
    return version


def pass_state_response(doc: PassDocument, *, status_code: int = status.HTTP_200_OK) -> Response:
    # the validator's issues, then the physics findings with their severity (only "blocking" ones refuse submit)
    issues = getattr(doc, "checked_issues", None)  # set by pass_document_save on the document it stored
    if issues is None:
        issues = pass_issues(parent=doc.parent, pass_no=doc.pass_no, document=doc.document)
    comments = [
        {
            "record": f"{c['collection']}:{record_id}",
            "text": c["text"],
            "by": c["by"],
            "decision": c["decision"],
        }
        for record_id, listed in record_comments_for_annotator(doc).items()
        for c in listed
    ]
    data = PassStateOutput(doc, context={"validation_issues": issues, "record_comments": comments}).data
    return Response(data, status=status_code, headers={"ETag": quote_etag(str(doc.version))})


PASS_PATH_PARAMS = [
    OpenApiParameter("problem_id", OpenApiTypes.STR, OpenApiParameter.PATH),
    OpenApiParameter("pass_no", OpenApiTypes.INT, OpenApiParameter.PATH, enum=[1, 2, 3, 4, 5]),
]
IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="Version last loaded (the ETag). Required when the document exists; omit or 0 to create.",
)


# --- sources ------------------------------------------------------------------------------------------


class SourceListApi(APIView):
    """Sources by name, in cursor pages; admins add one."""

    permission_classes = [CanViewSources]
    pagination_class = ApiCursorPagination
    ordering = "name"  # unique

    @extend_schema_serializer(component_name="SourceCreateInput")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        license = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
        url = serializers.URLField(max_length=500, required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="sources_list",
        responses={200: SourceOutput(many=True), **errors(401, 403, 404)},
        description="Cursor pages by name (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        return cursor_page(self, request, source_list(), lambda page: SourceOutput(page, many=True).data)

    @extend_schema(
        operation_id="sources_create",
        request=InputSerializer,
        responses={201: SourceOutput, **errors(400, 401, 403, 409)},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        source = source_create(actor=request.user, **data.validated_data)
        return Response(SourceOutput(source).data, status=status.HTTP_201_CREATED)


class SourceDetailApi(APIView):
    permission_classes = [CanViewProblems]

    @extend_schema(operation_id="sources_retrieve", responses={200: SourceOutput, **errors(401, 403, 404)})
    def get(self, request: Request, source_id: int) -> Response:
        source = source_list().filter(pk=source_id).first()
        if source is None:
            raise Http404("No such source.")
        return Response(SourceOutput(source).data)


# --- parent problems ----------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        operation_id="parents_list",
        responses={200: ParentListOutput(many=True), **errors(400, 401, 403, 404)},
        description="Cursor pages by problem id (`?ordering=-problem_id` for the reverse; `?cursor=`, "
        "`?page_size=` up to 500). 400: an unknown filter value; 404: a bad cursor.",
    )
)
class ParentListApi(generics.ListAPIView):
    """Parent problems (never with answer or solution); filter, search (`?search=`), order by problem id,
    in cursor pages."""

    permission_classes = [CanViewProblems]
    serializer_class = ParentListOutput
    pagination_class = ApiCursorPagination
    filterset_class = ParentFilter
    filter_backends = [DjangoFilterBackend, filters.SearchFilter, filters.OrderingFilter]
    search_fields = ["problem_id", "stem", "query", "source_sample_id"]
    ordering_fields = ["problem_id"]  # a cursor pages by a unique key
    ordering = "problem_id"

    def get_queryset(self):
        return parent_list()


class ParentDetailApi(APIView):
    permission_classes = [CanViewProblems]

    @extend_schema(
        operation_id="parents_retrieve",
        responses={200: ParentDetailPrivateOutput, **errors(401, 403, 404)},
        description="`answer` and `solution` are present only for key holders (admin + probes.view_private_mapping); for every other role the keys are "
        "absent.",
    )
    def get(self, request: Request, problem_id: str) -> Response:
        parent = parent_or_404(problem_id)
        private = may_show_targets(request.user, where="api:parent", parents=[parent.pk])
        output = ParentDetailPrivateOutput if private else ParentDetailOutput
        return Response(output(parent).data)


# --- pass documents -----------------------------------------------------------------------------------


class PassListApi(APIView):
    """The parent's pass documents, by pass number: a bare array, its length fixed by the protocol (at
    most the five passes), so never paginated."""

    permission_classes = [CanReadPassSummary]

    @extend_schema(
        operation_id="passes_list",
        responses={200: PassSummaryOutput(many=True), **errors(401, 403, 404)},
        parameters=[OpenApiParameter("problem_id", OpenApiTypes.STR, OpenApiParameter.PATH)],
        description="The parent's pass documents by pass number: an array of at most five (one per pass "
        "of the protocol), never paginated.",
    )
    def get(self, request: Request, problem_id: str) -> Response:
        parent = parent_or_404(problem_id)
        return Response(PassSummaryOutput(parent.passes.all(), many=True).data)


class PassDetailApi(APIView):
    permission_classes = [PassPermission]

    @extend_schema_serializer(component_name="PassUpdateInput")
    class InputSerializer(serializers.Serializer):
        document = json_object("The whole Kit pass document of this pass (Kit §2.4: pass 1–5).")

    @extend_schema(
        operation_id="passes_retrieve",
        parameters=PASS_PATH_PARAMS,
        responses={200: PassStateOutput, **errors(401, 403, 404, 409)},
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        parent = parent_or_404(problem_id)
        require_pass5_open(parent, pass_no)
        return pass_state_response(pass_or_404(parent, pass_no))

    @extend_schema(
        operation_id="passes_update",
        parameters=[*PASS_PATH_PARAMS, IF_MATCH],
        request=InputSerializer,
        responses={200: PassStateOutput, **errors(400, 401, 403, 404, 409, 428)},
    )
    def put(self, request: Request, problem_id: str, pass_no: int) -> Response:
        parent = parent_or_404(problem_id)
        expected = expected_version(request)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = pass_document_save(
            parent=parent,
            pass_no=pass_no,
            document=data.validated_data["document"],
            actor=request.user,
            expected_version=expected,
        )
        return pass_state_response(doc)


class PassSubmitApi(APIView):
    permission_classes = [PassSubmitPermission]

    @extend_schema(
        operation_id="passes_submit",
        parameters=PASS_PATH_PARAMS,
        request=None,
        responses={200: PassStateOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        doc = pass_or_404(parent_or_404(problem_id), pass_no)
        return pass_state_response(pass_document_submit(doc=doc, actor=request.user))


def _with_comments(validated: dict[str, Any]) -> dict[str, Any]:
    return {**validated, "comments": [RecordCommentIn(c["record"], c["text"]) for c in validated["comments"]]}


class PassApproveApi(APIView):
    permission_classes = [PassReviewPermission]

    @extend_schema_serializer(component_name="PassApproveInput")
    class InputSerializer(serializers.Serializer):
        document_sha256 = serializers.RegexField(r"^[0-9a-f]{64}$", help_text="The hash you reviewed.")
        parent_content_sha256 = serializers.RegexField(
            r"^[0-9a-f]{64}$",
            required=False,
            help_text="The problem content hash you reviewed (the pass state's parent_content_sha256); "
            "if the problem changed since, the approval is refused (409).",
        )
        note = serializers.CharField(required=False, allow_blank=True, default="")
        comments = RecordCommentInput(many=True, required=False, default=list)

    @extend_schema(
        operation_id="passes_approve",
        parameters=PASS_PATH_PARAMS,
        request=InputSerializer,
        responses={200: PassStateOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        doc = pass_or_404(parent_or_404(problem_id), pass_no)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = pass_document_approve(doc=doc, actor=request.user, **_with_comments(data.validated_data))
        return pass_state_response(doc)


class PassRejectApi(APIView):
    permission_classes = [PassReviewPermission]

    @extend_schema_serializer(component_name="PassRejectInput")
    class InputSerializer(serializers.Serializer):
        document_sha256 = serializers.RegexField(r"^[0-9a-f]{64}$", help_text="The hash you reviewed.")
        note = serializers.CharField(
            required=False, allow_blank=True, default="", help_text="Required: what the annotator should fix."
        )
        comments = RecordCommentInput(many=True, required=False, default=list)

    @extend_schema(
        operation_id="passes_reject",
        parameters=PASS_PATH_PARAMS,
        request=InputSerializer,
        responses={200: PassStateOutput, **errors(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        doc = pass_or_404(parent_or_404(problem_id), pass_no)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = pass_document_reject(doc=doc, actor=request.user, **_with_comments(data.validated_data))
        return pass_state_response(doc)


# --- imports ------------------------------------------------------------------------------------------


class ImportCreateApi(APIView):
    permission_classes = [CanImport]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="ImportCreateInput")
    class InputSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=ImportJob.Kind.choices)
        file = serializers.FileField(help_text="A zip archive.")

    @extend_schema(
        operation_id="imports_create",
        request=InputSerializer,
        responses={202: ImportJobOutput, **errors(400, 401, 403, 413)},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = import_job_create(
            kind=data.validated_data["kind"], upload=data.validated_data["file"], actor=request.user
        )
        return Response(ImportJobOutput(job).data, status=status.HTTP_202_ACCEPTED)


class ImportDetailApi(APIView):
    permission_classes = [CanImport]

    @extend_schema(operation_id="imports_retrieve", responses={200: ImportJobOutput, **errors(401, 403, 404)})
    def get(self, request: Request, job_id: int) -> Response:
        job = import_job_get(job_id=job_id)
        if job is None:
            raise Http404("No such import job.")
        return Response(ImportJobOutput(job).data)


# --- Kit workspace exports ----------------------------------------------------------------------------


class WorkspaceExportCreateApi(APIView):
    permission_classes = [CanExportWorkspace]

    @extend_schema_serializer(component_name="WorkspaceExportInput")
    class InputSerializer(serializers.Serializer):
        source = serializers.CharField(  # type: ignore[assignment]  # a declared field, not Field.source
            required=False, allow_blank=True, default="", help_text='"" = every source'
        )
        problem_ids = serializers.ListField(
            child=serializers.CharField(max_length=180), required=False, default=list, max_length=100_000
        )
        approved_only = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="kit_workspace_exports_create",
        request=InputSerializer,
        responses={202: WorkspaceExportOutput, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        job = workspace_export_create(actor=request.user, **data.validated_data)
        return Response(WorkspaceExportOutput(job).data, status=status.HTTP_202_ACCEPTED)


class WorkspaceExportDetailApi(APIView):
    permission_classes = [CanExportWorkspace]

    @extend_schema(
        operation_id="kit_workspace_exports_retrieve",
        responses={200: WorkspaceExportOutput, **errors(401, 403, 404)},
    )
    def get(self, request: Request, job_id: int) -> Response:
        return Response(WorkspaceExportOutput(get_object_or_404(WorkspaceExport, pk=job_id)).data)


class WorkspaceExportDownloadApi(APIView):
    permission_classes = [CanExportWorkspace]

    @extend_schema(
        operation_id="kit_workspace_exports_download",
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="The workspace zip."),
            **errors(401, 403, 404),
            409: OpenApiResponse(ApiErrorOutput, description="The export is not built (yet)."),
            410: OpenApiResponse(ApiErrorOutput, description="The zip is no longer in the media storage."),
        },
    )
    def get(self, request: Request, job_id: int) -> FileResponse:
        job = get_object_or_404(WorkspaceExport, pk=job_id)
        handle = workspace_export_download(job=job, actor=request.user)
        return FileResponse(
            handle, as_attachment=True, filename=f"kit_workspace_{job.pk}.zip", content_type="application/zip"
        )
