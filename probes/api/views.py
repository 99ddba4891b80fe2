"""REST for probes: compile runs (admin), probes (admin), releases (public part for any API client,
private mappings only with the scorer permission), release zip downloads built by a Celery task."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.disclosure import disclose, may_show_targets
from physalign_site.api import (
    ApiCursorPagination,
    ApiErrorOutput,
    cursor_page,
    errors,
    json_list,
    json_object,
    json_value,
    role_permission,
)
from probes.models import CompileRun, Probe, Release
from probes.permissions import can_manage_probes, can_read_public_release, can_view_private_mapping
from probes.services import compile_run_create, release_zip_open, release_zip_queue

from ..selectors import probe_list, probe_parent_pairs

REFUSED = "You do not have permission for this."
CanManageProbes = role_permission(can_manage_probes, message=REFUSED, name="CanManageProbes")
CanReadPublicRelease = role_permission(can_read_public_release, message=REFUSED, name="CanReadPublicRelease")
CanViewPrivateMapping = role_permission(
    can_view_private_mapping, message=REFUSED, name="CanViewPrivateMapping"
)
# Anyone who may read a release downloads its public zip; only probe managers queue the build.
CanBuildReleaseZip = role_permission(
    can_read_public_release, unsafe=can_manage_probes, message=REFUSED, name="CanBuildReleaseZip"
)

MESSAGES = {
    "type": "object",
    "description": "The chat messages a model receives (Kit §4).",
    "properties": {"system": {"type": "string"}, "user": {"type": "string"}},
}
STRINGS = {"type": "string"}
STRING_LIST = {"type": "array", "items": STRINGS}
INTEGERS = {"type": "object", "additionalProperties": {"type": "integer"}}
COMPILE_PARAMETERS = {
    "type": "object",
    "description": "What the run was asked for: ``parent_ids`` or ``all``, and the chunking it was given.",
    "properties": {
        "parent_ids": STRING_LIST,
        "all": {"type": "boolean"},
        "chunk_size": {"type": "integer"},
        "lease_seconds": {"type": "integer"},
    },
}
COMPILE_COUNTS = {
    **INTEGERS,
    "description": "Counted by the run: parents, probes, blocked_groups, probes per interface (T02-single, "
    "…) and the pools' sizes after the membership refresh; {} until it has run.",
}
COMPILE_TIMINGS = {
    "type": "object",
    "description": "Seconds per compile stage (compile_s, render_s, db_s, load_s, store_s); {} until it has run.",
    "additionalProperties": {"type": "number"},
}


CURSOR_NEWEST_FIRST = "Cursor pages, newest first (`?cursor=`, `?page_size=` up to 500). 404: a bad cursor."


# --- compile runs -------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="CompileRun")
class CompileRunOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="queued | running | succeeded | failed")
    seed = serializers.IntegerField()
    parameters = json_value(COMPILE_PARAMETERS)
    total = serializers.IntegerField(help_text="Parents to compile.")
    done = serializers.IntegerField(help_text="Parents of the chunks done.")
    chunks_total = serializers.IntegerField(help_text="Chunks of parents, one worker task each.")
    chunks_done = serializers.IntegerField()
    progress_percent = serializers.IntegerField()
    counts = json_value(COMPILE_COUNTS)
    timings = json_value(COMPILE_TIMINGS)
    issues = serializers.IntegerField(source="issues.count", help_text="Compile issues recorded by the run.")
    created_at = serializers.DateTimeField()


class CompileRunListApi(APIView):
    """Compile runs, newest first, in cursor pages; POST starts one."""

    permission_classes = [CanManageProbes]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema_serializer(component_name="CompileRunCreateInput")
    class InputSerializer(serializers.Serializer):
        parent_ids = serializers.ListField(child=serializers.CharField(), required=False, allow_empty=False)
        all = serializers.BooleanField(required=False, default=False)
        seed = serializers.IntegerField(required=False, default=2027)
        chunk_size = serializers.IntegerField(
            required=False, min_value=1, max_value=100_000, help_text="Parents per worker task (default 50)."
        )

        def validate(self, attrs):
            if bool(attrs.get("parent_ids")) == bool(attrs.get("all")):
                raise serializers.ValidationError("Give either parent_ids or all=true.")
            return attrs

    @extend_schema(
        operation_id="compile_runs_list",
        responses={200: CompileRunOutput(many=True), **errors(401, 403, 404)},
        description=CURSOR_NEWEST_FIRST,
    )
    def get(self, request):
        return cursor_page(
            self, request, CompileRun.objects.all(), lambda page: CompileRunOutput(page, many=True).data
        )

    @extend_schema(
        operation_id="compile_runs_create",
        request=InputSerializer,
        responses={202: CompileRunOutput, **errors(400, 401, 403)},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = compile_run_create(
            actor=request.user,
            parent_ids=data.validated_data.get("parent_ids"),
            seed=data.validated_data["seed"],
            chunk_size=data.validated_data.get("chunk_size"),
        )
        return Response(CompileRunOutput(run).data, status=202)


class CompileRunDetailApi(APIView):
    permission_classes = [CanManageProbes]

    @extend_schema(
        operation_id="compile_runs_detail", responses={200: CompileRunOutput, **errors(401, 403, 404)}
    )
    def get(self, request, run_id: int):
        return Response(CompileRunOutput(get_object_or_404(CompileRun, pk=run_id)).data)


# --- probes -------------------------------------------------------------------------------------------


class ProbePoolsOutput(serializers.Serializer):
    B = serializers.BooleanField(source="in_b", help_text="Grounding pool")
    L = serializers.BooleanField(source="in_l", help_text="Joint set")
    P = serializers.BooleanField(source="in_p", help_text="Paired-eligible")


@extend_schema_serializer(component_name="Probe")
class ProbeOutput(serializers.Serializer):
    logical_probe_id = serializers.CharField()
    problem_id = serializers.CharField(source="parent.problem_id")
    task_id = serializers.CharField()
    interface = serializers.CharField()
    language = serializers.CharField()
    state = serializers.CharField()
    packet_state = serializers.CharField()
    split = serializers.CharField()
    pools = ProbePoolsOutput(source="*")
    review_target_root = serializers.CharField()
    attachment_ids = json_list(STRINGS)
    raw_messages = json_value(MESSAGES)
    gold_messages = json_value(MESSAGES)


class ProbePrivateFieldsOutput(serializers.Serializer):
    """metadata.PRIVATE.json (native_probe_metadata_v1, Kit names) holds private candidate types."""

    key = json_object(
        "The Kit probe key (Kit §2.9: candidate map, targets, anchors, packet plan, …).", source="key.key"
    )
    gold_aliases = json_list(STRINGS, source="key.gold_aliases")
    metadata = json_object(
        "The Kit probe metadata (native_probe_metadata_v1 diagnostics: private candidate types)."
    )
    assets = json_object("The Kit probe draft's assets, by asset id.", source="key.assets")


@extend_schema_serializer(component_name="ProbePrivate")
class ProbePrivateOutput(ProbeOutput):
    """Scorers only (``probes.view_private_mapping``); for everyone else the ``private`` key is absent."""

    private = ProbePrivateFieldsOutput(source="*")


# The list's default fields: everything public but the two message sets (on load_demo's compiled
# demo a page of 50 is 23 KB instead of 299 KB with them);
# ``?fields=`` chooses among all of ProbeOutput's (public) fields, the messages included.
PROBE_FIELDS = tuple(ProbeOutput._declared_fields)
PROBE_SUMMARY_FIELDS = tuple(f for f in PROBE_FIELDS if f not in ("raw_messages", "gold_messages"))
# The probe columns each output field reads (the list loads only those: no views, metadata or key).
_PROBE_COLUMNS = {"problem_id": ("parent__problem_id",), "pools": ("in_b", "in_l", "in_p")}


@extend_schema_serializer(component_name="ProbeListItem")
class ProbeListItemOutput(ProbeOutput):
    """One probe of the list: by default the summary (every field but ``raw_messages`` and
    ``gold_messages``), with ``?fields=a,b`` exactly the fields named. The full probe is
    ``/api/probes/<logical_probe_id>/``."""

    def __init__(self, *args: Any, fields: tuple[str, ...] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in set(self.fields) - set(PROBE_FIELDS if fields is None else fields):
            self.fields.pop(name)
        for field in self.fields.values():
            field.required = False  # for the schema: which fields appear depends on ``?fields=``


def probe_fields_parse(text: str) -> tuple[str, ...]:
    """``"a, b,a"`` → the named public probe fields in the detail's order; an unknown name is refused."""
    named = {name.strip() for name in text.split(",")} - {""}
    unknown = sorted(named - set(PROBE_FIELDS))
    if unknown:
        raise serializers.ValidationError(
            f"Unknown field{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. "
            f"Choose among: {', '.join(PROBE_FIELDS)}."
        )
    return tuple(f for f in PROBE_FIELDS if f in named) or PROBE_SUMMARY_FIELDS


class ProbeListApi(APIView):
    """Live probes by logical probe id, in cursor pages."""

    permission_classes = [CanManageProbes]
    pagination_class = ApiCursorPagination
    ordering = "logical_probe_id"  # unique

    class FilterSerializer(serializers.Serializer):
        """Query-string filters, as typed (a NUL or lone surrogate is a 400, not a database error)."""

        interface = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
        state = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
        split = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
        parent = serializers.CharField(  # type: ignore[assignment]  # DRF takes declared fields off the class
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            default="",
            help_text="A parent problem id",
        )
        # A declared field named like Serializer.fields: DRF's metaclass moves it into _declared_fields, so the
        # property still works; the stubs only see the class attribute.
        fields = serializers.CharField(  # type: ignore[assignment]
            required=False,
            allow_blank=True,
            default="",
            help_text=(
                "Comma-separated fields to list, among: "
                + ", ".join(PROBE_FIELDS)
                + ". Default: all but raw_messages and gold_messages. An unknown name is a 400."
            ),
        )

        def validate_fields(self, value: str) -> tuple[str, ...]:
            return probe_fields_parse(value)

    @extend_schema(
        operation_id="probes_list",
        responses={200: ProbeListItemOutput(many=True), **errors(400, 401, 403, 404)},
        parameters=[FilterSerializer],
        description="A summary per probe (or the fields `?fields=` names); the full probe is "
        "`/api/probes/{logical_probe_id}/`. Nothing private is ever listed. Cursor pages by logical probe id "
        "(`?cursor=`, `?page_size=` up to 500). 400: an unknown field; 404: a bad cursor.",
    )
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        options = dict(filters.validated_data)
        fields = options.pop("fields")
        columns = [c for f in fields for c in _PROBE_COLUMNS.get(f, (f,))]
        # the cursor reads the ordering column of the page's last row: loaded with the page, never per row
        rows = probe_list(**options).only("pk", self.ordering, *columns)
        if "problem_id" not in fields:
            rows = rows.select_related(None)  # no join for a parent nothing reads
        return cursor_page(
            self, request, rows, lambda page: ProbeListItemOutput(page, many=True, fields=fields).data
        )


class ProbeDetailApi(APIView):
    permission_classes = [CanManageProbes]

    @extend_schema(
        operation_id="probes_detail",
        responses={200: ProbePrivateOutput, **errors(401, 403, 404)},
        description="`private` is present only with the scorer permission; otherwise the key is absent.",
    )
    def get(self, request, logical_probe_id: str):
        probe = get_object_or_404(
            Probe.objects.select_related("parent", "key"), logical_probe_id=logical_probe_id
        )
        private = may_show_targets(request.user, where="api:probe", probes=probe_parent_pairs([probe]))
        return Response((ProbePrivateOutput if private else ProbeOutput)(probe).data)


# --- releases -----------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="Release")
class ReleaseOutput(serializers.Serializer):
    release_id = serializers.CharField()
    split = serializers.CharField()
    origin = serializers.CharField(help_text="exported | imported")
    artifact_mode = serializers.CharField()
    counts = json_object("The Kit release manifest's counts (probes and parents per pool).")
    zip_status = serializers.CharField(help_text="none | queued | running | ready | failed")
    zip_progress = serializers.IntegerField()
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="ReleaseRecord")
class ReleaseRecordOutput(serializers.Serializer):
    """One public record of a release (the Kit's fixed public allowlist), exactly as frozen in the release."""

    schema_version = serializers.CharField()
    instance_id = serializers.CharField()
    logical_probe_id = serializers.CharField()
    task_id = serializers.CharField()
    interface = serializers.CharField()
    language = serializers.CharField()
    split = serializers.CharField()
    condition = serializers.CharField(help_text="raw | gold")
    input = json_object("The Kit public record's input: the messages and attachments a model receives.")

    def to_representation(self, instance: Any) -> Any:
        return instance  # the frozen record, byte for byte (its hashes are part of the release)


@extend_schema_serializer(component_name="ReleasePrivateMapping")
class ReleasePrivateOutput(serializers.Serializer):
    logical_probe_id = serializers.CharField()
    private_mapping = json_object("The probe's private mapping (Kit private record).")
    membership = json_object("The probe's Kit membership record (pools, split and group).")


class ReleaseListApi(APIView):
    """Releases, newest first, in cursor pages."""

    permission_classes = [CanReadPublicRelease]
    pagination_class = ApiCursorPagination
    ordering = "-pk"

    @extend_schema(
        operation_id="releases_list",
        responses={200: ReleaseOutput(many=True), **errors(401, 403, 404)},
        description=CURSOR_NEWEST_FIRST,
    )
    def get(self, request):
        return cursor_page(
            self, request, Release.objects.all(), lambda page: ReleaseOutput(page, many=True).data
        )


class ReleaseDetailApi(APIView):
    permission_classes = [CanReadPublicRelease]

    @extend_schema(operation_id="releases_detail", responses={200: ReleaseOutput, **errors(401, 403, 404)})
    def get(self, request, release_id: str):
        return Response(ReleaseOutput(get_object_or_404(Release, release_id=release_id)).data)


class ReleaseProbesApi(APIView):
    """Public records of a release; ``?condition=gold`` gives the +GT records (pool P)."""

    permission_classes = [CanReadPublicRelease]
    pagination_class = ApiCursorPagination
    # unique within a release (``release_item_unique``, whose index serves the ordering)
    ordering = "logical_probe_id"

    @extend_schema(
        operation_id="releases_public_probes",
        description="Public records of a release; `?condition=gold` gives the +GT records (pool P). "
        "Cursor pages of 50 (`page_size` up to 500) in `logical_probe_id` order: follow `next`. 404: no such "
        "release, or a bad cursor.",
        responses={200: ReleaseRecordOutput(many=True), **errors(401, 403, 404)},
        parameters=[
            OpenApiParameter(
                "condition",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                required=False,
                enum=["raw", "gold"],
                description="gold: the +GT records (pool P); anything else: the raw records",
            )
        ],
    )
    def get(self, request, release_id: str):
        release = get_object_or_404(Release, release_id=release_id)
        gold = request.query_params.get("condition") == "gold"
        items = release.items.only("pk", "logical_probe_id", "public_gold" if gold else "public_raw")
        if gold:
            items = items.filter(public_gold__isnull=False)
        return cursor_page(
            self,
            request,
            items,
            lambda page: (
                ReleaseRecordOutput([i.public_gold if gold else i.public_raw for i in page], many=True).data
            ),
        )


class ReleasePrivateApi(APIView):
    """Private mappings and membership: scorer permission only."""

    permission_classes = [CanViewPrivateMapping]
    pagination_class = ApiCursorPagination
    ordering = "logical_probe_id"  # unique within a release

    @extend_schema(
        operation_id="releases_private_mappings",
        responses={200: ReleasePrivateOutput(many=True), **errors(401, 403, 404)},
        description="Cursor pages of 50 (`page_size` up to 500) in `logical_probe_id` order: follow `next`. "
        "404: no such release, or a bad cursor.",
    )
    def get(self, request, release_id: str):
        release = get_object_or_404(Release, release_id=release_id)

        def render(page: list[Any]) -> Any:
            shown = probe_parent_pairs((item.problem_id, item.logical_probe_id) for item in page)
            disclose(request.user, where="api:release-private", probes=shown)
            return ReleasePrivateOutput(page, many=True).data

        return cursor_page(self, request, release.items.all(), render)


class ReleaseZipApi(APIView):
    """POST queues the public zip (Celery, with progress); GET downloads it once ready."""

    permission_classes = [CanBuildReleaseZip]

    @extend_schema(
        operation_id="releases_zip_build",
        request=None,
        responses={202: ReleaseOutput, **errors(401, 403, 404)},
    )
    def post(self, request, release_id: str):
        release = release_zip_queue(
            release=get_object_or_404(Release, release_id=release_id), actor=request.user
        )
        return Response(ReleaseOutput(release).data, status=202)

    @extend_schema(
        operation_id="releases_zip_download",
        responses={
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The release's public zip."
            ),
            **errors(401, 403),
            404: OpenApiResponse(ApiErrorOutput, description="No such release, or its zip is not built yet."),
        },
    )
    def get(self, request, release_id: str):
        release = get_object_or_404(Release, release_id=release_id)
        handle = release_zip_open(release)
        if handle is None:
            raise Http404("The zip is not built yet.")
        return FileResponse(
            handle,
            as_attachment=True,
            filename=f"{release.release_id}.public.zip",
            content_type="application/zip",
        )
