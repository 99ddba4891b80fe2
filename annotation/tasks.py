"""Thin Celery tasks for the annotation app."""

from __future__ import annotations

import logging

from celery import shared_task

from run_engine.engine import BUSY_RETRY_SECONDS, CHUNK_TASK_OPTIONS

from .drafting.services import DraftBusy, draft_execute
from .importers import import_job_fail, import_job_run
from .models import ImportJob

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def import_job_run_task(job_id: int) -> None:
    """Run one queued import upload. Idempotent: a finished job is left alone on a re-delivery.

    Whatever goes wrong, the job ends ``failed`` with the message, never stuck in ``running``.
    """
    try:
        import_job_run(job_id=job_id)
    except ImportJob.DoesNotExist:
        logger.warning("import job %s no longer exists", job_id)
    except Exception as exc:
        logger.exception("import job %s failed", job_id)
        job = ImportJob.objects.filter(pk=job_id).first()
        if job is not None:
            import_job_fail(job=job, message=f"The import stopped unexpectedly: {exc}", code="IMPORT_CRASHED")


@shared_task(**CHUNK_TASK_OPTIONS)
def draft_execute_task(self, draft_id: int) -> None:
    """Draft one pass for one parent. The draft is claimed with a lease (``run_engine``): a re-delivered task
    after a worker crash writes nothing twice, and an error retries with Celery's backoff. Provider retries
    happen inside (``llm.client``)."""
    try:
        draft_execute(draft_id=draft_id)
    except DraftBusy:
        self.apply_async((draft_id,), countdown=BUSY_RETRY_SECONDS)
