"""REST for probes: compile runs (admin), probes (admin), releases (public part for any API client,
private mappings only with the scorer permission), release zip downloads built by a Celery task."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from django.db import transaction
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from probes.models import CompileRun, Probe, Release
from probes.permissions import can_manage_probes, can_read_public_release, can_view_private_mapping
from probes.services import compile_run_create


class _Pages(PageNumberPagination):
    page_size = 50
    max_page_size = 500
    page_size_query_param = "page_size"


def _require(allowed: bool) -> None:
    if not allowed:
        raise PermissionDenied("You do not have permission for this.")


def _run_out(run: CompileRun) -> dict:
    return {"id": run.pk, "status": run.status, "seed": run.seed, "parameters": run.parameters, "total": run.total,
            "done": run.done, "progress_percent": run.progress_percent, "counts": run.counts,
            "timings": run.timings, "issues": run.issues.count(), "created_at": run.created_at}


class CompileRunListApi(APIView):
    class Input(serializers.Serializer):
        parent_ids = serializers.ListField(child=serializers.CharField(), required=False, allow_empty=False)
        all = serializers.BooleanField(required=False, default=False)
        seed = serializers.IntegerField(required=False, default=2027)

        def validate(self, attrs):
            if bool(attrs.get("parent_ids")) == bool(attrs.get("all")):
                raise serializers.ValidationError("Give either parent_ids or all=true.")
            return attrs

    @extend_schema(operation_id="compile_runs_list", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_manage_probes(request.user))
        pages = _Pages()
        page = pages.paginate_queryset(CompileRun.objects.all(), request)
        return pages.get_paginated_response([_run_out(r) for r in page])

    @extend_schema(operation_id="compile_runs_create", responses=OpenApiTypes.OBJECT, request=OpenApiTypes.OBJECT)
    def post(self, request):
        _require(can_manage_probes(request.user))
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        run = compile_run_create(actor=request.user, parent_ids=data.validated_data.get("parent_ids"),
                                 seed=data.validated_data["seed"])
        return Response(_run_out(run), status=202)


class CompileRunDetailApi(APIView):
    @extend_schema(operation_id="compile_runs_detail", responses=OpenApiTypes.OBJECT)
    def get(self, request, run_id: int):
        _require(can_manage_probes(request.user))
        return Response(_run_out(get_object_or_404(CompileRun, pk=run_id)))


def _probe_out(probe: Probe) -> dict:
    return {"logical_probe_id": probe.logical_probe_id, "problem_id": probe.parent.problem_id,
            "task_id": probe.task_id, "interface": probe.interface, "language": probe.language,
            "state": probe.state, "packet_state": probe.packet_state, "split": probe.split,
            "pools": {"B": probe.in_b, "L": probe.in_l, "P": probe.in_p}, "review_target_root": probe.review_target_root,
            "attachment_ids": probe.attachment_ids, "raw_messages": probe.raw_messages,
            "gold_messages": probe.gold_messages}


class ProbeListApi(APIView):
    @extend_schema(operation_id="probes_list", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_manage_probes(request.user))
        from probes.selectors import probe_list

        probes = probe_list(**{k: request.query_params.get(k, "") for k in ("interface", "state", "split", "parent")})
        pages = _Pages()
        page = pages.paginate_queryset(probes, request)
        return pages.get_paginated_response([_probe_out(p) for p in page])


class ProbeDetailApi(APIView):
    @extend_schema(operation_id="probes_detail", responses=OpenApiTypes.OBJECT)
    def get(self, request, logical_probe_id: str):
        _require(can_manage_probes(request.user))
        probe = get_object_or_404(Probe.objects.select_related("parent", "key"), logical_probe_id=logical_probe_id)
        body = _probe_out(probe)
        if can_view_private_mapping(request.user):
            # metadata.PRIVATE.json (native_probe_metadata_v1, Kit names) holds private candidate types
            body["private"] = {"key": probe.key.key, "gold_aliases": probe.key.gold_aliases,
                               "metadata": probe.metadata, "assets": probe.key.assets}
        return Response(body)


def _release_out(release: Release) -> dict:
    return {"release_id": release.release_id, "split": release.split, "origin": release.origin,
            "artifact_mode": release.artifact_mode, "counts": release.counts, "zip_status": release.zip_status,
            "zip_progress": release.zip_progress, "created_at": release.created_at}


class ReleaseListApi(APIView):
    @extend_schema(operation_id="releases_list", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        _require(can_read_public_release(request.user))
        pages = _Pages()
        page = pages.paginate_queryset(Release.objects.all(), request)
        return pages.get_paginated_response([_release_out(r) for r in page])


class ReleaseDetailApi(APIView):
    @extend_schema(operation_id="releases_detail", responses=OpenApiTypes.OBJECT)
    def get(self, request, release_id: str):
        _require(can_read_public_release(request.user))
        return Response(_release_out(get_object_or_404(Release, release_id=release_id)))


class ReleaseProbesApi(APIView):
    """Public records of a release; ``?condition=gold`` gives the +GT records (pool P)."""

    @extend_schema(operation_id="releases_public_probes", responses=OpenApiTypes.OBJECT)
    def get(self, request, release_id: str):
        _require(can_read_public_release(request.user))
        release = get_object_or_404(Release, release_id=release_id)
        gold = request.query_params.get("condition") == "gold"
        items = release.items.all()
        if gold:
            items = items.filter(public_gold__isnull=False)
        pages = _Pages()
        page = pages.paginate_queryset(items, request)
        return pages.get_paginated_response([i.public_gold if gold else i.public_raw for i in page])


class ReleasePrivateApi(APIView):
    """Private mappings and membership: scorer permission only."""

    @extend_schema(operation_id="releases_private_mappings", responses=OpenApiTypes.OBJECT)
    def get(self, request, release_id: str):
        _require(can_view_private_mapping(request.user))
        release = get_object_or_404(Release, release_id=release_id)
        pages = _Pages()
        page = pages.paginate_queryset(release.items.all(), request)
        return pages.get_paginated_response(
            [{"logical_probe_id": i.logical_probe_id, "private_mapping": i.private_mapping,
              "membership": i.membership} for i in page])


class ReleaseZipApi(APIView):
    """POST queues the public zip (Celery, with progress); GET downloads it once ready."""

    @extend_schema(operation_id="releases_zip_build", responses=OpenApiTypes.OBJECT, request=OpenApiTypes.OBJECT)
    def post(self, request, release_id: str):
        _require(can_manage_probes(request.user))
        release = get_object_or_404(Release, release_id=release_id)
        from probes.tasks import release_zip_task

        Release.objects.filter(pk=release.pk).update(zip_status="queued", zip_progress=0)
        transaction.on_commit(partial(release_zip_task.delay, release_pk=release.pk))
        release.refresh_from_db()
        return Response(_release_out(release), status=202)

    @extend_schema(operation_id="releases_zip_download", responses=OpenApiTypes.OBJECT)
    def get(self, request, release_id: str):
        _require(can_read_public_release(request.user))
        release = get_object_or_404(Release, release_id=release_id)
        if release.zip_status != "ready" or not Path(release.zip_path).is_file():
            raise Http404("The zip is not built yet.")
        return FileResponse(open(release.zip_path, "rb"), as_attachment=True,
                            filename=f"{release.release_id}.public.zip")
