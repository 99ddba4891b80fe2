"""Thin Celery task for OCR runs (registered through ``annotation.tasks``)."""

from __future__ import annotations

import logging

from celery import shared_task

from ..models import OcrRun
from .services import OcrRunFailed, ocr_run_execute, ocr_run_fail

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def ocr_run_task(run_id: int) -> None:
    """Execute one queued OCR run. Idempotent: a finished run is left alone on a re-delivery, a run a dead worker
    left running starts over (it wrote no proposal). Whatever goes wrong, the run ends ``failed`` with the reason."""
    try:
        ocr_run_execute(run_id=run_id)
    except OcrRun.DoesNotExist:
        logger.warning("ocr run %s no longer exists", run_id)
    except OcrRunFailed as exc:
        ocr_run_fail(run_id=run_id, message=str(exc))
    except Exception as exc:
        logger.exception("ocr run %s failed", run_id)
        ocr_run_fail(run_id=run_id, message=f"The OCR run stopped unexpectedly: {exc}")
