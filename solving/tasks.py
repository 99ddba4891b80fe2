"""Thin Celery tasks for solve runs: ids in, one service call. Idempotent (rows are claimed with leases,
``run_engine``); chunks retry on errors like evaluation chunks do."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .runs.execute import solve_chunk_process


@shared_task(**CHUNK_TASK_OPTIONS)
def solve_chunk_task(self, run_id: int, response_ids: list[int]) -> None:
    busy_requeue(self, run_id, busy=solve_chunk_process(run_id=run_id, response_ids=response_ids))
