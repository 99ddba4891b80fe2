"""Thin Celery tasks for solving runs: ids in, one service call. Idempotent (rows are claimed with leases,
``run_engine``); chunks retry on errors like evaluation chunks do."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .runs import solve_chunk_process, solve_run_dispatch


@shared_task(**CHUNK_TASK_OPTIONS)
def solve_chunk_task(self, run_id: int, response_ids: list[int]) -> None:
    busy_requeue(self, run_id, busy=solve_chunk_process(run_id=run_id, response_ids=response_ids))


@shared_task(acks_late=True)
def solve_run_dispatch_task(run_id: int) -> None:
    solve_run_dispatch(run_id=run_id)
