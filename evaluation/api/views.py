"""REST API for evaluation runs (admins): list (keyset pages) and launch, a run's detail.

As ``annotation/api/views.py``: roles through ``evaluation.permissions``, a nested ``InputSerializer``, reads
through ``evaluation.selectors``, writes through ``evaluation.runs`` (the run service), a nested
``OutputSerializer`` (``EvalRunOutput`` where two operations answer a run). Refusals are
``ApplicationError``s (``ApiErrorOutput``).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import (
    JSON_MAP,
    ApiCursorPagination,
    ApiErrorOutput,
    choice_string,
    cursor_page,
    json_list,
    json_value,
    role_permission,
    run_manifest_schema,
)
from probes.selectors import release_by_reference

from ..models import EvalRun
from ..permissions import can_run_evaluations
from ..runs import eval_run_create, run_progress
from ..selectors import run_get, run_list
from .serializers import ProbeFilterInput

CanRunEvaluations = role_permission(can_run_evaluations, name="CanRunEvaluations")

ERROR = ApiErrorOutput
CONDITIONS = {"type": "string", "description": "raw | gold | no_image | reordered"}


EVAL_MANIFEST_SCHEMA = run_manifest_schema(
    "What the run was planned from: code revision, package versions, probe and prompt hashes, models",
    conditions={"type": "array", "items": {"type": "string"}},
    probe_filter={**JSON_MAP, "nullable": True, "description": "The probe filter as launched"},
    probe_ids_sha256={"type": "string"},
    system_prompt_sha256={"type": "array", "items": {"type": "string"}},
    models={
        "type": "object",
        "description": "Each model configuration's request settings (never a key, only its variable's name)",
        "additionalProperties": JSON_MAP,
    },
    bootstrap={
        "type": "object",
        "properties": {
            "resamples": {"type": "integer"},
            "seed": {"type": "integer"},
            "unit": {"type": "string", "description": "The resampled cluster: parent"},
        },
    },
)
STATISTIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One statistic: its value (null where undefined), 95% CI (null where withheld), the bounds "
    "with infrastructure-missing rows counted wrong and right, its support and resampled clusters",
    "properties": {
        "value": {"type": "number", "nullable": True},
        "ci": {"type": "array", "items": {"type": "number"}, "nullable": True, "minItems": 2, "maxItems": 2},
        "lower": {"type": "number", "nullable": True},
        "upper": {"type": "number", "nullable": True},
        "parents": {"type": "integer"},
        "probes": {"type": "integer"},
        "clusters": {"type": "integer"},
    },
}
EVAL_METRICS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "nullable": True,
    "description": "The run's metrics (null until the run is scored): per model a tree of statistics by "
    "metric family (dotted names in the snapshots), the baselines, the bootstrap's settings",
    "properties": {
        "models": {
            "type": "object",
            "description": "Model name → metric family → … → statistic",
            "additionalProperties": JSON_MAP,
        },
        "baselines": {"type": "object", "additionalProperties": STATISTIC_SCHEMA},
        "bootstrap": {
            "type": "object",
            "properties": {
                "resamples": {"type": "integer"},
                "seed": {"type": "integer"},
                "confidence": {"type": "number"},
                "clusters": {"type": "integer"},
                "cluster_scope": {"type": "string"},
                "scopes": {"type": "object", "additionalProperties": {"type": "integer"}},
                "method": {"type": "string"},
            },
        },
    },
}


@extend_schema_serializer(component_name="EvalRun")
class EvalRunOutput(serializers.Serializer):
    """A run with its progress: ``{"run": EvalRun, "progress": evaluation.runs.run_progress(run)}``."""

    id = serializers.IntegerField(source="run.pk")
    name = serializers.CharField(source="run.name")
    status = choice_string(EvalRun.Status.choices, source="run.status")
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
    manifest = json_value(EVAL_MANIFEST_SCHEMA, source="run.manifest")
    metrics = json_value(EVAL_METRICS_SCHEMA, source="run.metrics", allow_null=True)

    @extend_schema_field(
        serializers.ListField(child=serializers.CharField(), help_text="Model configuration names")
    )
    def get_models(self, row: dict[str, Any]) -> list[str]:
        return [m.name for m in row["run"].model_configs.all()]


def _run_output(run: EvalRun) -> dict[str, Any]:
    return EvalRunOutput({"run": run, "progress": run_progress(run)}).data


class EvalRunListApi(APIView):
    """Every evaluation run, newest first; creating one plans every request row and queues the work."""

    permission_classes = [CanRunEvaluations]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema_serializer(component_name="EvalRunInput")
    class InputSerializer(serializers.Serializer):
        models = serializers.ListField(
            child=serializers.CharField(), allow_empty=False, help_text="Active model configuration names"
        )
        conditions = serializers.ListField(
            child=serializers.CharField(), allow_empty=False, help_text="raw | gold | no_image | reordered"
        )
        release = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="A release id (NREL-…) or row number; blank: every current probe",
        )
        probe_filter = ProbeFilterInput(required=False, default=dict)
        name = serializers.CharField(required=False, allow_blank=True, default="")
        resamples = serializers.IntegerField(required=False, min_value=2, default=2000)

    @extend_schema_serializer(component_name="EvalRunListed")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField(source="pk")
        name = serializers.CharField()
        status = choice_string(EvalRun.Status.choices)
        total = serializers.IntegerField()
        conditions = json_list(CONDITIONS)

    @extend_schema(
        operation_id="eval_runs_list",
        responses={200: OutputSerializer(many=True), 403: ERROR, 404: ERROR},
        description="Keyset pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        return cursor_page(
            self, request, run_list(), lambda page: self.OutputSerializer(page, many=True).data
        )

    @extend_schema(
        operation_id="eval_runs_create",
        request=InputSerializer,
        responses={201: EvalRunOutput, 400: ERROR, 403: ERROR, 404: ERROR, 503: ERROR},
        description=(
            "400: an invalid body, unknown or inactive models, a model this machine cannot call "
            "(`model_unavailable`: `extra.missing` names each model and the tool, key variable or base URL it "
            "lacks; nothing is created), or no probe to plan. 404: no such release. 503 `queue_unavailable`: the "
            "task queue could not be reached; the run was created and is kept paused (`extra.run` is its id): "
            "resume it rather than launching again."
        ),
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = eval_run_create(
            model_names=v["models"],
            conditions=v["conditions"],
            release=release_by_reference(v["release"]) if v["release"] else None,
            probe_filter=v["probe_filter"],
            name=v["name"],
            actor=request.user,
            options={"resamples": v["resamples"]},
        )
        return Response(_run_output(run), status=status.HTTP_201_CREATED)


class EvalRunDetailApi(APIView):
    permission_classes = [CanRunEvaluations]

    @extend_schema(operation_id="eval_runs_retrieve", responses={200: EvalRunOutput, 403: ERROR, 404: ERROR})
    def get(self, request: Request, pk: int) -> Response:
        run = run_get(pk=pk)
        if run is None:
            raise Http404("No such run.")
        return Response(_run_output(run))
