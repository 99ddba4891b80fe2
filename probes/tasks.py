"""Thin Celery tasks: ids in, one service call."""

from __future__ import annotations

from celery import shared_task

from .releases import release_zip_build
from .services import compile_run_execute


@shared_task(acks_late=True)
def compile_run_task(run_id: int) -> None:
    compile_run_execute(run_id=run_id)


@shared_task(acks_late=True)
def release_zip_task(release_pk: int) -> None:
    release_zip_build(release_pk=release_pk)
