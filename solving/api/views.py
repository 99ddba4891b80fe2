"""REST API for solving runs (admins): list/create runs, run detail with summary, expert grading of a response."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from physalign_site.api import ApiErrorOutput, json_list, json_object, json_value, number, role_permission
from probes.models import Release

from ..grading import solve_response_grade
from ..models import SolveResponse, SolveRun
from ..permissions import can_grade_solving, can_run_solving
from ..runs import solve_run_create
from ..selectors import solve_run_list
from ..summary import solve_run_summary

CanRunSolving = role_permission(can_run_solving, name="CanRunSolving")
CanGradeSolving = role_permission(can_grade_solving, name="CanGradeSolving")


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


class SolveAccOutput(serializers.Serializer):
    """SolveAcc with App. B.3 bounds: ``value`` is null when any parent is missing."""

    value = number(allow_null=True)
    lower = number(allow_null=True)
    upper = number(allow_null=True)
    parents = serializers.IntegerField()
    missing = serializers.IntegerField()


COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}


class SolveRunSummaryOutput(serializers.Serializer):
    """``solving.runs.SolveRunSummary.as_dict()``"""

    total = serializers.IntegerField()
    done = serializers.IntegerField()
    by_status = json_value(COUNTS, help_text="Responses per status")
    by_grading = json_value(COUNTS, help_text="Responses per grading state")
    solve_acc = SolveAccOutput(help_text="Mean credit s_i (equal-parent)")
    accuracy = SolveAccOutput(help_text="Binary final-answer correctness")
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    rate_per_s = number(allow_null=True)
    eta_s = number(allow_null=True)


@extend_schema_serializer(component_name="SolveResponse")
class SolveResponseOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    parent_id = serializers.CharField(source="parent.problem_id")
    answer_type = serializers.CharField()
    status = serializers.CharField()
    final_answer = serializers.CharField()
    match = serializers.BooleanField(allow_null=True, help_text="Script result for choice / fill-in")
    grading = serializers.CharField(help_text="script | pending | graded")
    credit = number(allow_null=True, help_text="s_i in [0, 1]")
    correct = serializers.BooleanField(allow_null=True)
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")


class GradeComponentOutput(serializers.Serializer):
    description = serializers.CharField()
    awarded = serializers.CharField(help_text="Decimal points")
    maximum = serializers.CharField(help_text="Decimal points")


@extend_schema_serializer(component_name="SolveResponseGraded")
class SolveResponseGradedOutput(SolveResponseOutput):
    components = GradeComponentOutput(many=True, source="components.all")


@extend_schema_serializer(component_name="SolveRun")
class SolveRunOutput(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    kind = serializers.CharField(help_text="single | debate")
    status = serializers.CharField()
    model = serializers.CharField(source="model.name", allow_null=True, default=None)
    release = serializers.CharField(source="release.release_id", allow_null=True, default=None)
    total = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    summary = serializers.SerializerMethodField()

    @extend_schema_field(SolveRunSummaryOutput)
    def get_summary(self, run: SolveRun) -> dict[str, Any]:
        return SolveRunSummaryOutput(solve_run_summary(run).as_dict()).data


@extend_schema_serializer(component_name="SolveRunDetail")
class SolveRunDetailOutput(SolveRunOutput):
    manifest = json_object("Code revision, package versions, prompt hashes")
    parent_ids = json_list({"type": "string"})
    responses = serializers.SerializerMethodField()

    @extend_schema_field(SolveResponseOutput(many=True))
    def get_responses(self, run: SolveRun) -> list[dict[str, Any]]:
        rows = run.responses.select_related("parent").order_by("pk")
        # many=True makes a ListSerializer, whose data is a list (the stubs type it ReturnDict)
        return SolveResponseOutput(rows, many=True).data  # type: ignore[return-value]


class SolveRunListView(APIView):
    permission_classes = [CanRunSolving]

    @extend_schema(operation_id="solve_runs_list", responses=SolveRunOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(SolveRunOutput(solve_run_list()[:200], many=True).data)

    @extend_schema(
        operation_id="solve_runs_create",
        request=SolveRunInput,
        responses={201: SolveRunDetailOutput, 400: ApiErrorOutput},
    )
    def post(self, request: Request) -> Response:
        data = SolveRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = solve_run_create(
            model=v["model"],
            release=release,
            parent_ids=v["parent_ids"] or None,
            name=v["name"],
            actor=request.user,
        )
        return Response(SolveRunDetailOutput(run).data, status=status.HTTP_201_CREATED)


class SolveRunDetailView(APIView):
    permission_classes = [CanRunSolving]

    @extend_schema(operation_id="solve_runs_retrieve", responses=SolveRunDetailOutput)
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(SolveRun.objects.select_related("model", "release"), pk=pk)
        return Response(SolveRunDetailOutput(run).data)


class SolveResponseGradeView(APIView):
    permission_classes = [CanGradeSolving]

    @extend_schema(
        operation_id="solve_responses_grade",
        request=GradeInput,
        responses={200: SolveResponseGradedOutput, 400: ApiErrorOutput},
    )
    def post(self, request: Request, pk: int) -> Response:
        row = get_object_or_404(SolveResponse.objects.select_related("parent"), pk=pk)
        data = GradeInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        graded = solve_response_grade(
            response=row,
            components=[dict(c) for c in v["components"]],
            correct=v["correct"],
            note=v["note"],
            actor=request.user,
        )
        return Response(SolveResponseGradedOutput(graded).data)
