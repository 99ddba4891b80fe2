"""REST API for evaluation runs (admins): launch, list, detail."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import ApiErrorOutput, json_list, json_object, json_value, role_permission
from probes.models import Release

from ..models import EvalRun
from ..permissions import can_run_evaluations
from ..runs import eval_run_create, run_progress
from ..selectors import run_list
from .serializers import ProbeFilterInput

CanRunEvaluations = role_permission(can_run_evaluations, name="CanRunEvaluations")


class EvalRunInput(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    conditions = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    release = serializers.CharField(required=False, allow_blank=True, default="")
    probe_filter = ProbeFilterInput(required=False, default=dict)
    name = serializers.CharField(required=False, allow_blank=True, default="")
    resamples = serializers.IntegerField(required=False, min_value=2, default=2000)


CONDITIONS = {"type": "string", "description": "raw | gold | no_image | reordered"}


@extend_schema_serializer(component_name="EvalRunListed")
class EvalRunListedOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    conditions = json_list(CONDITIONS)


@extend_schema_serializer(component_name="EvalRun")
class EvalRunOutput(serializers.Serializer):
    """A run with its progress: ``{"run": EvalRun, "progress": evaluation.runs.run_progress(run)}``."""

    id = serializers.IntegerField(source="run.pk")
    name = serializers.CharField(source="run.name")
    status = serializers.CharField(source="run.status")
    release = serializers.CharField(source="run.release.release_id", allow_null=True, default=None)
    models = serializers.SerializerMethodField()
    conditions = json_list(CONDITIONS, source="run.conditions")
    total = serializers.IntegerField(source="progress.total")
    done = serializers.IntegerField(source="progress.done")
    by_status = json_value(
        {"type": "object", "additionalProperties": {"type": "integer"}}, source="progress.by_status"
    )
    input_tokens = serializers.IntegerField(source="progress.input_tokens")
    output_tokens = serializers.IntegerField(source="progress.output_tokens")
    cost_usd = serializers.CharField(source="progress.cost_usd", help_text="Decimal dollars")
    manifest = json_object("Code revision, package versions, prompt/template hashes", source="run.manifest")
    metrics = json_object(
        "Metric snapshots with CIs (null until the run is scored)", source="run.metrics", allow_null=True
    )

    @extend_schema_field(
        serializers.ListField(child=serializers.CharField(), help_text="Model configuration names")
    )
    def get_models(self, row: dict[str, Any]) -> list[str]:
        return [m.name for m in row["run"].model_configs.all()]


def _run_output(run: Any) -> dict[str, Any]:
    return EvalRunOutput({"run": run, "progress": run_progress(run)}).data


class EvalRunListView(APIView):
    permission_classes = [CanRunEvaluations]

    @extend_schema(operation_id="eval_runs_list", responses=EvalRunListedOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(EvalRunListedOutput(run_list()[:200], many=True).data)

    @extend_schema(
        operation_id="eval_runs_create",
        request=EvalRunInput,
        responses={201: EvalRunOutput, 400: ApiErrorOutput},
    )
    def post(self, request: Request) -> Response:
        data = EvalRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = eval_run_create(
            model_names=v["models"],
            conditions=v["conditions"],
            release=release,
            probe_filter=v["probe_filter"],
            name=v["name"],
            actor=request.user,
            options={"resamples": v["resamples"]},
        )
        return Response(_run_output(run), status=status.HTTP_201_CREATED)


class EvalRunDetailView(APIView):
    permission_classes = [CanRunEvaluations]

    @extend_schema(operation_id="eval_runs_retrieve", responses=EvalRunOutput)
    def get(self, request: Request, pk: int) -> Response:
        return Response(_run_output(get_object_or_404(EvalRun, pk=pk)))
