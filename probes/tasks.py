"""Thin Celery tasks: ids in, one service call."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True)
def compile_run_task(run_id: int) -> None:
    from .services import compile_run_execute

    compile_run_execute(run_id=run_id)


@shared_task(acks_late=True)
def release_zip_task(release_pk: int) -> None:
    from .releases import release_zip_build

    release_zip_build(release_pk=release_pk)
