"""REST API for debate runs (admins): create/list, detail with the accuracy and cost summary, transcripts."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.disclosure import may_show_targets
from physalign_site.api import ApiErrorOutput, json_list, json_object, json_value, number, role_permission
from probes.models import Release

from ..debate_runs import debate_run_create, debate_run_list, run_stats, run_stats_payload, transcript_payload
from ..models import SolveResponse, SolveRun
from ..permissions import can_run_solving
from .views import COUNTS, SolveAccOutput


class DebateRunInput(serializers.Serializer):
    solvers = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    pruner = serializers.CharField(required=False, allow_blank=True, default="")
    selector = serializers.CharField(required=False, allow_blank=True, default="")
    extractor = serializers.CharField(required=False, allow_blank=True, default="")
    frontend = serializers.CharField(required=False, allow_blank=True, default="")
    level = serializers.IntegerField(required=False, default=1)
    settings = serializers.DictField(required=False, default=dict)
    release = serializers.CharField(required=False, allow_blank=True, default="")
    parents = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    name = serializers.CharField(required=False, allow_blank=True, default="")


CanRunSolving = role_permission(can_run_solving, name="CanRunDebates")


@extend_schema_serializer(component_name="DebateRun")
class DebateRunOutput(serializers.Serializer):
    """``solving.debate_runs.run_stats_payload``: a run's accuracy and cost (Debate Tables 3–5)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="debate | single")
    status = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
    level = serializers.IntegerField(allow_null=True, help_text="Debate level 1–5 (null for a single solver)")
    settings = json_object("The ablation switches")
    settings_label = serializers.CharField()
    solvers = json_list({"type": "string", "nullable": True})
    pruner = serializers.CharField(allow_null=True)
    selector = serializers.CharField(allow_null=True)
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
    cost_per_problem = serializers.CharField(help_text="Decimal dollars")
    early_stopped = serializers.IntegerField(allow_null=True, help_text="Settled by consensus in round 1")
    early_share = number(allow_null=True)
    warnings = json_list({"type": "string"})


class DebateTurnOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    round = serializers.IntegerField(help_text="0 = front-end")
    stage = serializers.CharField()
    agent = serializers.CharField()
    model = serializers.CharField(allow_null=True)
    raw_output = serializers.CharField()
    parsed = serializers.JSONField(allow_null=True, help_text="answer, label/kept, vote, selection …")
    status = serializers.CharField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    latency_ms = serializers.IntegerField(allow_null=True)


@extend_schema_serializer(component_name="DebateTranscript")
class TranscriptOutput(serializers.Serializer):
    """``solving.debate_runs.transcript_payload`` with the reference answer (admins)."""

    response = serializers.IntegerField()
    run = serializers.IntegerField()
    parent = serializers.CharField()  # type: ignore[assignment]  # DRF takes declared fields off the class
    status = serializers.CharField()
    final_answer = serializers.CharField()
    correct = serializers.BooleanField(allow_null=True)
    credit = number(allow_null=True)
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_usd = serializers.CharField(help_text="Decimal dollars")
    turns = DebateTurnOutput(many=True)
    reference_answer = serializers.CharField(
        required=False, help_text="The parent's reference answer: present for key holders only"
    )


class DebateRunListView(APIView):
    permission_classes = [CanRunSolving]

    @extend_schema(operation_id="debate_runs_list", responses=DebateRunOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(
            DebateRunOutput(
                [run_stats_payload(run_stats(run)) for run in debate_run_list()[:100]], many=True
            ).data
        )

    @extend_schema(
        operation_id="debate_runs_create",
        request=DebateRunInput,
        responses={201: DebateRunOutput, 400: ApiErrorOutput},
    )
    def post(self, request: Request) -> Response:
        data = DebateRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = debate_run_create(
            solver_names=v["solvers"],
            pruner=v["pruner"] or None,
            selector=v["selector"] or None,
            extractor=v["extractor"] or None,
            frontend=v["frontend"] or None,
            level=v["level"],
            settings=v["settings"],
            release=release,
            parent_ids=v["parents"] or None,
            name=v["name"],
            actor=request.user,
        )
        return Response(
            DebateRunOutput(run_stats_payload(run_stats(run))).data, status=status.HTTP_201_CREATED
        )


class DebateRunDetailView(APIView):
    permission_classes = [CanRunSolving]

    @extend_schema(operation_id="debate_runs_retrieve", responses=DebateRunOutput)
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(SolveRun.objects.select_related("debate"), pk=pk, kind=SolveRun.Kind.DEBATE)
        return Response(DebateRunOutput(run_stats_payload(run_stats(run))).data)


class DebateTranscriptView(APIView):
    permission_classes = [CanRunSolving]

    @extend_schema(operation_id="debate_transcript_retrieve", responses=TranscriptOutput)
    def get(self, request: Request, pk: int) -> Response:
        response = get_object_or_404(
            SolveResponse.objects.select_related("parent"), pk=pk, run__kind=SolveRun.Kind.DEBATE
        )
        reference = may_show_targets(
            request.user, where="api:debate-transcript", parents=[response.parent_id]
        )
        return Response(TranscriptOutput(transcript_payload(response, include_reference=reference)).data)
