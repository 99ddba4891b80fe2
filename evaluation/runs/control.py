"""Dispatch, cancel and resume, through the one run engine."""

from __future__ import annotations

from typing import Any

from run_engine.engine import (
    RowTable,
    RunTable,
    run_cancel,
    run_dispatch,
    run_resume,
)

from ..models import EvalRequest, EvalRun
from .results import eval_run_finalize
from .tables import DEFAULT_OPTIONS, TERMINAL


def _chunk_task() -> Any:
    from ..tasks import eval_chunk_task  # the tasks module imports this package

    return eval_chunk_task


ROWS = RowTable(EvalRequest, terminal=TERMINAL, running=EvalRequest.Status.RUNNING)


RUNS = RunTable(
    EvalRun,
    rows="requests",
    row_table=ROWS,
    verb="eval_run",
    idle=(EvalRun.Status.CANCELLED, EvalRun.Status.PAUSED, EvalRun.Status.COMPLETED),
    done=(EvalRun.Status.COMPLETED,),
    done_message="The run is complete.",
    chunk_task=_chunk_task,
    finalize=lambda run_id: eval_run_finalize(run_id=run_id),
    default_chunk_size=DEFAULT_OPTIONS["chunk_size"],
    unqueued=EvalRun.Status.PAUSED,
)


def eval_run_dispatch(*, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row, and a poll for every open provider batch (``batch``).
    Safe to call again (resume, watchdog)."""
    from .batch import batch_polls_requeue  # batch builds on execution, which builds on this module

    queued = run_dispatch(RUNS, run_id=run_id)
    batch_polls_requeue(run_id)
    return queued


def eval_run_cancel(*, run: EvalRun, actor: Any = None) -> EvalRun:
    return run_cancel(RUNS, run=run, actor=actor)


def eval_run_resume(*, run: EvalRun, actor: Any = None) -> EvalRun:
    """Continue a cancelled, paused (by its budget: its reason is cleared) or interrupted run."""
    if run.status == EvalRun.Status.PAUSED:
        EvalRun.objects.filter(pk=run.pk).update(error="")
    return run_resume(RUNS, run=run, actor=actor)
