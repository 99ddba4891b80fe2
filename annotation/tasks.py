"""Thin Celery tasks for the annotation app."""

from __future__ import annotations

import logging

from celery import shared_task

from run_engine.engine import CHUNK_TASK_OPTIONS, busy_requeue

from .drafting.services import draft_chunk_process
from .exporters.jobs import workspace_export_fail, workspace_export_run
from .importers import import_job_fail, import_job_run
from .models import ImportJob, WorkspaceExport
from .ocr.tasks import ocr_run_task  # noqa: F401  (the worker registers the OCR task through this module)

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
def draft_chunk_task(self, run_id: int, draft_ids: list[int]) -> None:
    """Draft the chunk's drafts. Each is claimed with a lease (``run_engine``): a re-delivered task after a
    worker crash writes nothing twice, an error retries with Celery's backoff, and a draft another live claim
    holds is looked at again as a new task. Provider retries happen inside (``llm.client``)."""
    busy_requeue(self, run_id, busy=draft_chunk_process(run_id=run_id, draft_ids=draft_ids))


@shared_task(acks_late=True)
def workspace_export_task(job_id: int) -> None:
    """Build one queued Kit workspace export; whatever goes wrong, the job ends ``failed`` with the message."""
    try:
        workspace_export_run(job_id=job_id)
    except WorkspaceExport.DoesNotExist:
        logger.warning("workspace export %s no longer exists", job_id)
    except Exception as exc:
        logger.exception("workspace export %s failed", job_id)
        job = WorkspaceExport.objects.filter(pk=job_id).first()
        if job is not None:
            workspace_export_fail(job=job, message=f"The export stopped unexpectedly: {exc}")
