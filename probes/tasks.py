"""Thin Celery tasks: ids in, one service call."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .releases import release_zip_build
from .services import compile_chunks_process, compile_run_dispatch


@shared_task(acks_late=True)
def compile_run_task(run_id: int) -> None:
    """Plan the run and queue one ``compile_chunk_task`` per chunk."""
    compile_run_dispatch(run_id=run_id)


@shared_task(**CHUNK_TASK_OPTIONS)
def compile_chunk_task(self, run_id: int, chunk_ids: list[int]) -> None:
    """A chunk of a compile run (the engine queues one per task). An error retries with Celery's backoff and
    takes the chunk over at once; a chunk another live claim holds is looked at again as a new task (a
    redelivered message, or a worker that died: its lease runs out and this task takes the chunk over)."""
    busy_requeue(self, run_id, busy=compile_chunks_process(run_id=run_id, chunk_ids=chunk_ids))


@shared_task(acks_late=True)
def release_zip_task(release_pk: int) -> None:
    release_zip_build(release_pk=release_pk)


@shared_task(acks_late=True)
def release_hf_task(release_pk: int, actor_pk: int | None = None) -> None:
    from .exports.hf import release_hf_build  # the exports build on the services this module imports

    release_hf_build(release_pk=release_pk, actor_pk=actor_pk)
