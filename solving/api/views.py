"""REST API for solving runs (admins): list/create runs, run detail with summary, expert grading of a response."""

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

from probes.models import Release

from ..models import SolveResponse, SolveRun
from ..permissions import can_run_solving
from ..runs import solve_response_grade, solve_run_create, solve_run_summary
from ..selectors import solve_run_list


def _check(request: Request) -> None:
    if not can_run_solving(request.user):
        raise PermissionDenied()


class SolveRunInput(serializers.Serializer):
    model = serializers.CharField()
    release = serializers.CharField(required=False, allow_blank=True, default="")
    parent_ids = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


class GradeComponentInput(serializers.Serializer):
    description = serializers.CharField(max_length=500)
    awarded = serializers.DecimalField(max_digits=7, decimal_places=2)
    maximum = serializers.DecimalField(max_digits=7, decimal_places=2)


class GradeInput(serializers.Serializer):
    components = GradeComponentInput(many=True, allow_empty=False)
    correct = serializers.BooleanField()
    note = serializers.CharField(required=False, allow_blank=True, default="")


def _run_payload(run: SolveRun, *, responses: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": run.pk, "name": run.name, "kind": run.kind, "status": run.status,
        "model": run.model.name if run.model else None,
        "release": run.release.release_id if run.release else None, "total": run.total,
        "created_at": run.created_at, "summary": solve_run_summary(run).as_dict()}
    if responses:
        data["manifest"] = run.manifest
        data["parent_ids"] = run.parent_ids
        data["responses"] = [_response_payload(r) for r in run.responses.select_related("parent").order_by("pk")]
    return data


def _response_payload(row: SolveResponse) -> dict[str, Any]:
    return {"id": row.pk, "parent_id": row.parent.problem_id, "answer_type": row.answer_type, "status": row.status,
            "final_answer": row.final_answer, "match": row.match, "grading": row.grading, "credit": row.credit,
            "correct": row.correct, "calls": row.calls, "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens, "cost_usd": str(row.cost_usd)}


class SolveRunListView(APIView):
    @extend_schema(operation_id="solve_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        _check(request)
        return Response([_run_payload(r) for r in solve_run_list()[:200]])

    @extend_schema(operation_id="solve_runs_create", request=SolveRunInput, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        _check(request)
        data = SolveRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = solve_run_create(model=v["model"], release=release, parent_ids=v["parent_ids"] or None, name=v["name"],
                               actor=request.user)
        return Response(_run_payload(run, responses=True), status=status.HTTP_201_CREATED)


class SolveRunDetailView(APIView):
    @extend_schema(operation_id="solve_runs_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        _check(request)
        run = get_object_or_404(SolveRun.objects.select_related("model", "release"), pk=pk)
        return Response(_run_payload(run, responses=True))


class SolveResponseGradeView(APIView):
    @extend_schema(operation_id="solve_responses_grade", request=GradeInput, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, pk: int) -> Response:
        _check(request)
        row = get_object_or_404(SolveResponse.objects.select_related("parent"), pk=pk)
        data = GradeInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        graded = solve_response_grade(response=row, components=[dict(c) for c in v["components"]],
                                      correct=v["correct"], note=v["note"], actor=request.user)
        payload = _response_payload(graded)
        payload["components"] = [{"description": c.description, "awarded": str(c.awarded), "maximum": str(c.maximum)}
                                 for c in graded.components.all()]
        return Response(payload)
