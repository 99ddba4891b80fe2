"""REST API for LLM drafts and draft runs (whoever may edit the pass: annotators and admins).

One view per resource/operation, as ``annotation/api/views.py``: roles through ``annotation.permissions``
(drafting follows the right to edit the pass), a nested ``InputSerializer``, reads through
``annotation.drafting.selectors``, writes through ``annotation.drafting.services``; a draft is rendered by
``DraftOutput`` and a run's progress by ``DraftRunOutput`` wherever an operation answers one. Refusals are
``ApplicationError``s (``ApiErrorOutput``).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from models_registry.api.schemas import REASONING_SCHEMA
from models_registry.models import ModelConfig
from models_registry.selectors import model_config_get
from physalign_site.api import (
    JSON_VALUE_REF,
    ApiCursorPagination,
    ApiErrorOutput,
    choice_string,
    cursor_page,
    json_list,
    json_object,
    json_value,
    role_permission,
)

from ..drafting.selectors import draft_comparison, draft_get, draft_list, draft_run_get
from ..drafting.services import draft_accept, draft_discard, draft_run_create, draft_run_progress
from ..models import DraftRun, LLMDraft, ParentProblem
from ..permissions import can_draft
from ..selectors import parent_get
from .serializers import ValidationIssueOutput

ERROR = ApiErrorOutput

# Drafting follows the right to edit the pass: from the URL, or of the draft / run the view loaded.
CanDraftPass = role_permission(can_draft, kwargs=("pass_no",), name="CanDraftPass")
CanDraftObject = role_permission(
    on_object=lambda user, obj: can_draft(user, obj.pass_no), name="CanDraftObject"
)


# --- the JSON a draft stores, typed ---------------------------------------------------------------------

NULLABLE_INTEGER = {"type": "integer", "nullable": True}
NULLABLE_NUMBER = {"type": "number", "nullable": True}
KIT_VALUE: dict[str, Any] = {
    "description": "A record of a Kit pass document (an object), or the value of one of its top-level "
    "fields; null where that side has no such record.",
    "allOf": [JSON_VALUE_REF],
}
USAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Tokens the provider billed ({} until the draft is answered).",
    "properties": {
        "input_tokens": {"type": "integer"},
        "output_tokens": {"type": "integer"},
        "reasoning_tokens": {"type": "integer"},
    },
    "additionalProperties": False,
}
ATTEMPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One provider attempt (``llm.types.Attempt``).",
    "properties": {
        "number": {"type": "integer"},
        "started_at": {"type": "number", "description": "Unix time"},
        "latency_ms": {"type": "integer"},
        "outcome": {"type": "string", "description": "ok | error"},
        "error_kind": {"type": "string"},
        "status_code": NULLABLE_INTEGER,
        "retryable": {"type": "boolean"},
        "retry_after_s": NULLABLE_NUMBER,
        "slept_s": {"type": "number"},
        "message": {"type": "string"},
    },
    "additionalProperties": False,
}
ACCEPTANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "How the human changed the draft when accepting it ({} until accepted).",
    "properties": {
        "added": {"type": "integer", "description": "Records in the accepted document, not in the draft"},
        "removed": {"type": "integer", "description": "Records of the draft left out"},
        "changed": {"type": "integer", "description": "Records of the draft accepted with changes"},
        "kept": {"type": "integer", "description": "Records of the draft accepted as drafted"},
        "mode": {"type": "string", "enum": ["whole", "records", "edited"]},
        "record_keys": {"type": "array", "items": {"type": "string"}},
        "version": {"type": "integer", "description": "The pass document version it became"},
        "document_sha256": {"type": "string"},
        "accepted_at": {"type": "string", "format": "date-time"},
    },
    "additionalProperties": False,
}
REQUEST_RECORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "What was sent to the model: the texts, image hashes and settings ({} until sent).",
    "properties": {
        "request_id": {"type": "string"},
        "system": {"type": "string"},
        "user": {"type": "string"},
        "images": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sha256": {"type": "string"},
                    "media_type": {"type": "string"},
                    "bytes": {"type": "integer"},
                },
                "additionalProperties": False,
            },
        },
        "fingerprint": {"type": "string", "description": "SHA-256 of what the model sees"},
        "prompt_version": {"type": "string"},
        "model": {"type": "string", "description": "The model configuration's name"},
        "provider": {"type": "string"},
        "model_id": {"type": "string"},
        "settings": {
            "type": "object",
            "properties": {
                "max_output_tokens": NULLABLE_INTEGER,
                "temperature": NULLABLE_NUMBER,
                "reasoning": REASONING_SCHEMA,
            },
            "additionalProperties": False,
        },
        "finish_reason": {"type": "string"},
        "result_status": {"type": "string"},
    },
    "additionalProperties": False,
}


# --- shared outputs -------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="Draft")
class DraftOutput(serializers.ModelSerializer):
    """A draft as listed, accepted or discarded."""

    problem_id = serializers.CharField(source="parent.problem_id")
    model = serializers.CharField(source="model_config.name", default=None, allow_null=True)
    status = choice_string(LLMDraft.Status.choices)
    parsed_document = json_object(
        "A Kit pass document: the model's output, parsed (null when it did not parse).", allow_null=True
    )
    validation_errors = ValidationIssueOutput(many=True, help_text="What the pass validator says of it")
    usage = json_value(USAGE_SCHEMA)
    attempts = json_list(ATTEMPT_SCHEMA)
    acceptance = json_value(ACCEPTANCE_SCHEMA)
    request_record = json_value(REQUEST_RECORD_SCHEMA)

    class Meta:
        model = LLMDraft
        fields: tuple[str, ...] = (
            "id",
            "problem_id",
            "pass_no",
            "run",
            "model",
            "model_label",
            "prompt_version",
            "status",
            "raw_output",
            "parsed_document",
            "validation_errors",
            "error",
            "usage",
            "attempts",
            "latency_ms",
            "cost_usd",
            "accepted_into",
            "acceptance",
            "request_record",
            "created_at",
        )
        read_only_fields = fields


@extend_schema_serializer(component_name="DraftRun")
class DraftRunOutput(serializers.Serializer):
    """A draft run's progress (``draft_run_progress``)."""

    id = serializers.IntegerField()
    status = choice_string(DraftRun.Status.choices)
    pass_no = serializers.IntegerField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    finished = serializers.IntegerField(help_text="done + failed")
    percent = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    model = serializers.CharField(help_text="The model configuration's name")
    finished_at = serializers.DateTimeField(allow_null=True)


# --- helpers --------------------------------------------------------------------------------------------


def _parent_or_404(problem_id: str) -> ParentProblem:
    parent = parent_get(problem_id=problem_id)
    if parent is None:
        raise Http404("No such parent problem.")
    return parent


def _draft_or_404(view: APIView, request: Request, draft_id: int) -> LLMDraft:
    draft = draft_get(draft_id=draft_id)
    if draft is None:
        raise Http404("No such draft.")
    view.check_object_permissions(request, draft)
    return draft


def _model_or_404(name: str) -> ModelConfig:
    config = model_config_get(name=name)
    if config is None:
        raise Http404("No such model.")
    return config


PASS_PATH_PARAMS = [
    OpenApiParameter("problem_id", OpenApiTypes.STR, OpenApiParameter.PATH),
    OpenApiParameter("pass_no", OpenApiTypes.INT, OpenApiParameter.PATH, enum=[1, 2, 3, 4, 5]),
]


# --- a parent's drafts ----------------------------------------------------------------------------------


class DraftListApi(APIView):
    """A parent's drafts of one pass, newest first; creating one starts a draft run for that parent."""

    permission_classes = [CanDraftPass]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema_serializer(component_name="DraftRunCreateInput")
    class InputSerializer(serializers.Serializer):
        model = serializers.SlugField(help_text="The model configuration's name (an active one)")

    @extend_schema(
        operation_id="parents_passes_drafts_list",
        parameters=PASS_PATH_PARAMS,
        responses={200: DraftOutput(many=True), 403: ERROR, 404: ERROR},
        description="Keyset pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: no such parent, "
        "or a bad cursor.",
    )
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        drafts = draft_list(parent=_parent_or_404(problem_id), pass_no=pass_no)
        return cursor_page(self, request, drafts, lambda page: DraftOutput(page, many=True).data)

    @extend_schema(
        operation_id="parents_passes_drafts_create",
        parameters=PASS_PATH_PARAMS,
        request=InputSerializer,
        responses={202: DraftRunOutput, 400: ERROR, 403: ERROR, 404: ERROR},
        description="400: an invalid body, an inactive model, or Pass 5 before Passes 1–4 are approved. "
        "404: no such parent or model.",
    )
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        parent = _parent_or_404(problem_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = draft_run_create(
            pass_no=pass_no,
            model_config=_model_or_404(data.validated_data["model"]),
            parents=[parent],
            actor=request.user,
        )
        return Response(DraftRunOutput(draft_run_progress(run=run)).data, status=status.HTTP_202_ACCEPTED)


# --- one draft ------------------------------------------------------------------------------------------


class DraftDetailApi(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema_serializer(component_name="DraftDetail")
    class OutputSerializer(DraftOutput):
        """A draft with its per-record comparison against the current pass document (``context``)."""

        @extend_schema_serializer(component_name="RecordComparison")
        class ComparisonSerializer(serializers.Serializer):
            key = serializers.CharField(help_text="collection/id, or a top-level field name")
            state = serializers.CharField(help_text="new | changed | same | current_only")
            draft = json_value(KIT_VALUE)
            current = json_value(KIT_VALUE)

        comparison = serializers.SerializerMethodField()
        current_version = serializers.SerializerMethodField(help_text="0 when the pass has no document yet")

        class Meta(DraftOutput.Meta):
            fields = (*DraftOutput.Meta.fields, "comparison", "current_version")
            read_only_fields = fields

        @extend_schema_field(ComparisonSerializer(many=True))
        def get_comparison(self, draft: LLMDraft) -> list[dict[str, Any]]:
            # many=True makes a ListSerializer, whose data is a list (the stubs type it ReturnDict)
            return self.ComparisonSerializer(self.context["comparison"].rows, many=True).data  # type: ignore[return-value]

        def get_current_version(self, draft: LLMDraft) -> int:
            return self.context["comparison"].current_version

    @extend_schema(
        operation_id="drafts_retrieve",
        responses={200: OutputSerializer, 403: ERROR, 404: ERROR},
    )
    def get(self, request: Request, draft_id: int) -> Response:
        draft = _draft_or_404(self, request, draft_id)
        comparison = draft_comparison(draft=draft)
        return Response(self.OutputSerializer(draft, context={"comparison": comparison}).data)


class DraftAcceptApi(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema_serializer(component_name="DraftAcceptInput")
    class InputSerializer(serializers.Serializer):
        expected_version = serializers.IntegerField(
            min_value=0,
            allow_null=True,
            required=False,
            help_text="The pass document version you compared against (0 or null: the pass has none yet)",
        )
        record_keys = serializers.ListField(
            child=serializers.CharField(),
            required=False,
            allow_null=True,
            help_text="Accept only these records (the comparison's keys), merged into the current document",
        )
        document = json_object(
            "A Kit pass document: the draft after your edits, accepted instead of the draft.",
            required=False,
            allow_null=True,
        )

        def validate_document(self, value: Any) -> Any:
            if value is not None and not isinstance(value, dict):
                raise serializers.ValidationError("must be a JSON object")
            return value

    @extend_schema(
        operation_id="drafts_accept_create",
        request=InputSerializer,
        responses={200: DraftOutput, 400: ERROR, 403: ERROR, 404: ERROR, 409: ERROR, 428: ERROR},
        description="Accept the draft whole (default), only `record_keys`, or as `document`. 400: the draft is "
        "not acceptable or the document cannot be stored; 409: the pass document changed since "
        "`expected_version`; 428: the pass has a document and no `expected_version` was sent.",
    )
    def post(self, request: Request, draft_id: int) -> Response:
        draft = _draft_or_404(self, request, draft_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        draft_accept(
            draft=draft,
            actor=request.user,
            expected_version=data.validated_data.get("expected_version"),
            record_keys=data.validated_data.get("record_keys"),
            document=data.validated_data.get("document"),
        )
        accepted = draft_get(draft_id=draft.pk)
        return Response(DraftOutput(accepted).data)


class DraftDiscardApi(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema(
        operation_id="drafts_discard_create",
        request=None,
        responses={200: DraftOutput, 400: ERROR, 403: ERROR, 404: ERROR},
        description="400: the draft is pending, accepted or discarded already.",
    )
    def post(self, request: Request, draft_id: int) -> Response:
        draft = _draft_or_404(self, request, draft_id)
        return Response(DraftOutput(draft_discard(draft=draft, actor=request.user)).data)


# --- draft runs -----------------------------------------------------------------------------------------


class DraftRunDetailApi(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema(
        operation_id="draft_runs_retrieve", responses={200: DraftRunOutput, 403: ERROR, 404: ERROR}
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = draft_run_get(run_id=run_id)
        if run is None:
            raise Http404("No such draft run.")
        self.check_object_permissions(request, run)
        return Response(DraftRunOutput(draft_run_progress(run=run)).data)
