"""A run's progress from counters kept on the run row: rows ended per final status, tokens and dollars.

The counters are added to in the transaction that ends rows (``progress_rows_ended``, called by the chunk
executor's store), so a concurrent chunk's rows are counted once its transaction commits, never twice and
never lost (``UPDATE … SET n = n + k`` takes the run row's lock). A rescore, which may change ended rows'
statuses, recounts them (``progress_counters_recount``). A progress poll then reads the run row, plus, while
rows are still open, one indexed count of the running ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, F, Sum

from run_engine.progress import RunTotals, rate_and_eta

from ..models import EvalRequest, EvalRun
from .tables import TERMINAL

# the run's counter of each final status
COUNTER_FIELDS: dict[str, str] = {status: f"done_{status}" for status in TERMINAL}
TOTAL_FIELDS = ("input_tokens", "output_tokens", "cost_usd")
PROGRESS_FIELDS = (*COUNTER_FIELDS.values(), *TOTAL_FIELDS)


def progress_rows_ended(rows: Sequence[EvalRequest], written: int) -> int:
    """Add rows the caller's transaction just ended (final status, tokens and cost set on them) to their runs'
    counters, in that transaction. ``written`` is how many of ``rows`` the guarded write kept (a row another
    claim had already ended is not written again); when it is fewer, which ones is not known here, so each
    run involved is recounted instead. Returns ``written``."""
    by_run: dict[int, list[EvalRequest]] = defaultdict(list)
    for row in rows:
        by_run[row.run_id].append(row)
    if written != len(rows):
        for run_id in sorted(by_run):
            progress_counters_recount(run_id)
        return written
    for run_id in sorted(by_run):  # a fixed order: two writers lock the runs the same way round
        ended = by_run[run_id]
        counts: dict[str, int] = defaultdict(int)
        for row in ended:
            counts[COUNTER_FIELDS[row.status]] += 1
        EvalRun.objects.filter(pk=run_id).update(
            **{name: F(name) + n for name, n in counts.items()},
            input_tokens=F("input_tokens") + sum(int(r.input_tokens or 0) for r in ended),
            output_tokens=F("output_tokens") + sum(int(r.output_tokens or 0) for r in ended),
            cost_usd=F("cost_usd") + sum((Decimal(r.cost_usd or 0) for r in ended), Decimal(0)),
        )
    return written


def progress_counters_recount(run_id: int) -> None:
    """Set the run's counters from its rows. The run row is locked first, so a chunk transaction that already
    added to them has committed (its rows are counted) and one that has not yet is counted only by its own
    addition after this one commits."""
    with transaction.atomic():
        list(EvalRun.objects.select_for_update().filter(pk=run_id).values_list("pk"))
        ended = EvalRequest.objects.filter(run_id=run_id, status__in=TERMINAL)
        counts = dict(ended.values_list("status").annotate(n=Count("pk")).order_by())
        sums = ended.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))
        EvalRun.objects.filter(pk=run_id).update(
            **{name: counts.get(status, 0) for status, name in COUNTER_FIELDS.items()},
            input_tokens=sums["i"] or 0,
            output_tokens=sums["o"] or 0,
            cost_usd=sums["c"] or Decimal(0),
        )


class RunProgress(RunTotals):
    """An evaluation run's progress (``run_engine.progress``)."""


def _running_counts(runs: Iterable[EvalRun]) -> dict[int, int]:
    """Running rows per run, for the runs whose rows have not all ended (one indexed query; none when every
    run is done)."""
    open_ids = [run.pk for run in runs if _done(run) < run.total]
    if not open_ids:
        return {}
    return dict(
        EvalRequest.objects.filter(run_id__in=open_ids, status=EvalRequest.Status.RUNNING)
        .values_list("run_id")
        .annotate(n=Count("pk"))
        .order_by()
    )


def _done(run: EvalRun) -> int:
    return sum(getattr(run, name) for name in COUNTER_FIELDS.values())


def _progress(run: EvalRun, running: int) -> RunProgress:
    ended = {status: getattr(run, name) for status, name in COUNTER_FIELDS.items()}
    done = sum(ended.values())
    counts: dict[str, Any] = {
        EvalRequest.Status.PENDING: max(run.total - done - running, 0),
        EvalRequest.Status.RUNNING: running,
        **ended,
    }
    rate, eta = rate_and_eta(run, done)
    return RunProgress(
        total=run.total,
        done=done,
        by_status={str(status): n for status, n in counts.items() if n},
        input_tokens=int(run.input_tokens),
        output_tokens=int(run.output_tokens),
        cost_usd=run.cost_usd or Decimal(0),
        rate_per_s=rate,
        eta_s=eta,
    )


def run_progress(run: EvalRun) -> RunProgress:
    """Rows done of the fixed total, by status, with tokens, dollars, rate and ETA: the run row's counters,
    plus one indexed count of running rows while some are open."""
    return _progress(run, _running_counts([run]).get(run.pk, 0))


def runs_progress(runs: Sequence[EvalRun]) -> list[RunProgress]:
    """``run_progress`` of each run, in one query at most (the runs list)."""
    running = _running_counts(runs)
    return [_progress(run, running.get(run.pk, 0)) for run in runs]
