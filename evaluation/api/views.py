"""REST API for evaluation runs (admins): launch, list, detail."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..permissions import can_run_evaluations


class EvalRunInput(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    conditions = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    release = serializers.CharField(required=False, allow_blank=True, default="")
    probe_filter = serializers.DictField(required=False, default=dict)
    name = serializers.CharField(required=False, allow_blank=True, default="")
    resamples = serializers.IntegerField(required=False, min_value=2, default=2000)


def _run_payload(run: Any) -> dict[str, Any]:
    from ..runs import run_progress

    p = run_progress(run)
    return {"id": run.pk, "name": run.name, "status": run.status, "release": run.release.release_id if run.release
            else None, "models": [m.name for m in run.model_configs.all()], "conditions": run.conditions,
            "total": p.total, "done": p.done, "by_status": p.by_status, "input_tokens": p.input_tokens,
            "output_tokens": p.output_tokens, "cost_usd": str(p.cost_usd), "manifest": run.manifest,
            "metrics": run.metrics}


class EvalRunListView(APIView):
    @extend_schema(operation_id="eval_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        from ..selectors import run_list

        if not can_run_evaluations(request.user):
            raise PermissionDenied()
        return Response([{"id": r.pk, "name": r.name, "status": r.status, "total": r.total,
                          "conditions": r.conditions} for r in run_list()[:200]])

    @extend_schema(operation_id="eval_runs_create", request=EvalRunInput, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        from probes.models import Release

        from ..runs import eval_run_create

        if not can_run_evaluations(request.user):
            raise PermissionDenied()
        data = EvalRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = eval_run_create(model_names=v["models"], conditions=v["conditions"], release=release,
                              probe_filter=v["probe_filter"], name=v["name"], actor=request.user,
                              options={"resamples": v["resamples"]})
        return Response(_run_payload(run), status=status.HTTP_201_CREATED)


class EvalRunDetailView(APIView):
    @extend_schema(operation_id="eval_runs_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        from ..models import EvalRun
        if not can_run_evaluations(request.user):
            raise PermissionDenied()
        return Response(_run_payload(get_object_or_404(EvalRun, pk=pk)))
