"""The one run engine: rows planned up front, claimed with leases, infrastructure retries bounded, runs
dispatched, cancelled and resumed the same way for drafts, compile runs, evaluations and solving.

A *row* is one unit of work (an evaluation request, a solving response, a draft, a compile chunk). It carries ``status``,
``claims`` (times a worker took it), ``claim_token`` and ``claimed_at``. A worker claims rows with one locking
read that skips rows another transaction holds (``SELECT … FOR UPDATE SKIP LOCKED``) and one UPDATE. A row is

- *terminal* once it has its answer: never claimed again, never written twice;
- *busy* while another claim's lease is live (the chunk is queued again later);
- *exhausted* when ``MAX_CLAIMS`` claims died without an answer: the caller finishes it as "infrastructure
  missing" — the fixed denominator keeps it, it is not an answer;
- *claimed* otherwise: ``claims`` goes up by one, the token and time are set.

A claim writes a row's answer only while it still holds the row (``rows_held``), keeps a slow row's lease alive
(``leases_renew``) and may end its lease at once when it gives up (``lease_release``).

Chunk tasks retry on unexpected errors with Celery's own backoff (``CHUNK_TASK_OPTIONS``); rows a died worker
had claimed are taken over after their lease, each takeover counting as a claim. Rows another live claim holds
are looked at again as a new task (``busy_requeue``), the one way every chunk task waits for a lease.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import models, transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from audit.services import event_record
from physalign_site.errors import ApplicationError

from .rows import MAX_CLAIMS

BUSY_RETRY_SECONDS = 5  # how soon rows held by another live claim are looked at again

# Celery options of every chunk task: an unexpected error (database gone, a bug) retries the chunk with
# exponential backoff and jitter (5 s, 10 s, … capped at 5 min), ten times, then gives up.
CHUNK_TASK_OPTIONS: dict[str, Any] = {
    "bind": True,
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (Exception,),
    "retry_backoff": 5,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 10,
}


def new_token() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class RowTable:
    """How the engine reads one kind of row."""

    model: type[models.Model]
    terminal: tuple[str, ...]
    running: (
        str | None
    )  # the status a claimed row takes; None: it keeps its status, the lease marks the claim


@dataclass
class Claim:
    claimed: list[int] = field(default_factory=list)
    busy: list[int] = field(default_factory=list)
    exhausted: list[int] = field(default_factory=list)
    token: str = ""
    at: Any = None


def rows_claim(table: RowTable, ids: Iterable[int], *, lease_seconds: int, token: str | None = None) -> Claim:
    """Claim every claimable row among ``ids``; runs inside the caller's transaction, which then holds the
    locks (so the caller finishes exhausted rows, or stores answers, before another worker can look)."""
    ids = list(ids)
    now = timezone.now()
    claim = Claim(token=token or new_token(), at=now)
    manager = table.model._default_manager
    found = {
        pk: (status, claims, claimed_at)
        for pk, status, claims, claimed_at in manager.select_for_update(skip_locked=True)
        .filter(pk__in=ids)
        .order_by()
        .values_list("pk", "status", "claims", "claimed_at")
    }
    for pk in ids:
        if pk not in found:  # locked by another transaction right now
            claim.busy.append(pk)
            continue
        status, claims, claimed_at = found[pk]
        if status in table.terminal:
            continue
        if (
            claimed_at is not None
            and claimed_at > now - timedelta(seconds=lease_seconds)
            and (table.running is None or status == table.running)
        ):
            claim.busy.append(pk)
        elif claims >= MAX_CLAIMS:  # three claims died without an answer: not an answer
            claim.exhausted.append(pk)
        else:
            claim.claimed.append(pk)
    if claim.claimed:
        update: dict[str, Any] = {"claim_token": claim.token, "claimed_at": now, "claims": F("claims") + 1}
        if table.running is not None:
            update["status"] = table.running
        manager.filter(pk__in=claim.claimed).update(**update)
    return claim


def _unfinished(table: RowTable, ids: Iterable[int], token: str) -> Any:
    rows = table.model._default_manager.filter(pk__in=list(ids), claim_token=token)
    if table.running is not None:
        return rows.filter(status=table.running)
    return rows.exclude(status__in=table.terminal)


def rows_held(table: RowTable, ids: Iterable[int], *, token: str) -> Any:
    """The rows among ``ids`` that the claim ``token`` still holds and that have no answer yet: the only rows
    it may write, so that a row is never written twice (a claim taken over writes nothing)."""
    return _unfinished(table, ids, token)


def leases_renew(table: RowTable, ids: Iterable[int], *, token: str) -> int:
    """Keep the leases of rows the claim ``token`` still works on alive; returns how many it still holds
    (fewer: another claim took some over, this worker having been presumed dead)."""
    return int(_unfinished(table, ids, token).update(claimed_at=timezone.now()))


def lease_release(table: RowTable, ids: Iterable[int], *, token: str) -> int:
    """End the claim's lease at once (it gave up after an error): the next claim takes the rows over without
    waiting, and counts a claim as any takeover does."""
    return int(_unfinished(table, ids, token).update(claimed_at=None))


def claim_applied(row: Any, claim: Claim, table: RowTable) -> None:
    """Give an already loaded row the fields its claim just wrote."""
    row.claim_token, row.claimed_at, row.claims = claim.token, claim.at, row.claims + 1
    if table.running is not None:
        row.status = table.running


TAPER_FLOOR = 50  # the last chunks of a tapered run hold at most this many rows


def chunk_ids(ids: list[int], size: int, *, taper: bool = True) -> list[list[int]]:
    """Consecutive chunks of ``size`` ids. With ``taper``, the last ones shrink (a quarter of what remains,
    down to ``size // 4`` but at most ``TAPER_FLOOR``) so the workers run out of work at nearly the same time
    instead of one worker finishing a whole last chunk alone (a large chunk's quarter would still leave
    the others idle for a long last chunk)."""
    size = max(size, 1)
    if not taper:
        return [ids[start : start + size] for start in range(0, len(ids), size)]
    floor = max(min(size // 4, TAPER_FLOOR), 1)
    chunks, start = [], 0
    while start < len(ids):
        step = min(size, max(-(-(len(ids) - start) // 4), floor))
        chunks.append(ids[start : start + step])
        start += step
    return chunks


@dataclass(frozen=True)
class RunTable:
    """How the engine drives one kind of run: its rows, its statuses, its task and its last step."""

    model: type[models.Model]
    rows: str  # related name of the rows on the run
    row_table: RowTable
    verb: str  # audit event prefix, e.g. "eval_run"
    idle: tuple[str, ...]  # run statuses in which dispatch queues nothing
    done: tuple[str, ...]  # run statuses a resume refuses (every row has its answer)
    done_message: str
    chunk_task: Callable[[], Any]  # returns the Celery task (imported late: tasks import the services)
    finalize: Callable[[int], Any]
    default_chunk_size: int
    taper: bool = True
    options: str | None = (
        "options"  # the run's JSON field that may set "chunk_size" (None: always the default)
    )
    started: str | None = "started_at"  # the field the first dispatch stamps (None: the run has none)
    # the status a run takes when its tasks could not be queued (the broker unreachable): resumable, and idle
    # where the table has such a status (evaluation's "paused"), else back to "queued"
    unqueued: str = "queued"

    def chunk_size(self, run: Any) -> int:
        if self.options is None:
            return self.default_chunk_size
        return int((getattr(run, self.options) or {}).get("chunk_size", self.default_chunk_size))


def run_dispatch(table: RunTable, *, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row. Safe to call again (resume, watchdog)."""
    run_model = table.model._default_manager
    run: Any = run_model.get(pk=run_id)  # a run row of table.model (status, options, its rows)
    if run.status in table.idle:
        return 0
    if table.started is not None:
        run_model.filter(pk=run_id, **{f"{table.started}__isnull": True}).update(
            **{table.started: timezone.now()}
        )
    # never over a run that became idle meanwhile (its last chunk finished it, or it was cancelled)
    if not run_model.filter(pk=run_id).exclude(status__in=table.idle).update(status="running"):
        return 0
    ids = list(
        getattr(run, table.rows)
        .exclude(status__in=table.row_table.terminal)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    task = table.chunk_task()
    try:
        for chunk in chunk_ids(ids, table.chunk_size(run), taper=table.taper):
            task.delay(run_id, chunk)
    except (BrokerUnreachable, OSError) as error:
        _unqueued(table, run_id, error)
    if not ids:
        table.finalize(run_id)
    return len(ids)


class QueueUnavailable(ApplicationError):
    """The task queue's broker could not be reached while a run's tasks were queued: the run is kept, every row
    as it was (rows claim themselves, so a chunk queued before the failure and queued again on resume runs each
    row once), in a resumable status that says why."""

    status_code = 503


def _unqueued(table: RunTable, run_id: int, error: Exception) -> None:
    message = (
        f"The task queue could not be reached ({error}), so the run's work was not queued; nothing is lost. "
        "Resume the run when the queue (Redis) is back."
    )
    changes: dict[str, Any] = {"status": table.unqueued}
    if any(f.name == "error" for f in table.model._meta.get_fields()):
        changes["error"] = message[:2000]
    table.model._default_manager.filter(pk=run_id).update(**changes)
    raise QueueUnavailable(
        f"Run {run_id} is kept ({table.unqueued}): {message}",
        code="queue_unavailable",
        extra={"run": run_id, "status": table.unqueued},
    ) from error


@transaction.atomic
def run_cancel(table: RunTable, *, run: Any, actor: Any = None) -> Any:
    if run.status not in ("queued", "running"):
        raise ApplicationError("Only a queued or running run can be cancelled.", code="not_running")
    table.model._default_manager.filter(pk=run.pk).update(status="cancelled")
    event_record(actor=actor, verb=f"{table.verb}.cancel", obj=run)
    run.refresh_from_db()
    return run


def run_resume(table: RunTable, *, run: Any, actor: Any = None) -> Any:
    if run.status in table.done:
        raise ApplicationError(table.done_message, code="complete")
    with transaction.atomic():
        table.model._default_manager.filter(pk=run.pk).update(status="running", finished_at=None)
        event_record(actor=actor, verb=f"{table.verb}.resume", obj=run)
    run_dispatch(table, run_id=run.pk)
    run.refresh_from_db()
    return run


def busy_requeue(task: Any, *args: Any, busy: list[int]) -> None:
    """Rows another live claim holds (e.g. of a worker that died) are looked at again after a while, as a new
    task: waiting for a lease is not a failure and does not use up the chunk's retries."""
    if busy:
        task.apply_async((*args, busy), countdown=BUSY_RETRY_SECONDS)
