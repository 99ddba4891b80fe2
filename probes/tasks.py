"""Thin Celery tasks: ids in, one service call."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import BUSY_RETRY_SECONDS

from .releases import release_zip_build
from .services import compile_chunk_execute, compile_run_dispatch


@shared_task(acks_late=True)
def compile_run_task(run_id: int) -> None:
    """Plan the run and queue one ``compile_chunk_task`` per chunk."""
    compile_run_dispatch(run_id=run_id)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def compile_chunk_task(self, run_id: int, chunk_id: int) -> None:
    """One chunk of a compile run; a chunk another live claim holds is looked at again a little later (a
    redelivered message, or a worker that died: its lease runs out and this task takes the chunk over)."""
    claim = compile_chunk_execute(run_id=run_id, chunk_id=chunk_id)
    if claim.busy:
        self.apply_async((run_id, chunk_id), countdown=BUSY_RETRY_SECONDS)


@shared_task(acks_late=True)
def release_zip_task(release_pk: int) -> None:
    release_zip_build(release_pk=release_pk)


@shared_task(acks_late=True)
def release_hf_task(release_pk: int, actor_pk: int | None = None) -> None:
    from .exports.hf import release_hf_build  # the exports build on the services this module imports

    release_hf_build(release_pk=release_pk, actor_pk=actor_pk)
