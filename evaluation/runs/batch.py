"""Provider batch APIs as a run's execution mode (``options["execution"] == "batch"``).

A chunk's rows for a model whose provider has a batch API (``llm.batch``: OpenAI Batch, Anthropic Message
Batches, Gemini batch mode; about half the price, answered within 24 h) are claimed as usual, built into the
same requests a direct call sends, and submitted as one provider batch per model, recorded as a
``ProviderBatch`` that holds them under its claim token. A poll task asks the provider for progress until the
batch ends, then maps each item back to its row by custom id, scores and stores it exactly like a direct
answer. Items that errored, expired, were cancelled or are missing, and every row of a batch that failed or
could not be submitted, are released and sent to direct calls (``eval_direct_chunk_task``), where the claim
count keeps them within the retry budget. Rows of other providers in a batch-mode run go to direct calls.

Rows held by an open batch are never claimed by a chunk (``batch_held``): the batch owns them until it is
collected, however long the provider takes.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from llm import LLMRequest, OutputStatus, ProviderConfig, ProviderError
from llm import batch as provider_batches
from models_registry.providers import provider_config_for
from run_engine.engine import new_token

from ..models import EvalRequest, EvalRun, ItemScore, ProviderBatch
from .execution import _DEFERRED, ACTIVE, _ChunkExecutor, _store_results, result_applied
from .results import eval_run_finalize
from .tables import TERMINAL

log = logging.getLogger(__name__)

POLL_SECONDS = 60  # between two status checks of a running batch (option ``batch_poll_seconds``)
SUBMIT_LEASE_SECONDS = 1800  # a claim while the batch is built and uploaded; the batch then holds the rows


def batch_mode(options: dict[str, Any]) -> bool:
    return options.get("execution") == "batch"


def poll_seconds(options: dict[str, Any]) -> float:
    return max(float(options.get("batch_poll_seconds", POLL_SECONDS)), 0.0)


def custom_id(row_pk: int) -> str:
    return f"r{row_pk}"


def batch_held(run_id: int, ids: list[int]) -> set[int]:
    """The rows among ``ids`` an open batch of the run holds (claimed under its token and still running)."""
    tokens = list(
        ProviderBatch.objects.filter(run_id=run_id, collected=False).values_list("claim_token", flat=True)
    )
    if not tokens or not ids:
        return set()
    return set(
        EvalRequest.objects.filter(
            pk__in=ids, claim_token__in=tokens, status=EvalRequest.Status.RUNNING
        ).values_list("pk", flat=True)
    )


def batch_split(run: EvalRun, ids: list[int]) -> tuple[list[int], list[int]]:
    """(rows whose model's provider has a batch API, the other rows), in the order given."""
    configs = {c.pk: provider_config_for(c) for c in run.model_configs.all()}
    batchable = {pk for pk, config in configs.items() if provider_batches.batch_supported(config)}
    model_of = dict(EvalRequest.objects.filter(pk__in=ids).values_list("pk", "model_id"))
    chosen = [pk for pk in ids if model_of.get(pk) in batchable]
    chosen_set = set(chosen)
    return chosen, [pk for pk in ids if pk not in chosen_set]


def batch_chunk_submit(run: EvalRun, request_ids: list[int]) -> list[int]:
    """Claim the rows, submit one provider batch per model, record it and queue its poll. Returns the ids
    another live claim holds. Unsendable rows and reused responses are stored at once, like a direct chunk's."""
    lease = max(int(run.options.get("claim_lease_seconds", 300)), SUBMIT_LEASE_SECONDS)
    executor = _ChunkExecutor(run, lease, batch=True)
    queue: list[int] = list(request_ids)
    busy: list[int] = []
    rows: dict[int, EvalRequest] = {}
    images: dict[int, Any] = {}
    claimed = executor._refill([], queue, len(queue), busy, rows, images)
    done: list[tuple[EvalRequest, ItemScore]] = []
    sendable = executor.requests_of(claimed, images, done)
    by_model: dict[int, list[tuple[EvalRequest, LLMRequest]]] = defaultdict(list)
    for row, request in sendable:
        by_model[row.model_id].append((row, request))
    batches, released = [], []
    for model_id, items in by_model.items():
        config = executor.provider_configs[model_id]
        record = ProviderBatch(
            run_id=run.pk,
            model_id=model_id,
            request_ids=[row.pk for row, _ in items],
            claim_token=executor.token,
            total=len(items),
        )
        try:
            record.external_id = provider_batches.batch_submit(
                [(custom_id(row.pk), request) for row, request in items], config
            )
        except ProviderError as exc:  # nothing was queued at the provider: these rows are called directly
            record.state, record.collected, record.ended_at = ProviderBatch.State.FAILED, True, timezone.now()
            record.error, record.fallback = f"submit failed: {exc}"[:2000], len(items)
            released += [row.pk for row, _ in items]
        for row, request in items:
            row.request_hash = request.fingerprint()
        batches.append(record)
    with transaction.atomic():
        if done:
            _store_results(done, token=executor.token)
        EvalRequest.objects.bulk_update(
            [row for row, _ in sendable if row.pk not in set(released)], ["request_hash", "settings_hash"]
        )
        ProviderBatch.objects.bulk_create(batches)
        _release(released, token=executor.token)
        opened = [b.pk for b in batches if not b.collected]
        transaction.on_commit(lambda: _queue_polls(run.pk, opened))
        if released:
            transaction.on_commit(lambda: direct_dispatch(run.pk, released))
    return busy


_PROGRESS_FIELDS = ["polls", "checked_at", "error", "total", "succeeded", "errored"]


def batch_poll(batch_pk: int, token: str | None = None) -> float | None:
    """Check one open batch: record its progress, and once it has ended collect its results (store the
    answered rows, send the others to direct calls). Returns the seconds until the next check, or None once
    the batch is collected (or another poll holds it, or it is gone, or ``token`` names a poll chain a
    requeue has replaced)."""
    with transaction.atomic():
        batch = (
            ProviderBatch.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("model", "run")
            .filter(pk=batch_pk, collected=False)
            .first()
        )
        if batch is None or (token is not None and batch.poll_token != token):
            return None
        run, config = batch.run, provider_config_for(batch.model)
        batch.polls, batch.checked_at = batch.polls + 1, timezone.now()
        status = _poll_status(batch, run, config)
        if status is None:  # the provider is unwell: ask again later
            batch.save(update_fields=["polls", "checked_at", "error"])
            return poll_seconds(run.options)
        batch.total = status.total or batch.total
        batch.succeeded, batch.errored = status.succeeded, status.errored
        if status.state == "running":
            batch.error = ""
            results = None
        else:
            results = _ended_results(batch, config, status)
        if results is None:  # still running, or its results could not be read yet
            batch.save(update_fields=_PROGRESS_FIELDS)
            return poll_seconds(run.options)
        _collect_ended(batch, run, status, results)
    return None


def _poll_status(
    batch: ProviderBatch, run: EvalRun, config: ProviderConfig
) -> provider_batches.BatchStatus | None:
    """The batch's state at the provider, cancelling it first when the run was cancelled. A provider error
    is recorded on the batch: a retryable one gives None (ask again later), any other a failed status."""
    try:
        if run.status == EvalRun.Status.CANCELLED:
            provider_batches.batch_cancel(batch.external_id, config)
        return provider_batches.batch_status(batch.external_id, config)
    except ProviderError as exc:
        batch.error = str(exc)[:2000]
        if exc.retryable:
            return None
        return provider_batches.BatchStatus(
            state="failed", total=batch.total, succeeded=0, errored=0, error=str(exc)
        )


def _ended_results(
    batch: ProviderBatch, config: ProviderConfig, status: provider_batches.BatchStatus
) -> dict[str, Any] | None:
    """The results of an ended batch (none for a failed one). A provider error is recorded on the batch: a
    retryable one gives None (read them at the next check), any other no results."""
    if status.state == "failed":
        return {}
    try:
        return provider_batches.batch_results(batch.external_id, config)
    except ProviderError as exc:
        batch.error = f"results: {exc}"[:2000]
        return None if exc.retryable else {}


def _collect_ended(
    batch: ProviderBatch, run: EvalRun, status: provider_batches.BatchStatus, results: dict[str, Any]
) -> None:
    """Store what the ended batch answered, mark it collected, then send its released rows to direct calls
    (unless the run is cancelled or paused) or, when nothing is left active, finalize the run."""
    answered, released = _collect(batch, results)
    batch.state = status.state
    batch.error = (status.error or batch.error)[:2000]
    batch.collected, batch.ended_at = True, timezone.now()
    batch.answered, batch.fallback = answered, len(released)
    batch.save()
    if released and run.status not in (EvalRun.Status.CANCELLED, EvalRun.Status.PAUSED):
        transaction.on_commit(lambda: direct_dispatch(run.pk, released))
    elif not EvalRequest.objects.filter(run_id=run.pk, status__in=ACTIVE).exists():
        transaction.on_commit(lambda: eval_run_finalize(run_id=run.pk))


def _collect(batch: ProviderBatch, results: dict[str, Any]) -> tuple[int, list[int]]:
    """Store the rows the batch answered; release the others. Returns (answered, released ids)."""
    rows = list(
        EvalRequest.objects.filter(pk__in=batch.request_ids, claim_token=batch.claim_token)
        .exclude(status__in=TERMINAL)
        .select_related("probe", "probe__key")
        .defer(*_DEFERRED)
    )
    done, released = [], []
    for row in rows:
        result = results.get(custom_id(row.pk))
        if result is None or result.status == OutputStatus.FAILED:
            released.append(row.pk)
            continue
        done.append(result_applied(row, row.request_hash, result))  # the fingerprint taken at submit
    if done:
        _store_results(done, token=batch.claim_token)
    _release(released, token=batch.claim_token)
    return len(done), released


def _release(ids: list[int], *, token: str) -> None:
    """Give rows back (pending, unclaimed, their claim count kept) so a direct chunk may claim them."""
    if ids:
        EvalRequest.objects.filter(pk__in=ids, claim_token=token).exclude(status__in=TERMINAL).update(
            status=EvalRequest.Status.PENDING, claim_token="", claimed_at=None, estimate_usd=None
        )


def direct_dispatch(run_id: int, ids: list[int]) -> None:
    from ..tasks import eval_direct_chunk_task  # the tasks module imports this package

    eval_direct_chunk_task.delay(run_id, ids)


def _queue_polls(run_id: int, batch_ids: list[int]) -> None:
    """Start one poll chain per batch; a chain started earlier for the same batch stops at its next check."""
    from ..tasks import eval_batch_poll_task

    run = EvalRun.objects.only("options").get(pk=run_id)
    for pk in batch_ids:
        token = new_token()
        ProviderBatch.objects.filter(pk=pk).update(poll_token=token)
        eval_batch_poll_task.apply_async((pk, token), countdown=poll_seconds(run.options))


def batch_polls_requeue(run_id: int) -> int:
    """Queue a poll for every open batch of the run (a resume, or a broker that lost its scheduled polls)."""
    open_ids = list(ProviderBatch.objects.filter(run_id=run_id, collected=False).values_list("pk", flat=True))
    if open_ids:
        _queue_polls(run_id, open_ids)
    return len(open_ids)


SHOWN_BATCHES = 20


def run_batches(run: EvalRun) -> dict[str, Any] | None:
    """What the run page shows of a batch-mode run's provider batches: totals over all of them (one aggregate)
    and the open ones first, then the latest, at most ``SHOWN_BATCHES``. None for a direct run."""
    if not batch_mode(run.options):
        return None
    batches = ProviderBatch.objects.filter(run=run)
    totals = batches.aggregate(
        batches=Count("pk"),
        open=Count("pk", filter=Q(collected=False)),
        items=Coalesce(Sum("total"), 0),
        answered=Coalesce(Sum("answered"), 0),
        fallback=Coalesce(Sum("fallback"), 0),
    )
    shown = list(
        batches.select_related("model").defer("request_ids").order_by("collected", "-pk")[:SHOWN_BATCHES]
    )
    return {"totals": totals, "shown": shown}


__all__ = [
    "batch_mode",
    "batch_held",
    "batch_split",
    "batch_chunk_submit",
    "batch_poll",
    "batch_polls_requeue",
    "run_batches",
    "direct_dispatch",
]
