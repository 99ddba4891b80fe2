"""A chunk of requests: claimed under a lease, sent with bounded concurrency, stored and scored once."""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field
from django.db.models.options import Options
from django.utils import timezone

import llm
from llm import ImageInput, LLMRequest, LLMResult, OutputStatus, ProviderConfig
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter
from run_engine.engine import claim_applied, leases_renew, new_token, rows_claim, rows_held
from run_engine.rows import retries_left

from ..models import EvalRequest, EvalRun, ItemScore
from .attachments import AttachmentError, attachments_load
from .budget import budget_of, budget_pause, budget_room
from .cache import cached_sources, response_reuse, reuse_enabled, settings_digest
from .control import ROWS
from .estimate import row_estimate
from .progress import progress_rows_ended
from .request import build_request
from .results import eval_run_finalize
from .scores import score_of
from .tables import SCORE_FIELDS, TERMINAL

ACTIVE = (EvalRequest.Status.PENDING, EvalRequest.Status.RUNNING)
# a run in one of these claims nothing more (a pause is its budget's; both resume)
_STOPPED = (EvalRun.Status.CANCELLED, EvalRun.Status.PAUSED)
# each probe's loaded attachments, or why they could not be loaded (``attachments_load``)
_Images = dict[int, tuple[ImageInput, ...] | AttachmentError]


_RESULT_FIELDS = [
    "status",
    "attempts",
    "finish_reason",
    "provider_status",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_ms",
    "request_hash",
    "settings_hash",
    "cached_from",
    "error",
    "raw_output",
    "completed_at",
]


def _claim(
    request_ids: list[int], lease: int, token: str, rows: dict[int, EvalRequest]
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
        _store_results([(row, score_of(row)) for row in lost], token=None)
    return claim.claimed, claim.busy


def _store_results(done: list[tuple[EvalRequest, ItemScore]], *, token: str | None) -> int:
    """Write finished rows (result fields set) and their scores in the caller's transaction; only rows
    that are not terminal and, with ``token``, still held by that claim: a row is never written twice.
    Returns how many rows were written."""
    now = timezone.now()
    for row, item in done:
        row.completed_at = now
        row.status = item.status  # the scored status (unparseable, refusal, …) is the row's final status
    if connection.vendor == "postgresql":
        return progress_rows_ended(
            [row for row, _ in done], _store_results_postgres(done, token=token, now=now)
        )
    ids = [row.pk for row, _ in done]
    owned = (
        rows_held(ROWS, ids, token=token)
        if token is not None
        else EvalRequest.objects.filter(pk__in=ids).exclude(status__in=TERMINAL)
    ).select_for_update()
    keep = set(owned.order_by("pk").values_list("pk", flat=True))
    kept = [(row, item) for row, item in done if row.pk in keep]
    if kept:
        EvalRequest.objects.bulk_update([row for row, _ in kept], _RESULT_FIELDS)
        ItemScore.objects.bulk_create(
            [item for _, item in kept],
            update_conflicts=True,
            unique_fields=["request"],
            update_fields=SCORE_FIELDS,
        )
    return progress_rows_ended([row for row, _ in kept], len(kept))


# field → (SQL type of the array its values are sent in, cast to the column's type)
_RESULT_TYPES = {
    "status": ("text", ""),
    "attempts": ("text", "::jsonb"),
    "finish_reason": ("text", ""),
    "provider_status": ("text", ""),
    "input_tokens": ("bigint", ""),
    "output_tokens": ("bigint", ""),
    "cost_usd": ("numeric", ""),
    "latency_ms": ("bigint", ""),
    "request_hash": ("text", ""),
    "settings_hash": ("text", ""),
    "cached_from": ("bigint", ""),
    "error": ("text", ""),
    "raw_output": ("text", ""),
    "completed_at": ("timestamptz", ""),
}


_SCORE_TYPES = {
    "status": ("text", ""),
    "C": ("smallint", ""),
    "G": ("smallint", ""),
    "J": ("smallint", ""),
    "object_valid": ("boolean", ""),
    "field_valid": ("text", "::jsonb"),
    "canonical": ("text", "::jsonb"),
    "scored_at": ("timestamptz", ""),
}


_JSON_FIELDS = {"attempts", "field_valid", "canonical"}


def _column_arrays(objs: list[Any], types: dict[str, tuple[str, str]], *, now: Any) -> list[list[Any]]:
    arrays = []
    for name in types:
        if name == "cached_from":  # a foreign key: its id, never the related row
            arrays.append([o.cached_from_id for o in objs])
        elif name == "scored_at":
            arrays.append([now] * len(objs))
        elif name in _JSON_FIELDS:
            arrays.append([None if getattr(o, name) is None else json.dumps(getattr(o, name)) for o in objs])
        else:
            arrays.append([getattr(o, name) for o in objs])
    return arrays


def _column(meta: Options[Any], name: str) -> str:
    field = meta.get_field(name)
    assert isinstance(field, Field) and field.column, name  # a concrete column, never a reverse relation
    return field.column


def _store_results_postgres(done: list[tuple[EvalRequest, ItemScore]], *, token: str | None, now: Any) -> int:
    """One statement: a guarded ``UPDATE … FROM unnest(arrays) RETURNING`` of the rows feeding an
    ``INSERT … ON CONFLICT DO UPDATE`` of exactly their scores — the same rows and values as
    select_for_update + bulk_update + bulk_create, without compiling a CASE per row and field."""
    rows, scores = [row for row, _ in done], [item for _, item in done]
    req, sc = EvalRequest._meta, ItemScore._meta
    r_cols = [_column(req, name) for name in _RESULT_TYPES]
    s_cols = [_column(sc, name) for name in _SCORE_TYPES]
    r_arrays = ", ".join(["%s::bigint[]"] + [f"%s::{t}[]" for t, _ in _RESULT_TYPES.values()])
    s_arrays = ", ".join(["%s::bigint[]"] + [f"%s::{t}[]" for t, _ in _SCORE_TYPES.values()])
    r_set = ", ".join(
        f'"{c}" = v."{c}"{cast}' for c, (_, cast) in zip(r_cols, _RESULT_TYPES.values(), strict=True)
    )
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
        f'ON CONFLICT ("{request_id}") DO UPDATE SET {s_update}'
    )
    params: list[Any] = [[row.pk for row in rows], *_column_arrays(rows, _RESULT_TYPES, now=now), *TERMINAL]
    if token is not None:
        params.append(token)
    params += [[item.request_id for item in scores], *_column_arrays(scores, _SCORE_TYPES, now=now)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _call(row: EvalRequest, request: LLMRequest, config: ProviderConfig) -> tuple[EvalRequest, ItemScore]:
    """One provider call and its score; no database access (runs in a pool thread)."""
    config = replace(config, max_retries=retries_left(config.max_retries, row.claims))
    return result_applied(row, request.fingerprint(), llm.generate(request, config, limiter=shared_limiter()))


def result_applied(row: EvalRequest, fingerprint: str, result: LLMResult) -> tuple[EvalRequest, ItemScore]:
    """Give a row a provider result (a direct call's or a batch item's) and score it; no database access."""
    row.attempts, row.finish_reason, row.provider_status = (
        result.attempts_record(),
        result.finish_reason or "",
        result.status,
    )
    row.input_tokens, row.output_tokens = result.usage.input_tokens, result.usage.output_tokens
    row.cost_usd, row.latency_ms = Decimal(result.cost_usd), result.latency_ms
    row.request_hash, row.error = fingerprint, result.error[:2000]
    if result.status == OutputStatus.FAILED:
        row.status, row.raw_output = EvalRequest.Status.INFRA_MISSING, None
    else:
        row.status, row.raw_output = EvalRequest.Status.COMPLETED, result.text
    return row, score_of(row)


def _unsendable(row: EvalRequest, error: str) -> tuple[EvalRequest, ItemScore]:
    """A claimed row whose request cannot be built: nothing was sent, so it is not an answer (infra_missing)."""
    row.attempts, row.finish_reason, row.provider_status = [], "", OutputStatus.FAILED
    row.status, row.raw_output, row.error = EvalRequest.Status.INFRA_MISSING, None, error[:2000]
    return row, score_of(row)


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
    refilling once half of those have started (a chunk's first claim is one round, so its calls start
    soonest). So a row is claimed
    (``claims`` charged) only shortly before its call starts — a killed worker charges its calls in
    flight and at most ``threads`` queued ones, not its whole chunk — and an answer waits at most one
    refill (≤ 1 s) to be stored. Leases of slow calls are renewed while the worker lives; cancellation
    is checked at most once a second.

    The call threads outlive a chunk: each thread that runs chunk tasks (a prefork child's main thread, or
    each thread of a threads pool) keeps its own pool for the next chunk, so a chunk hand-over does not start
    and join ``threads`` threads (starting them one by one delayed a chunk's first round of calls).
    """

    _pools = threading.local()

    def __init__(self, run: EvalRun, lease: int, *, batch: bool = False) -> None:
        self.run, self.lease = run, lease
        self.batch = batch  # the rows go into provider batches (``batch``), priced at the batch discount
        self.token = new_token()
        self.configs = {c.pk: c for c in run.model_configs.all()}
        self.provider_configs = {pk: provider_config_for(c) for pk, c in self.configs.items()}
        self.settings_hashes = {pk: settings_digest(c) for pk, c in self.provider_configs.items()}
        self.reuse = reuse_enabled(run.options)
        self.budgeted = budget_of(run.options) is not None
        self.threads = _chunk_threads(list(self.configs.values()))
        self.cancel_checked = time.monotonic()

    def _prepare(
        self,
        queue: list[int],
        rows: dict[int, EvalRequest],
        images: _Images,
        *,
        want: int,
        slab: int,
    ) -> None:
        """Make sure the next ``want`` queued rows are loaded (row, probe, key, attachments), loading up to
        ``slab`` at a time; drop queued ids that are already terminal or gone."""
        while [pk for pk in queue[:want] if pk not in rows]:
            todo = [pk for pk in queue[:slab] if pk not in rows]
            loaded = {
                row.pk: row
                for row in EvalRequest.objects.filter(pk__in=todo)
                .exclude(status__in=TERMINAL)
                .select_related("probe", "probe__key")
                .defer(*_DEFERRED)
            }
            for row in loaded.values():
                row.model = self.configs[row.model_id]
            rows.update(loaded)
            if len(loaded) < len(todo):
                gone = set(todo) - set(loaded)
                queue[:] = [pk for pk in queue if pk not in gone]
            probes = {
                r.probe.pk: r.probe
                for r in loaded.values()
                if r.condition != "no_image" and r.probe.pk not in images
            }
            images.update(attachments_load(list(probes.values())))

    def _cancelled(self) -> bool:
        now = time.monotonic()
        if now - self.cancel_checked < 1.0:
            return False
        self.cancel_checked = now
        return EvalRun.objects.filter(pk=self.run.pk, status__in=_STOPPED).exists()

    def _refill(
        self,
        done: list[tuple[EvalRequest, ItemScore]],
        queue: list[int],
        free: int,
        busy: list[int],
        rows: dict[int, EvalRequest],
        images: _Images,
    ) -> list[EvalRequest]:
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
                stop = False
                if self.budgeted:
                    take, stop = self._affordable(take, rows, images)
                del queue[: len(take)]
                got, held = _claim(take, self.lease, self.token, rows) if take else ([], [])
                if self.budgeted and got:  # the in-flight reservation of the rows just claimed
                    EvalRequest.objects.bulk_update([rows[pk] for pk in got], ["estimate_usd"])
                claimed += got
                busy += held
                if stop:  # the budget is spent: the rest of the chunk stays pending
                    queue.clear()
        return [rows[pk] for pk in claimed]

    def _affordable(
        self, take: list[int], rows: dict[int, EvalRequest], images: _Images
    ) -> tuple[list[int], bool]:
        """The front of ``take`` the run's budget still pays for (``budget``), each row's estimate set on it;
        and whether the budget stopped the chunk (the run is then paused)."""
        room = budget_room(self.run.pk)
        if room is None:  # the budget was removed
            return take, False
        budget, spent, in_flight = room
        reserved = spent + in_flight
        requests: dict[int, LLMRequest | None] = {}
        for pk in take:
            row = rows[pk]
            attachments = images.get(row.probe.pk, ()) if row.condition != "no_image" else ()
            requests[pk] = (
                None
                if isinstance(attachments, AttachmentError)
                else build_request(row, self.run.seed, attachments)
            )
        # with the response cache on, a row an earlier answer will serve costs nothing
        free = set()
        if self.reuse:
            keys = {
                pk: (request.fingerprint(), self.settings_hashes[rows[pk].model_id])
                for pk, request in requests.items()
                if request is not None
            }
            found = cached_sources(self.run.pk, list(keys.values()))
            free = {pk for pk, key in keys.items() if key in found}
        for n, pk in enumerate(take):
            row, request = rows[pk], requests[pk]
            estimate = (
                Decimal(0)
                if request is None or pk in free
                else row_estimate(request, self.provider_configs[row.model_id], batch=self.batch)
            )
            if spent < 0 or reserved + estimate > budget:
                budget_pause(self.run.pk, budget=budget, spent=spent, in_flight=in_flight, next_usd=estimate)
                return take[:n], True
            row.estimate_usd, reserved = estimate, reserved + estimate
        return take, False

    def _reused(
        self, sendable: list[tuple[EvalRequest, LLMRequest]], done: list[tuple[EvalRequest, ItemScore]]
    ) -> list[tuple[EvalRequest, LLMRequest]]:
        """With the run's response cache on, give each row an earlier run's completed response to the same
        request and settings (``cache``), added to ``done`` scored; return the rows still to call."""
        if not self.reuse or not sendable:
            return sendable
        sources = cached_sources(
            self.run.pk, [(request.fingerprint(), row.settings_hash) for row, request in sendable]
        )
        calls = []
        for row, request in sendable:
            source = sources.get((request.fingerprint(), row.settings_hash))
            if source is None:
                calls.append((row, request))
            else:
                done.append((response_reuse(row, request, source), score_of(row)))
        return calls

    def requests_of(
        self,
        claimed: list[EvalRequest],
        images: _Images,
        done: list[tuple[EvalRequest, ItemScore]],
    ) -> list[tuple[EvalRequest, LLMRequest]]:
        """The requests of claimed rows still to send. A row whose request cannot be built (its images
        failed to load) and, with the response cache on, a row an earlier answer serves are added to
        ``done``, scored."""
        sendable = []
        for row in claimed:
            attachments = images.get(row.probe.pk, ()) if row.condition != "no_image" else ()
            if isinstance(attachments, AttachmentError):
                done.append(_unsendable(row, str(attachments)))
                continue
            row.settings_hash = self.settings_hashes[row.model_id]
            sendable.append((row, build_request(row, self.run.seed, attachments)))
        return self._reused(sendable, done)

    def _pool(self) -> ThreadPoolExecutor:
        """This thread's call pool of ``threads`` threads (a new one after a fork or another size)."""
        key = (os.getpid(), self.threads)
        if getattr(self._pools, "key", None) != key:
            if getattr(self._pools, "key", (None,))[0] == key[0]:  # same process, another size: retire it
                self._pools.pool.shutdown(wait=False)
            self._pools.pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="eval-call")
            self._pools.key = key
        return self._pools.pool

    def run_chunk(self, request_ids: list[int]) -> list[int]:
        queue: list[int] = list(request_ids)
        busy: list[int] = []
        rows: dict[int, EvalRequest] = {}  # loaded ahead of their claim
        images: _Images = {}
        in_flight: dict[Future, int] = {}
        done: list[tuple[EvalRequest, ItemScore]] = []
        errors: list[BaseException] = []
        # claimed requests queued behind the busy threads (a pool's worth), refilled once half have started,
        # so calls never wait for the database work of a refill
        capacity, refill = 2 * self.threads, max(self.threads // 2, 1)
        stored = renewed = time.monotonic()
        started = False
        pool = self._pool()
        try:
            while queue or in_flight or done:
                # the chunk's first claim is one round, so its calls start soonest
                free = (capacity - len(in_flight) if queue else 0) if started else self.threads
                started = True
                now = time.monotonic()
                # one transaction serves several rows: refill once the queued requests have started, store
                # answers in batches, but never hold an answer for more than a second
                if (free and (free >= refill or not in_flight)) or (
                    done and (not in_flight or len(done) >= refill or now - stored >= 1.0)
                ):
                    unsendable: list[tuple[EvalRequest, ItemScore]] = []  # stored with the next refill
                    claimed = self._refill(done, queue, free, busy, rows, images)
                    for row, request in self.requests_of(claimed, images, unsendable):
                        in_flight[pool.submit(_call, row, request, self.provider_configs[row.model_id])] = (
                            row.pk
                        )
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
                    error = future.exception()
                    if error is not None:
                        errors.append(error)
                    else:
                        done.append(future.result())
                if in_flight and now - renewed >= self.lease / 3:  # slow calls: keep their leases alive
                    leases_renew(ROWS, in_flight.values(), token=self.token)
                    renewed = now
        finally:  # a chunk ends only once its calls have (their threads serve the next chunk)
            wait(in_flight)
        if errors:  # those rows stay running under this claim; after the lease a later claim retries them
            raise errors[0]
        return busy


def eval_chunk_process(*, run_id: int, request_ids: list[int], direct: bool = False) -> list[int]:
    """Execute the chunk with up to EVAL_CHUNK_THREADS provider calls in flight; store each answer and
    score once; return the ids another live claim still holds (the task retries those later). A
    cancelled or paused run claims nothing more. In a batch-mode run (``batch``) the rows of models whose
    provider has a batch API are submitted as provider batches instead, unless ``direct`` (the fallback of
    a batch's failed items); rows an open batch holds are left to it."""
    from .batch import batch_chunk_submit, batch_held, batch_mode, batch_split

    run = EvalRun.objects.only("pk", "status", "seed", "options").get(pk=run_id)
    if run.status in _STOPPED:
        return []
    busy: list[int] = []
    if batch_mode(run.options):
        held = batch_held(run_id, request_ids)
        request_ids = [pk for pk in request_ids if pk not in held]
        if not direct:
            batched, request_ids = batch_split(run, request_ids)
            if batched:
                busy += batch_chunk_submit(run, batched)
    if request_ids:
        busy += _ChunkExecutor(run, int(run.options.get("claim_lease_seconds", 300))).run_chunk(request_ids)
    if not busy and not EvalRequest.objects.filter(run_id=run_id, status__in=ACTIVE).exists():
        eval_run_finalize(run_id=run_id)
    return busy


_DEFERRED = (
    "raw_output",
    "error",
    "probe__raw_view",
    "probe__gold_view",
    "probe__metadata",
    "probe__key__native_query",
    "probe__key__displays",
    "probe__key__assets",
)
