"""Thin Celery tasks: ids in, one service call. Idempotent (rows are claimed with leases)."""

from __future__ import annotations

from celery import shared_task

CHUNK_FAILURE_RETRIES = 10  # an unexpected error (database gone, a bug) retries the chunk, then gives up


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def eval_chunk_task(self, run_id: int, request_ids: list[int], failures: int = 0) -> None:
    from .runs import eval_chunk_process

    try:
        busy = eval_chunk_process(run_id=run_id, request_ids=request_ids)
    except Exception as error:
        # rows this attempt claimed stay leased; the retry finds them busy and takes them over after the
        # lease (each takeover counts as a retry of the row), so nothing is lost or written twice
        if failures >= CHUNK_FAILURE_RETRIES or self.request.is_eager:
            raise
        raise self.retry(args=(run_id, request_ids), kwargs={"failures": failures + 1},
                         countdown=min(5 * 2 ** failures, 300), exc=error) from error
    if busy:  # rows held by another claim (e.g. a worker that died): look again after a while
        raise self.retry(args=(run_id, busy), kwargs={"failures": failures}, countdown=5)


@shared_task(acks_late=True)
def eval_run_dispatch_task(run_id: int) -> None:
    from .runs import eval_run_dispatch

    eval_run_dispatch(run_id=run_id)
