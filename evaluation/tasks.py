"""Thin Celery tasks: ids in, one service call. Idempotent (rows are claimed with leases)."""

from __future__ import annotations

from celery import shared_task


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def eval_chunk_task(self, run_id: int, request_ids: list[int]) -> None:
    from .runs import eval_chunk_process

    busy = eval_chunk_process(run_id=run_id, request_ids=request_ids)
    if busy:  # rows held by another claim (e.g. a worker that died): look again after a while
        raise self.retry(args=(run_id, busy), countdown=5)


@shared_task(acks_late=True)
def eval_run_dispatch_task(run_id: int) -> None:
    from .runs import eval_run_dispatch

    eval_run_dispatch(run_id=run_id)
from .solve_tasks import *  # noqa: E402,F401,F403  (Celery discovers tasks.py)
