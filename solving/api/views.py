"""REST API for solve runs (admins), one family for both kinds of run: list (keyset pages) and create, a run's
detail, a single run's expert grading and a debate response's transcript. Each view checks roles through
``solving.permissions``, validates a nested ``InputSerializer``, reads through selectors, writes through one
service and renders a nested ``OutputSerializer``; refusals are ``ApplicationError``s (``ApiErrorOutput``).
A run's parents are ``parent_ids`` in both kinds' bodies."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.disclosure import may_show_targets
from physalign_site.api import (
    ApiCursorPagination,
    ApiErrorOutput,
    json_list,
    json_value,
    number,
    role_permission,
)
from probes.models import Release
from probes.selectors import release_by_reference

from .. import selectors
from ..grading import solve_response_grade
from ..models import SolveResponse, SolveRun
from ..permissions import can_grade_solving, can_run_solving
from ..runs import RunStats, debate_run_create, run_stats, solve_run_create
from ..summary import solve_run_summary
from .schemas import DEBATE_SETTINGS_SCHEMA, SOLVE_MANIFEST_SCHEMA, TURN_RECORD_SCHEMA

CanRunSolving = role_permission(can_run_solving, name="CanRunSolving")
CanGradeSolving = role_permission(can_grade_solving, name="CanGradeSolving")

ERROR = ApiErrorOutput
COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}


# --- helpers ------------------------------------------------------------------------------------------


def _release_or_none(reference: str) -> Release | None:
    """The release a launch names (its id or row number, as the evaluation API and the commands take it);
    none named: the run is over every parent. An unknown one is a 404 (``release_not_found``)."""
    return release_by_reference(reference) if reference else None


def _run_or_404(pk: int, kind: str = "") -> SolveRun:
    run = selectors.solve_run_get(pk=pk, kind=kind)
    if run is None:
        raise Http404("No such run.")
    return run


def _response_or_404(pk: int, kind: str = "") -> SolveResponse:
    row = selectors.solve_response_get(pk=pk, kind=kind)
    if row is None:
        raise Http404("No such response.")
    return row


def _paginated(
    view: APIView,
    request: Request,
    runs: QuerySet[SolveRun],
    render: Callable[[Iterable[SolveRun]], Any],
) -> Response:
    """One keyset page of ``runs`` (newest first), rendered by ``render``: ``{next, previous, results}``."""
    pages = ApiCursorPagination()  # the list views name it as their pagination_class (the schema shows it)
    page = pages.paginate_queryset(runs, request, view=view)
    return pages.get_paginated_response(render(page or []))


# --- shared output shapes -----------------------------------------------------------------------------


class SolveAccOutput(serializers.Serializer):
    """SolveAcc with App. B.3 bounds: ``value`` is null when any parent is missing."""

    value = number(allow_null=True)
    lower = number(allow_null=True)
    upper = number(allow_null=True)
    parents = serializers.IntegerField()
    missing = serializers.IntegerField()


class SolveRunSummaryOutput(serializers.Serializer):
    """``solving.summary.SolveRunSummary``"""

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
        return SolveRunSummaryOutput(solve_run_summary(run)).data


@extend_schema_serializer(component_name="SolveRunDetail")
class SolveRunDetailOutput(SolveRunOutput):
    manifest = json_value(SOLVE_MANIFEST_SCHEMA)
    parent_ids = json_list({"type": "string"})
    responses = serializers.SerializerMethodField()

    @extend_schema_field(SolveResponseOutput(many=True))
    def get_responses(self, run: SolveRun) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer, whose data is a list (the stubs type it ReturnDict)
        return SolveResponseOutput(selectors.solve_responses(run), many=True).data  # type: ignore[return-value]


@extend_schema_serializer(component_name="DebateRun")
class DebateRunOutput(serializers.Serializer):
    """``solving.runs.RunStats``: a run's accuracy and cost (Debate Tables 3–5)."""

    id = serializers.IntegerField(source="run.pk")
    name = serializers.CharField(source="run.name")
    kind = serializers.CharField(source="run.kind", help_text="debate | single")
    status = serializers.CharField(source="run.status")
    label = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
    level = serializers.IntegerField(allow_null=True, help_text="Debate level 1–5 (null for a single solver)")
    settings = json_value(
        {
            **DEBATE_SETTINGS_SCHEMA,
            "description": "The debate's ablation switches as stored ({} for a single solver)",
        }
    )
    settings_label = serializers.CharField()
    solvers = json_list({"type": "string", "nullable": True})
    pruner = serializers.CharField(source="pruner_name", allow_null=True)
    selector = serializers.CharField(source="selector_name", allow_null=True)
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    by_status = json_value(COUNTS)
    solve_acc = SolveAccOutput()
    binary_acc = SolveAccOutput()
    calls = serializers.IntegerField()
    avg_calls = number(allow_null=True)
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    cost_per_problem = serializers.SerializerMethodField(help_text="Decimal dollars (0 before any answer)")
    early_stopped = serializers.IntegerField(allow_null=True, help_text="Settled by consensus in round 1")
    early_share = number(allow_null=True)
    warnings = json_list({"type": "string"})

    def get_cost_per_problem(self, stats: RunStats) -> str:
        return str(stats.cost_per_problem or 0)


# --- solve runs (both kinds) --------------------------------------------------------------------------


class SolveRunListApi(APIView):
    """Every solve run (both kinds), newest first; creating one starts a single-solver run."""

    permission_classes = [CanRunSolving]
    pagination_class = ApiCursorPagination

    @extend_schema_serializer(component_name="SolveRunInput")
    class InputSerializer(serializers.Serializer):
        model = serializers.CharField()
        release = serializers.CharField(required=False, allow_blank=True, default="")
        parent_ids = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)

    OutputSerializer = SolveRunOutput

    @extend_schema(
        operation_id="solve_runs_list",
        responses={200: SolveRunOutput(many=True), 403: ERROR, 404: ERROR},
        description="Keyset pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        return _paginated(
            self,
            request,
            selectors.solve_run_list(),
            lambda runs: self.OutputSerializer(runs, many=True).data,
        )

    @extend_schema(
        operation_id="solve_runs_create",
        request=InputSerializer,
        responses={201: SolveRunDetailOutput, 400: ERROR, 403: ERROR, 404: ERROR},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = solve_run_create(
            model=v["model"],
            release=_release_or_none(v["release"]),
            parent_ids=v["parent_ids"] or None,
            name=v["name"],
            actor=request.user,
        )
        return Response(SolveRunDetailOutput(run).data, status=status.HTTP_201_CREATED)


class SolveRunDetailApi(APIView):
    permission_classes = [CanRunSolving]

    OutputSerializer = SolveRunDetailOutput

    @extend_schema(
        operation_id="solve_runs_retrieve", responses={200: SolveRunDetailOutput, 403: ERROR, 404: ERROR}
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(self.OutputSerializer(_run_or_404(pk)).data)


class SolveResponseGradeApi(APIView):
    """An expert's rubric grade of a short-answer or calculation response (key holders)."""

    permission_classes = [CanGradeSolving]

    @extend_schema_serializer(component_name="GradeInput")
    class InputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="GradeComponentInput")
        class ComponentSerializer(serializers.Serializer):
            description = serializers.CharField(max_length=500)
            awarded = serializers.DecimalField(max_digits=7, decimal_places=2)
            maximum = serializers.DecimalField(max_digits=7, decimal_places=2)

        components = ComponentSerializer(many=True, allow_empty=False)
        correct = serializers.BooleanField()
        note = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="SolveResponseGraded")
    class OutputSerializer(SolveResponseOutput):
        @extend_schema_serializer(component_name="GradeComponentOutput")
        class ComponentSerializer(serializers.Serializer):
            description = serializers.CharField()
            awarded = serializers.CharField(help_text="Decimal points")
            maximum = serializers.CharField(help_text="Decimal points")

        components = ComponentSerializer(many=True, source="components.all")

    @extend_schema(
        operation_id="solve_responses_grade",
        request=InputSerializer,
        responses={200: OutputSerializer, 400: ERROR, 403: ERROR, 404: ERROR},
    )
    def post(self, request: Request, pk: int) -> Response:
        row = _response_or_404(pk)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        graded = solve_response_grade(
            response=row,
            components=[dict(c) for c in v["components"]],
            correct=v["correct"],
            note=v["note"],
            actor=request.user,
        )
        return Response(self.OutputSerializer(graded).data)


# --- debate runs --------------------------------------------------------------------------------------


class DebateRunListApi(APIView):
    """Debate runs, newest first, with their accuracy and cost; creating one plans and queues a debate."""

    permission_classes = [CanRunSolving]
    pagination_class = ApiCursorPagination

    @extend_schema_serializer(component_name="DebateRunInput")
    class InputSerializer(serializers.Serializer):
        solvers = serializers.ListField(child=serializers.CharField(), allow_empty=False)
        pruner = serializers.CharField(required=False, allow_blank=True, default="")
        selector = serializers.CharField(required=False, allow_blank=True, default="")
        extractor = serializers.CharField(required=False, allow_blank=True, default="")
        frontend = serializers.CharField(required=False, allow_blank=True, default="")
        level = serializers.IntegerField(required=False, default=1)
        settings = json_value(DEBATE_SETTINGS_SCHEMA, required=False, default=dict)
        release = serializers.CharField(required=False, allow_blank=True, default="")
        parent_ids = serializers.ListField(child=serializers.CharField(), required=False, default=list)
        name = serializers.CharField(required=False, allow_blank=True, default="")

        def validate_settings(self, value: Any) -> dict[str, Any]:
            if not isinstance(value, dict):  # the values themselves: debate_settings_clean
                raise serializers.ValidationError("Expected an object of settings.")
            return value

    OutputSerializer = DebateRunOutput

    @extend_schema(
        operation_id="debate_runs_list",
        responses={200: DebateRunOutput(many=True), 403: ERROR, 404: ERROR},
        description="Keyset pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor.",
    )
    def get(self, request: Request) -> Response:
        return _paginated(
            self,
            request,
            selectors.solve_run_list(kind=SolveRun.Kind.DEBATE),
            lambda runs: self.OutputSerializer([run_stats(run) for run in runs], many=True).data,
        )

    @extend_schema(
        operation_id="debate_runs_create",
        request=InputSerializer,
        responses={201: DebateRunOutput, 400: ERROR, 403: ERROR, 404: ERROR},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        run = debate_run_create(
            solver_names=v["solvers"],
            pruner=v["pruner"] or None,
            selector=v["selector"] or None,
            extractor=v["extractor"] or None,
            frontend=v["frontend"] or None,
            level=v["level"],
            settings=v["settings"],
            release=_release_or_none(v["release"]),
            parent_ids=v["parent_ids"] or None,
            name=v["name"],
            actor=request.user,
        )
        return Response(self.OutputSerializer(run_stats(run)).data, status=status.HTTP_201_CREATED)


class DebateRunDetailApi(APIView):
    permission_classes = [CanRunSolving]

    OutputSerializer = DebateRunOutput

    @extend_schema(
        operation_id="debate_runs_retrieve", responses={200: DebateRunOutput, 403: ERROR, 404: ERROR}
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(self.OutputSerializer(run_stats(_run_or_404(pk, SolveRun.Kind.DEBATE))).data)


class DebateTurnOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    round = serializers.IntegerField(help_text="0 = front-end")
    stage = serializers.CharField()
    agent = serializers.CharField()
    model = serializers.CharField(source="model.name", allow_null=True, default=None)
    raw_output = serializers.CharField()
    parsed = json_value(TURN_RECORD_SCHEMA, allow_null=True)
    status = serializers.CharField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    latency_ms = serializers.IntegerField(allow_null=True)


class DebateTranscriptDetailApi(APIView):
    """A debate response's transcript: every call and decision in order. ``reference_answer`` (the parent's
    reference answer) is present for key holders only; for everyone else the key is absent."""

    permission_classes = [CanRunSolving]

    @extend_schema_serializer(component_name="DebateTranscriptPublic")
    class OutputSerializer(serializers.Serializer):
        response = serializers.IntegerField(source="pk")
        run = serializers.IntegerField(source="run_id")
        parent = serializers.CharField(source="parent.problem_id")  # type: ignore[assignment]  # a declared field
        status = serializers.CharField()
        final_answer = serializers.CharField()
        correct = serializers.BooleanField(allow_null=True)
        credit = number(allow_null=True)
        calls = serializers.IntegerField()
        input_tokens = serializers.IntegerField()
        output_tokens = serializers.IntegerField()
        cost_usd = serializers.CharField(help_text="Decimal dollars")
        turns = serializers.SerializerMethodField()

        @extend_schema_field(DebateTurnOutput(many=True))
        def get_turns(self, response: SolveResponse) -> list[dict[str, Any]]:
            # many=True makes a ListSerializer, whose data is a list (the stubs type it ReturnDict)
            return DebateTurnOutput(selectors.transcript_turns(response), many=True).data  # type: ignore[return-value]

    @extend_schema_serializer(component_name="DebateTranscript")
    class PrivateOutputSerializer(OutputSerializer):
        reference_answer = serializers.CharField(
            source="parent.answer", help_text="The parent's reference answer: present for key holders only"
        )

    @extend_schema(
        operation_id="debate_transcript_retrieve",
        responses={200: PrivateOutputSerializer, 403: ERROR, 404: ERROR},
        description="`reference_answer` is present only for key holders (admin + probes.view_private_mapping); "
        "for every other admin the key is absent.",
    )
    def get(self, request: Request, pk: int) -> Response:
        response = _response_or_404(pk, SolveRun.Kind.DEBATE)
        private = may_show_targets(request.user, where="api:debate-transcript", parents=[response.parent_id])
        output = self.PrivateOutputSerializer if private else self.OutputSerializer
        return Response(output(response).data)
