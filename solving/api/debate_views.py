"""REST API for debate runs (admins): create/list, detail with the accuracy and cost summary, transcripts."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..debate_runs import debate_run_create, debate_run_list, run_stats, run_stats_payload, transcript_payload
from ..models import SolveResponse, SolveRun
from ..permissions import can_run_solving


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


def _check(request: Request) -> None:
    if not can_run_solving(request.user):
        raise PermissionDenied()


class DebateRunListView(APIView):
    @extend_schema(operation_id="debate_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        _check(request)
        return Response([run_stats_payload(run_stats(run)) for run in debate_run_list()[:100]])

    @extend_schema(operation_id="debate_runs_create", request=DebateRunInput, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        from probes.models import Release

        _check(request)
        data = DebateRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        release = get_object_or_404(Release, release_id=v["release"]) if v["release"] else None
        run = debate_run_create(solver_names=v["solvers"], pruner=v["pruner"] or None, selector=v["selector"] or None,
                                extractor=v["extractor"] or None, frontend=v["frontend"] or None, level=v["level"],
                                settings=v["settings"], release=release, parent_ids=v["parents"] or None,
                                name=v["name"], actor=request.user)
        return Response(run_stats_payload(run_stats(run)), status=status.HTTP_201_CREATED)


class DebateRunDetailView(APIView):
    @extend_schema(operation_id="debate_runs_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        _check(request)
        run = get_object_or_404(SolveRun.objects.select_related("debate"), pk=pk, kind=SolveRun.Kind.DEBATE)
        return Response(run_stats_payload(run_stats(run)))


class DebateTranscriptView(APIView):
    @extend_schema(operation_id="debate_transcript_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, pk: int) -> Response:
        _check(request)
        response = get_object_or_404(SolveResponse.objects.select_related("parent"), pk=pk,
                                     run__kind=SolveRun.Kind.DEBATE)
        return Response(transcript_payload(response, include_reference=True))
