"""A solve run on the run engine (``run_engine.engine``), the same for both kinds: the row and run tables, and
dispatch, cancel, resume and finalize. Rows are claimed with leases (``claims`` ≤ 3 = one try plus two
infrastructure retries); chunks run ``solving.runs.execute.solve_chunk_process``.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from run_engine.engine import RowTable, RunTable, run_cancel, run_dispatch, run_resume

from ..models import SolveResponse, SolveRun

DEFAULT_OPTIONS = {"chunk_size": 5, "claim_lease_seconds": 600}
TERMINAL = SolveResponse.TERMINAL


def _chunk_task() -> Any:
    from ..tasks import solve_chunk_task  # the tasks module imports this package

    return solve_chunk_task


ROWS = RowTable(SolveResponse, terminal=TERMINAL, running=SolveResponse.Status.RUNNING)
RUNS = RunTable(
    SolveRun,
    rows="responses",
    row_table=ROWS,
    verb="solve_run",
    idle=(SolveRun.Status.CANCELLED, SolveRun.Status.COMPLETED, SolveRun.Status.GRADING),
    done=(SolveRun.Status.COMPLETED, SolveRun.Status.GRADING),
    done_message="Every response of this run has been returned.",
    chunk_task=_chunk_task,
    finalize=lambda run_id: solve_run_finalize(run_id=run_id),
    default_chunk_size=DEFAULT_OPTIONS["chunk_size"],
    taper=False,
)


def solve_run_dispatch(*, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row. Safe to call again (resume, watchdog)."""
    return run_dispatch(RUNS, run_id=run_id)


def solve_run_cancel(*, run: SolveRun, actor: Any = None) -> SolveRun:
    return run_cancel(RUNS, run=run, actor=actor)


def solve_run_resume(*, run: SolveRun, actor: Any = None) -> SolveRun:
    return run_resume(RUNS, run=run, actor=actor)


def solve_run_finalize(*, run_id: int) -> SolveRun | None:
    """Once every row is terminal: ``grading`` while a short/calc answer awaits its expert, else ``completed``."""
    with transaction.atomic():
        run = SolveRun.objects.select_for_update().get(pk=run_id)
        if run.status in (SolveRun.Status.CANCELLED, SolveRun.Status.FAILED):
            return None
        if run.responses.exclude(status__in=TERMINAL).exists():
            return None
        pending = run.responses.filter(grading=SolveResponse.Grading.PENDING).exists()
        status = SolveRun.Status.GRADING if pending else SolveRun.Status.COMPLETED
        if run.status == status:
            return run
        run.status = status
        run.finished_at = run.finished_at or timezone.now()
        run.save(update_fields=["status", "finished_at"])
    return run
