"""Evaluation runs: plan every request row up front, execute in claimed chunks, score, aggregate.

Safety: a row is claimed with a lease (``claims`` counts claims; at most 3 = the first try plus two
infrastructure retries); its result is written only by the claim holder and only while the row is
not terminal, so a redelivered or duplicated task never writes twice and a returned output is never
replaced. A worker killed mid-row leaves the row ``running``; once its lease expires another claim
takes it (that counts as an infrastructure retry).

Throughput: a chunk task keeps up to ``EVAL_CHUNK_THREADS`` provider calls in flight on a thread
pool (the per-model limiter and ``max_concurrency`` still apply). Its main thread does all database
work, in one transaction per refill — store the answers that arrived (on PostgreSQL one guarded
``UPDATE … RETURNING`` feeding the ItemScore upsert), claim the next few rows (one ``SELECT … FOR
UPDATE SKIP LOCKED``, one ``UPDATE``) — while the calls run; rows are claimed a few at a time just
before their calls, never a whole chunk up front. Attachments are cached per process by their SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import platform
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cached_property
from typing import Any

from cachetools import LRUCache
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from audit.services import event_record
from kit.canonical import digest
from kit.nearest import controls_choice
from llm import ImageInput, LLMRequest, OutputStatus, ProviderConfig
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter
from physalign_site.errors import ApplicationError
from probes.attachments import Attachment, AttachmentIndex, AttachmentMissing, view_bytes
from probes.models import Probe, Release
from run_engine.engine import (
    MAX_CLAIMS,
    RowTable,
    RunTable,
    claim_applied,
    new_token,
    rows_claim,
    run_cancel,
    run_dispatch,
    run_resume,
)
from run_engine.manifest import code_revision, package_versions

from . import metrics as metrics_core
from .conditions import reorder_candidates
from .models import EvalRequest, EvalRun, ItemScore, MetricSnapshot
from .scoring import CONDITIONS, ModelResponse, score

# a chunk task claims its rows a few at a time (not all up front), so a chunk can be large
DEFAULT_OPTIONS = {"chunk_size": 100, "claim_lease_seconds": 300, "resamples": 2000}
TERMINAL = EvalRequest.TERMINAL


# ------------------------------------------------------------------------------------------------ planning

@dataclass(frozen=True)
class PlannedProbe:
    probe: Probe
    pools: list[str]


def _planned_probes(release: Release | None, probe_filter: dict[str, Any]) -> list[PlannedProbe]:
    if release is not None:
        items = {i.logical_probe_id: i.membership for i in release.items.all()}
        probes = Probe.objects.filter(logical_probe_id__in=items)
    else:
        items = None
        probes = Probe.objects.exclude(state__in=["superseded", "rejected"])
    if probe_filter.get("interface"):
        probes = probes.filter(interface=probe_filter["interface"])
    if probe_filter.get("task_id"):
        probes = probes.filter(task_id=probe_filter["task_id"])
    if probe_filter.get("probe_ids"):
        probes = probes.filter(logical_probe_id__in=probe_filter["probe_ids"])
    planned = []
    for probe in probes.order_by("logical_probe_id"):
        if items is not None:
            member = items[probe.logical_probe_id]
            pools = [p for p in ("B", "L", "P") if member.get(p)]
        else:
            pools = [p for p, flag in (("B", probe.in_b), ("L", probe.in_l), ("P", probe.in_p)) if flag]
        planned.append(PlannedProbe(probe, pools))
    if probe_filter.get("limit"):
        planned = planned[: int(probe_filter["limit"])]
    return planned


def _manifest(run: EvalRun, configs: list[ModelConfig], planned: list[PlannedProbe]) -> dict[str, Any]:
    prompt_hashes = sorted({digest(p.probe.raw_messages["system"]) for p in planned})
    return {
        "schema": "physalign_eval_manifest_v1", "code_revision": code_revision(), "python": platform.python_version(),
        "packages": package_versions(), "conditions": run.conditions, "seed": run.seed, "options": run.options,
        "release": run.release.release_id if run.release else None, "probe_filter": run.probe_filter,
        "probe_ids_sha256": digest(sorted(p.probe.logical_probe_id for p in planned)),
        "system_prompt_sha256": prompt_hashes, "scoring": {"parsing": "kit_5_1", "normalizers": "v2_1",
                                                           "max_infra_retries": MAX_CLAIMS - 1},
        "models": {c.name: provider_config_for(c).settings_record() for c in configs},
        "bootstrap": {"resamples": run.options["resamples"], "seed": run.seed, "unit": "parent"},
    }


@transaction.atomic
def eval_run_create(*, model_names: list[str], conditions: list[str], release: Release | None = None,
                    probe_filter: dict[str, Any] | None = None, name: str = "", actor: Any = None,
                    options: dict[str, Any] | None = None, start: bool = True) -> EvalRun:
    """Create the run and every request row (the fixed denominator), then queue the work."""
    unknown = [c for c in conditions if c not in CONDITIONS]
    if not conditions or unknown:
        raise ApplicationError(f"Conditions must be among {list(CONDITIONS)}.", code="conditions_invalid")
    configs = list(ModelConfig.objects.filter(name__in=model_names, is_active=True).order_by("name"))
    missing = sorted(set(model_names) - {c.name for c in configs})
    if not configs or missing:
        raise ApplicationError(f"Unknown or inactive models: {missing or model_names}.", code="models_invalid")
    planned = _planned_probes(release, probe_filter or {})
    if not planned:
        raise ApplicationError("No probes match this run.", code="no_probes")
    run = EvalRun.objects.create(name=name, release=release, conditions=[c for c in CONDITIONS if c in conditions],
                                 probe_filter=probe_filter or {}, options={**DEFAULT_OPTIONS, **(options or {})},
                                 created_by=actor if getattr(actor, "pk", None) else None)
    run.model_configs.set(configs)
    rows = [EvalRequest(run=run, model=config, probe=p.probe, condition=condition, pools=p.pools)
            for config in configs for condition in run.conditions for p in planned
            if condition != "gold" or "P" in p.pools]
    EvalRequest.objects.bulk_create(rows, batch_size=1000)
    run.total = len(rows)
    run.manifest = _manifest(run, configs, planned)
    run.save(update_fields=["total", "manifest"])
    event_record(actor=actor, verb="eval_run.create", obj=run, after={"total": run.total, "models": model_names,
                                                                      "conditions": run.conditions})
    if start:
        transaction.on_commit(lambda: eval_run_dispatch(run_id=run.pk))
    return run


def _chunk_task() -> Any:
    from .tasks import eval_chunk_task

    return eval_chunk_task


ROWS = RowTable(EvalRequest, terminal=TERMINAL, running=EvalRequest.Status.RUNNING)
RUNS = RunTable(EvalRun, rows="requests", row_table=ROWS, verb="eval_run",
                idle=(EvalRun.Status.CANCELLED, EvalRun.Status.COMPLETED), done=(EvalRun.Status.COMPLETED,),
                done_message="The run is complete.", chunk_task=_chunk_task,
                finalize=lambda run_id: eval_run_finalize(run_id=run_id),
                default_chunk_size=DEFAULT_OPTIONS["chunk_size"])


def eval_run_dispatch(*, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row. Safe to call again (resume, watchdog)."""
    return run_dispatch(RUNS, run_id=run_id)


def eval_run_cancel(*, run: EvalRun, actor: Any = None) -> EvalRun:
    return run_cancel(RUNS, run=run, actor=actor)


def eval_run_resume(*, run: EvalRun, actor: Any = None) -> EvalRun:
    return run_resume(RUNS, run=run, actor=actor)


# ------------------------------------------------------------------------------------------------ execution

ACTIVE = (EvalRequest.Status.PENDING, EvalRequest.Status.RUNNING)
_RESULT_FIELDS = ["status", "attempts", "finish_reason", "provider_status", "input_tokens", "output_tokens",
                  "cost_usd", "latency_ms", "request_hash", "error", "raw_output", "completed_at"]
_SCORE_FIELDS = ["status", "C", "G", "J", "object_valid", "field_valid", "canonical", "scored_at"]


class _Image(ImageInput):
    """An attachment whose digest is computed once: every request fingerprint hashes its images."""

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class _ImageCache:
    """Per-process LRU of attachments by the SHA-256 of their bytes (content-addressed, so never stale), bounded
    by the bytes it holds (cachetools' LRU sized by ``len`` of the data; a lock: runs use threads)."""

    def __init__(self, max_bytes: int) -> None:
        self._items: LRUCache[tuple[str, str], _Image] = LRUCache(maxsize=max_bytes,
                                                                   getsizeof=lambda image: len(image.data))
        self._lock = threading.Lock()

    def get(self, sha256: str, media_type: str) -> _Image | None:
        with self._lock:
            return self._items.get((sha256, media_type))

    def put(self, sha256: str, image: _Image) -> _Image:
        if sha256 and len(image.data) <= self._items.maxsize:
            with self._lock:
                self._items[(sha256, image.media_type)] = image
        return image

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_image_cache = _ImageCache(max_bytes=64 * 2**20)


def _attachments(probes: list[Probe]) -> dict[int, tuple[ImageInput, ...] | AttachmentError]:
    """Every probe's attachments in order (``probes.attachments``: rendered views, else the parent's originals).
    Two metadata queries; bytes come from the content-addressed cache, else one query for the missing views'
    PNGs and a storage read per missing original."""
    if not probes:
        return {}
    index = AttachmentIndex(probes)
    resolved: dict[int, tuple[Attachment, ...] | AttachmentError] = {}
    for probe in probes:
        try:
            resolved[probe.pk] = index.of(probe)
        except AttachmentMissing as error:
            resolved[probe.pk] = AttachmentError(f"attachment of {probe.logical_probe_id} unreadable: {error}")
    loaded = view_bytes(a.view_pk for found in resolved.values() if not isinstance(found, AttachmentError)
                        for a in found if a.view_pk is not None and _image_cache.get(a.sha256, a.media_type) is None)
    result: dict[int, tuple[ImageInput, ...] | AttachmentError] = {}
    for probe in probes:
        found = resolved[probe.pk]
        try:
            result[probe.pk] = found if isinstance(found, AttachmentError) else tuple(
                _image_cache.get(a.sha256, a.media_type) or _image_cache.put(a.sha256, _load(a, loaded))
                for a in found)
        except (OSError, ValueError) as error:  # one unreadable file fails its probe's rows, not the chunk
            result[probe.pk] = AttachmentError(f"attachment of {probe.logical_probe_id} unreadable: {error}")
    return result


def _load(attachment: Attachment, loaded: dict[int, bytes]) -> _Image:
    data = loaded.get(attachment.view_pk) if attachment.view_pk is not None else None
    return _Image(attachment.read() if data is None else data, attachment.media_type)


class AttachmentError(str):
    """Why a probe's attachments could not be loaded (its requests end infra_missing with this message)."""


def _images(probe: Probe) -> tuple[ImageInput, ...]:
    images = _attachments([probe])[probe.pk]
    if isinstance(images, AttachmentError):
        raise OSError(images)
    return images


def build_request(row: EvalRequest, seed: int, images: tuple[ImageInput, ...] | None = None) -> LLMRequest:
    """The exact request of a row: a fresh context with the probe's public messages for the condition
    (``images``: the probe's attachments when the caller already loaded them)."""
    probe = row.probe
    messages = probe.gold_messages if row.condition == "gold" else probe.raw_messages
    user = messages["user"]
    if row.condition == "reordered":
        user = reorder_candidates(user, seed=seed, probe_id=probe.logical_probe_id)
    if row.condition == "no_image":
        images = ()
    elif images is None:
        images = _images(probe)
    return LLMRequest(system=messages["system"], user=user, images=images,
                      request_id=f"{row.run_id}:{row.model_id}:{probe.logical_probe_id}:{row.condition}")


def _claim(request_ids: list[int], lease: int, token: str, rows: dict[int, EvalRequest]
           ) -> tuple[list[int], list[int]]:
    """Claim the claimable rows among ``request_ids`` (the run engine's lease rules): (claimed ids, busy ids).
    ``rows`` (the chunk's loaded rows) get their new claim fields; a row whose three claims all died without
    an answer is finished as infra_missing. Runs inside the caller's transaction, which holds the locks."""
    claim = rows_claim(ROWS, request_ids, lease_seconds=lease, token=token)
    for pk in claim.claimed:
        claim_applied(rows[pk], claim, ROWS)
    if claim.exhausted:
        lost = [rows[pk] for pk in claim.exhausted]
        for row in lost:
            row.status, row.raw_output = EvalRequest.Status.INFRA_MISSING, None
            row.error = "worker lost the request three times"
        _store_results([(row, _score_of(row)) for row in lost], token=None)
    return claim.claimed, claim.busy


def _score_of(row: EvalRequest) -> ItemScore:
    key = row.probe.key.key if hasattr(row.probe, "key") else {}
    result = score(ModelResponse(row.raw_output, _response_status(row)), key, row.condition)
    return ItemScore(request_id=row.pk, status=result.status, C=result.C, G=result.G, J=result.J,
                     object_valid=result.object_valid, field_valid=result.field_valid,
                     canonical=list(result.canonical) if result.canonical else None)


def _store_results(done: list[tuple[EvalRequest, ItemScore]], *, token: str | None) -> int:
    """Write finished rows (result fields set) and their scores in the caller's transaction; only rows
    that are not terminal and, with ``token``, still held by that claim: a row is never written twice.
    Returns how many rows were written."""
    now = timezone.now()
    for row, item in done:
        row.completed_at = now
        row.status = item.status  # the scored status (unparseable, refusal, …) is the row's final status
    if connection.vendor == "postgresql":
        return _store_results_postgres(done, token=token, now=now)
    owned = EvalRequest.objects.select_for_update().filter(pk__in=[row.pk for row, _ in done]).exclude(
        status__in=TERMINAL)
    if token is not None:
        owned = owned.filter(claim_token=token)
    keep = set(owned.order_by("pk").values_list("pk", flat=True))
    kept = [(row, item) for row, item in done if row.pk in keep]
    if kept:
        EvalRequest.objects.bulk_update([row for row, _ in kept], _RESULT_FIELDS)
        ItemScore.objects.bulk_create([item for _, item in kept], update_conflicts=True, unique_fields=["request"],
                                      update_fields=_SCORE_FIELDS)
    return len(kept)


# field → (SQL type of the array its values are sent in, cast to the column's type)
_RESULT_TYPES = {"status": ("text", ""), "attempts": ("text", "::jsonb"), "finish_reason": ("text", ""),
                 "provider_status": ("text", ""), "input_tokens": ("bigint", ""), "output_tokens": ("bigint", ""),
                 "cost_usd": ("numeric", ""), "latency_ms": ("bigint", ""), "request_hash": ("text", ""),
                 "error": ("text", ""), "raw_output": ("text", ""), "completed_at": ("timestamptz", "")}
_SCORE_TYPES = {"status": ("text", ""), "C": ("smallint", ""), "G": ("smallint", ""), "J": ("smallint", ""),
                "object_valid": ("boolean", ""), "field_valid": ("text", "::jsonb"),
                "canonical": ("text", "::jsonb"), "scored_at": ("timestamptz", "")}
_JSON_FIELDS = {"attempts", "field_valid", "canonical"}


def _column_arrays(objs: list[Any], types: dict[str, tuple[str, str]], *, now: Any) -> list[list[Any]]:
    arrays = []
    for name in types:
        if name == "scored_at":
            arrays.append([now] * len(objs))
        elif name in _JSON_FIELDS:
            arrays.append([None if getattr(o, name) is None else json.dumps(getattr(o, name)) for o in objs])
        else:
            arrays.append([getattr(o, name) for o in objs])
    return arrays


def _store_results_postgres(done: list[tuple[EvalRequest, ItemScore]], *, token: str | None, now: Any) -> int:
    """One statement: a guarded ``UPDATE … FROM unnest(arrays) RETURNING`` of the rows feeding an
    ``INSERT … ON CONFLICT DO UPDATE`` of exactly their scores — the same rows and values as
    select_for_update + bulk_update + bulk_create, without compiling a CASE per row and field."""
    rows, scores = [row for row, _ in done], [item for _, item in done]
    req, sc = EvalRequest._meta, ItemScore._meta
    r_cols = [req.get_field(name).column for name in _RESULT_TYPES]
    s_cols = [sc.get_field(name).column for name in _SCORE_TYPES]
    r_arrays = ", ".join(["%s::bigint[]"] + [f"%s::{t}[]" for t, _ in _RESULT_TYPES.values()])
    s_arrays = ", ".join(["%s::bigint[]"] + [f"%s::{t}[]" for t, _ in _SCORE_TYPES.values()])
    r_set = ", ".join(f'"{c}" = v."{c}"{cast}' for c, (_, cast) in zip(r_cols, _RESULT_TYPES.values(), strict=True))
    s_select = ", ".join(f's."{c}"{cast}' for c, (_, cast) in zip(s_cols, _SCORE_TYPES.values(), strict=True))
    s_update = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in s_cols)
    terminal = ", ".join(["%s"] * len(TERMINAL))
    guard = ' AND r."claim_token" = %s' if token is not None else ""
    request_id = sc.get_field("request").column
    sql = (
        f'WITH u AS (UPDATE "{req.db_table}" AS r SET {r_set} '
        f'FROM unnest({r_arrays}) AS v("_pk", {", ".join(f"{chr(34)}{c}{chr(34)}" for c in r_cols)}) '
        f'WHERE r."{req.pk.column}" = v."_pk" AND r."status" NOT IN ({terminal}){guard} RETURNING r."{req.pk.column}" AS id) '
        f'INSERT INTO "{sc.db_table}" ("{request_id}", {", ".join(f"{chr(34)}{c}{chr(34)}" for c in s_cols)}) '
        f'SELECT s."_rid", {s_select} FROM unnest({s_arrays}) AS s("_rid", '
        f'{", ".join(f"{chr(34)}{c}{chr(34)}" for c in s_cols)}) JOIN u ON u.id = s."_rid" '
        f'ON CONFLICT ("{request_id}") DO UPDATE SET {s_update}')
    params: list[Any] = [[row.pk for row in rows], *_column_arrays(rows, _RESULT_TYPES, now=now), *TERMINAL]
    if token is not None:
        params.append(token)
    params += [[item.request_id for item in scores], *_column_arrays(scores, _SCORE_TYPES, now=now)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _score_row(row: EvalRequest) -> ItemScore:
    """Score one stored row (rescore) and keep the row's status in step with its score."""
    item = _score_of(row)
    item, _ = ItemScore.objects.update_or_create(
        request=row, defaults={f: getattr(item, f) for f in _SCORE_FIELDS if f != "scored_at"})
    if row.status != item.status:
        EvalRequest.objects.filter(pk=row.pk).update(status=item.status)
        row.status = item.status
    return item


def _response_status(row: EvalRequest) -> str:
    if row.status == EvalRequest.Status.INFRA_MISSING or row.raw_output is None:
        return "infra_missing"
    return {OutputStatus.REFUSAL: "refusal", OutputStatus.TRUNCATED: "truncated"}.get(row.provider_status,
                                                                                       "completed")


def _call(row: EvalRequest, request: LLMRequest, config: ProviderConfig) -> tuple[EvalRequest, ItemScore]:
    """One provider call and its score; no database access (runs in a pool thread)."""
    from llm import generate

    config = replace(config, max_retries=min(int(config.max_retries), MAX_CLAIMS - 1 - (row.claims - 1)))
    result = generate(request, config, limiter=shared_limiter())
    row.attempts, row.finish_reason, row.provider_status = result.attempts_record(), result.finish_reason or "", \
        result.status
    row.input_tokens, row.output_tokens = result.usage.input_tokens, result.usage.output_tokens
    row.cost_usd, row.latency_ms = Decimal(result.cost_usd), result.latency_ms
    row.request_hash, row.error = request.fingerprint(), result.error[:2000]
    if result.status == OutputStatus.FAILED:
        row.status, row.raw_output = EvalRequest.Status.INFRA_MISSING, None
    else:
        row.status, row.raw_output = EvalRequest.Status.COMPLETED, result.text
    return row, _score_of(row)


def _unsendable(row: EvalRequest, error: str) -> tuple[EvalRequest, ItemScore]:
    """A claimed row whose request cannot be built: nothing was sent, so it is not an answer (infra_missing)."""
    row.attempts, row.finish_reason, row.provider_status = [], "", OutputStatus.FAILED
    row.status, row.raw_output, row.error = EvalRequest.Status.INFRA_MISSING, None, error[:2000]
    return row, _score_of(row)


def _chunk_threads(configs: list[ModelConfig]) -> int:
    """Provider calls in flight per chunk task: EVAL_CHUNK_THREADS, never above a model's max_concurrency."""
    limit = max(int(getattr(settings, "EVAL_CHUNK_THREADS", 8)), 1)
    for config in configs:
        if config.max_concurrency:
            limit = min(limit, int(config.max_concurrency))
    return limit


class _ChunkExecutor:
    """Keep up to ``threads`` provider calls of one chunk in flight on a thread pool.

    The main thread does all database work: it loads rows (with probe, key and attachments) a little
    ahead of their claim, in small slabs while the pool is busy, and writes in one transaction per
    refill — store the answers that arrived, claim the next rows — while the calls in flight keep
    running. It keeps the pool busy plus up to a pool's worth of claimed requests queued behind it,
    refilling once half of those have started. So a row is claimed
    (``claims`` charged) only shortly before its call starts — a killed worker charges its calls in
    flight and at most ``threads`` queued ones, not its whole chunk — and an answer waits at most one
    refill (≤ 1 s) to be stored. Leases of slow calls are renewed while the worker lives; cancellation
    is checked at most once a second.
    """

    def __init__(self, run: EvalRun, lease: int) -> None:
        self.run, self.lease = run, lease
        self.token = new_token()
        self.configs = {c.pk: c for c in run.model_configs.all()}
        self.provider_configs = {pk: provider_config_for(c) for pk, c in self.configs.items()}
        self.threads = _chunk_threads(list(self.configs.values()))
        self.cancel_checked = time.monotonic()

    def _prepare(self, queue: list[int], rows: dict[int, EvalRequest], images: dict[int, tuple[ImageInput, ...]],
                 *, want: int, slab: int) -> None:
        """Make sure the next ``want`` queued rows are loaded (row, probe, key, attachments), loading up to
        ``slab`` at a time; drop queued ids that are already terminal or gone."""
        while [pk for pk in queue[:want] if pk not in rows]:
            todo = [pk for pk in queue[:slab] if pk not in rows]
            loaded = {row.pk: row for row in EvalRequest.objects.filter(pk__in=todo).exclude(status__in=TERMINAL)
                      .select_related("probe", "probe__key").defer(*_DEFERRED)}
            for row in loaded.values():
                row.model = self.configs[row.model_id]
            rows.update(loaded)
            if len(loaded) < len(todo):
                gone = set(todo) - set(loaded)
                queue[:] = [pk for pk in queue if pk not in gone]
            probes = {r.probe.pk: r.probe for r in loaded.values() if r.condition != "no_image"
                      and r.probe.pk not in images}
            images.update(_attachments(list(probes.values())))

    def _cancelled(self) -> bool:
        now = time.monotonic()
        if now - self.cancel_checked < 1.0:
            return False
        self.cancel_checked = now
        return EvalRun.objects.filter(pk=self.run.pk, status=EvalRun.Status.CANCELLED).exists()

    def _refill(self, done: list[tuple[EvalRequest, ItemScore]], queue: list[int], free: int, busy: list[int],
                rows: dict[int, EvalRequest], images: dict[int, tuple[ImageInput, ...]]) -> list[EvalRequest]:
        """Store ``done``; claim up to ``free`` rows from the front of ``queue``."""
        claimed: list[int] = []
        with transaction.atomic():
            if done:
                _store_results(done, token=self.token)
            if free and self._cancelled():
                queue.clear()
            while queue and len(claimed) < free:
                self._prepare(queue, rows, images, want=free - len(claimed), slab=free - len(claimed))
                take = queue[: free - len(claimed)]
                del queue[: len(take)]
                got, held = _claim(take, self.lease, self.token, rows)
                claimed += got
                busy += held
        return [rows[pk] for pk in claimed]

    def run_chunk(self, request_ids: list[int]) -> list[int]:
        queue, busy = list(request_ids), []
        rows: dict[int, EvalRequest] = {}  # loaded ahead of their claim
        images: dict[int, tuple[ImageInput, ...]] = {}
        in_flight: dict[Future, int] = {}
        done: list[tuple[EvalRequest, ItemScore]] = []
        errors: list[BaseException] = []
        # claimed requests queued behind the busy threads (a pool's worth), refilled once half have started,
        # so calls never wait for the database work of a refill
        capacity, refill = 2 * self.threads, max(self.threads // 2, 1)
        stored = renewed = time.monotonic()
        with ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="eval-call") as pool:
            while queue or in_flight or done:
                free = capacity - len(in_flight) if queue else 0
                now = time.monotonic()
                # one transaction serves several rows: refill once the queued requests have started, store
                # answers in batches, but never hold an answer for more than a second
                if (free and (free >= refill or not in_flight)) or (done and (
                        not in_flight or len(done) >= refill or now - stored >= 1.0)):
                    unsendable = []  # stored with the next refill
                    for row in self._refill(done, queue, free, busy, rows, images):
                        attachments = images.get(row.probe.pk, ()) if row.condition != "no_image" else ()
                        if isinstance(attachments, AttachmentError):
                            unsendable.append(_unsendable(row, str(attachments)))
                            continue
                        request = build_request(row, self.run.seed, attachments)
                        in_flight[pool.submit(_call, row, request, self.provider_configs[row.model_id])] = row.pk
                    for row, _ in done:
                        rows.pop(row.pk, None)
                    done, stored = unsendable, now
                    # load the next rows while the pool is full, not when a slot is waiting for them
                    self._prepare(queue, rows, images, want=capacity, slab=capacity + self.threads)
                if not in_flight:
                    continue
                finished, _ = wait(in_flight, timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    in_flight.pop(future)
                    if future.exception() is not None:
                        errors.append(future.exception())
                    else:
                        done.append(future.result())
                if in_flight and now - renewed >= self.lease / 3:  # slow calls: keep their leases alive
                    EvalRequest.objects.filter(pk__in=list(in_flight.values()), claim_token=self.token,
                                               status=EvalRequest.Status.RUNNING).update(claimed_at=timezone.now())
                    renewed = now
        if errors:  # those rows stay running under this claim; after the lease a later claim retries them
            raise errors[0]
        return busy


def eval_chunk_process(*, run_id: int, request_ids: list[int]) -> list[int]:
    """Execute the chunk with up to EVAL_CHUNK_THREADS provider calls in flight; store each answer and
    score once; return the ids another live claim still holds (the task retries those later). A
    cancelled run claims nothing more."""
    run = EvalRun.objects.only("pk", "status", "seed", "options").get(pk=run_id)
    if run.status == EvalRun.Status.CANCELLED:
        return []
    busy = _ChunkExecutor(run, int(run.options.get("claim_lease_seconds", 300))).run_chunk(request_ids)
    if not busy and not EvalRequest.objects.filter(run_id=run_id, status__in=ACTIVE).exists():
        eval_run_finalize(run_id=run_id)
    return busy


_DEFERRED = ("raw_output", "error", "probe__raw_view", "probe__gold_view", "probe__metadata",
             "probe__key__native_query", "probe__key__displays", "probe__key__assets")


# ------------------------------------------------------------------------------------------------ scoring & metrics

def _nearest_outcome(probe: Probe) -> str:
    """The control's outcome: the compiler's Kit-shaped prediction, a tie broken by display order."""
    nearest = (probe.metadata or {}).get("nearest_region") or {}
    alias = controls_choice(nearest, [c["alias"] for c in probe.raw_view.get("candidates", [])])
    if alias is None:
        return "not_applicable"
    return "correct" if alias in probe.key.gold_aliases else "wrong"


def run_items(run: EvalRun) -> list[dict[str, Any]]:
    """The run as item-file records (the contract of ``manage.py metrics``)."""
    rows = (run.requests.filter(status__in=TERMINAL).select_related("model", "probe__parent", "probe__key", "score")
            .order_by("pk"))
    nearest_cache: dict[int, str] = {}
    items = []
    for row in rows:
        probe = row.probe
        if probe.pk not in nearest_cache:
            nearest_cache[probe.pk] = _nearest_outcome(probe)
        s = getattr(row, "score", None)
        items.append({"model": row.model.name, "condition": row.condition, "probe_id": probe.logical_probe_id,
                      "parent_id": probe.parent.problem_id, "task_id": probe.task_id, "interface": probe.interface,
                      "pools": row.pools, "status": s.status if s else row.status,
                      "C": s.C if s else None, "G": s.G if s else None,
                      "K": len(probe.key.view.candidate_map), "gold_alias_count": len(probe.key.gold_aliases),
                      "nearest": nearest_cache[probe.pk]})
    return items


def eval_run_finalize(*, run_id: int) -> EvalRun | None:
    with transaction.atomic():
        run = EvalRun.objects.select_for_update().get(pk=run_id)
        if run.status in (EvalRun.Status.COMPLETED, EvalRun.Status.SCORING, EvalRun.Status.CANCELLED):
            return None
        if run.requests.exclude(status__in=TERMINAL).exists():
            return None
        run.status = EvalRun.Status.SCORING
        run.save(update_fields=["status"])
    try:
        metrics_store(run=run)
    except Exception as exc:  # keep the rows; the run can be re-scored
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.FAILED, error=str(exc)[:2000])
        raise
    EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.COMPLETED, finished_at=timezone.now())
    run.refresh_from_db()
    return run


POOL_OF = {"GAcc": "B", "CAcc": "L", "JAcc": "L", "GAcc_L": "L", "GAcc_given_C": "L", "GErr_given_C": "L",
           "quadrants": "L", "paired": "P_m", "kit_paired": "P", "no_image": "B", "reordered": "B", "H": "H", "H_hard": "H_hard",
           "random": "B", "nearest": "H"}


@transaction.atomic
def metrics_store(*, run: EvalRun) -> dict[str, Any]:
    result = metrics_core.compute_metrics(run_items(run), resamples=int(run.options.get("resamples", 2000)),
                                          seed=run.seed)
    configs = {c.name: c for c in run.model_configs.all()}
    run.snapshots.all().delete()
    snapshots = []
    for subject, name, stat in metrics_core.iter_statistics(result):
        ci = stat["ci"] or [None, None]
        snapshots.append(MetricSnapshot(
            run=run, model=configs.get(subject), subject=subject, pool=POOL_OF.get(name.split(".")[0], ""),
            metric=name, value=stat["value"], ci_low=ci[0], ci_high=ci[1], lower=stat["lower"], upper=stat["upper"],
            support_parents=stat["parents"], support_probes=stat["probes"],
            undefined_reason=metrics_core.undefined_reason(stat)))
    MetricSnapshot.objects.bulk_create(snapshots)
    EvalRun.objects.filter(pk=run.pk).update(metrics=result)
    run.metrics = result
    return result


def eval_run_rescore(*, run: EvalRun, actor: Any = None) -> dict[str, Any]:
    """Recompute every ItemScore and every metric from the stored raw outputs; no model is called."""
    rows = run.requests.filter(status__in=TERMINAL).select_related("probe__key")
    changed = 0
    for row in rows.iterator(chunk_size=500):
        before = getattr(row, "score", None)
        old = (before.C, before.G) if before else None
        row.status = EvalRequest.Status.INFRA_MISSING if row.raw_output is None else EvalRequest.Status.COMPLETED
        item = _score_row(row)
        changed += int(old != (item.C, item.G))
    result = metrics_store(run=run)
    event_record(actor=actor, verb="eval_run.rescore", obj=run, after={"changed_items": changed})
    return {"changed_items": changed, "metrics": result}


# ------------------------------------------------------------------------------------------------ progress

@dataclass(frozen=True)
class RunProgress:
    total: int
    done: int
    by_status: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    rate_per_s: float | None
    eta_s: float | None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


def run_progress(run: EvalRun) -> RunProgress:
    counts = dict(run.requests.values_list("status").annotate(n=Count("pk")).order_by())
    done = sum(counts.get(s, 0) for s in TERMINAL)
    agg = run.requests.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))
    rate = eta = None
    if run.started_at and done:
        end = run.finished_at or timezone.now()
        elapsed = max((end - run.started_at).total_seconds(), 1e-3)
        rate = done / elapsed
        eta = (run.total - done) / rate if rate else None
    return RunProgress(total=run.total, done=done, by_status=counts, input_tokens=agg["i"] or 0,
                       output_tokens=agg["o"] or 0, cost_usd=agg["c"] or Decimal(0), rate_per_s=rate, eta_s=eta)
