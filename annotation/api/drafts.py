"""REST API for LLM drafts and draft runs (annotators and admins)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from models_registry.models import ModelConfig
from physalign_site.api import role_permission

from ..drafting.services import (
    draft_accept,
    draft_discard,
    draft_run_create,
    draft_run_progress,
    record_comparison,
)
from ..models import DraftRun, LLMDraft, ParentProblem, PassDocument
from ..permissions import can_draft


class DraftOutput(serializers.ModelSerializer):
    model = serializers.CharField(source="model_config.name", default=None)
    status = serializers.CharField()  # pending|ready|invalid|failed|accepted|discarded
    problem_id = serializers.CharField(source="parent.problem_id")

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


class RecordComparisonOutput(serializers.Serializer):
    key = serializers.CharField(help_text="collection/id, or a top-level field name")
    state = serializers.CharField(help_text="new | changed | same | current_only")
    draft = serializers.JSONField(allow_null=True)
    current = serializers.JSONField(allow_null=True)


class DraftDetailOutput(DraftOutput):
    """A draft with its per-record comparison against the current pass document (set by the view)."""

    comparison = RecordComparisonOutput(many=True, read_only=True)
    current_version = serializers.IntegerField(
        read_only=True, help_text="0 when the pass has no document yet"
    )

    class Meta(DraftOutput.Meta):
        fields = (*DraftOutput.Meta.fields, "comparison", "current_version")


class RunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    pass_no = serializers.IntegerField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    finished = serializers.IntegerField()
    percent = serializers.IntegerField()
    cost_usd = serializers.CharField()
    model = serializers.CharField()
    finished_at = serializers.DateTimeField(allow_null=True)


# Drafting follows the right to edit the pass: from the URL, or of the draft / run the view loaded.
CanDraftPass = role_permission(can_draft, kwargs=("pass_no",), name="CanDraftPass")
CanDraftObject = role_permission(
    on_object=lambda user, obj: can_draft(user, obj.pass_no), name="CanDraftObject"
)


def _parent(problem_id: str) -> ParentProblem:
    return get_object_or_404(ParentProblem, problem_id=problem_id)


class DraftStartInput(serializers.Serializer):
    model = serializers.SlugField()


class DraftAcceptInput(serializers.Serializer):
    expected_version = serializers.IntegerField(min_value=0, allow_null=True, required=False)
    record_keys = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    document = serializers.JSONField(required=False, allow_null=True)


class ParentDraftsView(APIView):
    permission_classes = [CanDraftPass]
    Input = DraftStartInput

    @extend_schema(responses=DraftOutput(many=True))
    def get(self, request: Request, problem_id: str, pass_no: int) -> Response:
        drafts = LLMDraft.objects.filter(parent=_parent(problem_id), pass_no=pass_no).select_related(
            "model_config", "parent"
        )
        return Response(DraftOutput(drafts, many=True).data)

    @extend_schema(request=Input, responses={202: RunOutput})
    def post(self, request: Request, problem_id: str, pass_no: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        model_config = get_object_or_404(ModelConfig, name=data.validated_data["model"])
        run = draft_run_create(
            pass_no=pass_no, model_config=model_config, parents=[_parent(problem_id)], actor=request.user
        )
        return Response(RunOutput(draft_run_progress(run=run)).data, status=status.HTTP_202_ACCEPTED)


class DraftDetailView(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema(responses=DraftDetailOutput)
    def get(self, request: Request, draft_id: int) -> Response:
        draft = get_object_or_404(LLMDraft.objects.select_related("parent", "model_config"), pk=draft_id)
        self.check_object_permissions(request, draft)
        current = PassDocument.objects.filter(parent=draft.parent, pass_no=draft.pass_no).first()
        # read by DraftDetailOutput: view-set attributes, not model fields
        draft.comparison = (  # type: ignore[attr-defined]
            record_comparison(
                draft_document=draft.parsed_document, current_document=current.document if current else None
            )
            if draft.parsed_document is not None
            else []
        )
        draft.current_version = current.version if current else 0  # type: ignore[attr-defined]
        return Response(DraftDetailOutput(draft).data)


class DraftAcceptView(APIView):
    permission_classes = [CanDraftObject]
    Input = DraftAcceptInput

    @extend_schema(request=Input, responses=DraftOutput)
    def post(self, request: Request, draft_id: int) -> Response:
        draft = get_object_or_404(LLMDraft, pk=draft_id)
        self.check_object_permissions(request, draft)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        document = data.validated_data.get("document")
        if document is not None and not isinstance(document, dict):
            raise serializers.ValidationError({"document": "must be a JSON object"})
        draft_accept(
            draft=draft,
            actor=request.user,
            expected_version=data.validated_data.get("expected_version"),
            record_keys=data.validated_data.get("record_keys"),
            document=document,
        )
        draft.refresh_from_db()
        return Response(DraftOutput(draft).data)


class DraftDiscardView(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema(request=None, responses=DraftOutput)
    def post(self, request: Request, draft_id: int) -> Response:
        draft = get_object_or_404(LLMDraft, pk=draft_id)
        self.check_object_permissions(request, draft)
        return Response(DraftOutput(draft_discard(draft=draft, actor=request.user)).data)


class DraftRunView(APIView):
    permission_classes = [CanDraftObject]

    @extend_schema(responses=RunOutput)
    def get(self, request: Request, run_id: int) -> Response:
        run = DraftRun.objects.select_related("model_config").filter(pk=run_id).first()
        if run is None:
            raise Http404
        self.check_object_permissions(request, run)
        return Response(RunOutput(draft_run_progress(run=run)).data)
