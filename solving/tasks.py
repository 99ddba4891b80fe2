"""Thin Celery tasks for solving runs: ids in, one service call. Idempotent (rows are claimed with leases)."""

from __future__ import annotations

from celery import shared_task

__all__ = ["solve_chunk_task", "solve_run_dispatch_task"]


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def solve_chunk_task(self, run_id: int, response_ids: list[int]) -> None:
    from .runs import solve_chunk_process

    busy = solve_chunk_process(run_id=run_id, response_ids=response_ids)
    if busy:  # rows held by another live claim (e.g. a worker that died): look again after a while
        raise self.retry(args=(run_id, busy), countdown=5)


@shared_task(acks_late=True)
def solve_run_dispatch_task(run_id: int) -> None:
    from .runs import solve_run_dispatch

    solve_run_dispatch(run_id=run_id)
