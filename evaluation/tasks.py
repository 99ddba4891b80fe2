"""Thin Celery tasks: ids in, one service call. Idempotent (rows are claimed with leases, ``run_engine``)."""

from __future__ import annotations

import time

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .runs import eval_chunk_process
from .runs.batch import batch_poll


@shared_task(**CHUNK_TASK_OPTIONS)
def eval_chunk_task(self, run_id: int, request_ids: list[int]) -> None:
    # an error retries the chunk (Celery's backoff); rows this attempt claimed stay leased, and the retry takes
    # them over after the lease (each takeover counts as a claim), so nothing is lost or written twice
    busy_requeue(self, run_id, busy=eval_chunk_process(run_id=run_id, request_ids=request_ids))


@shared_task(**CHUNK_TASK_OPTIONS)
def eval_direct_chunk_task(self, run_id: int, request_ids: list[int]) -> None:
    # a provider batch's rows that did not come back answered (errored, expired, missing, failed batch)
    busy_requeue(self, run_id, busy=eval_chunk_process(run_id=run_id, request_ids=request_ids, direct=True))


@shared_task(acks_late=True)
def eval_batch_poll_task(batch_id: int, token: str | None = None) -> None:
    """Check a provider batch; poll again later while it runs (the same chain ``token``). In-process (eager:
    ``evaluate --inline``) the wait is a sleep here, not a task scheduled on a broker."""
    while (delay := batch_poll(batch_id, token)) is not None:
        if not eval_batch_poll_task.app.conf.task_always_eager:
            eval_batch_poll_task.apply_async((batch_id, token), countdown=delay)
            return
        time.sleep(delay)
