"""Thin Celery tasks: ids in, one service call. Idempotent (rows are claimed with leases, ``run_engine``)."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .runs import eval_chunk_process, eval_run_dispatch


@shared_task(**CHUNK_TASK_OPTIONS)
def eval_chunk_task(self, run_id: int, request_ids: list[int]) -> None:
    # an error retries the chunk (Celery's backoff); rows this attempt claimed stay leased, and the retry takes
    # them over after the lease (each takeover counts as a claim), so nothing is lost or written twice
    busy_requeue(self, run_id, busy=eval_chunk_process(run_id=run_id, request_ids=request_ids))


@shared_task(acks_late=True)
def eval_run_dispatch_task(run_id: int) -> None:
    eval_run_dispatch(run_id=run_id)
