"""Thin Celery tasks for LLM drafting."""

from __future__ import annotations

import logging

from celery import shared_task

from .drafting import draft_execute

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def draft_execute_task(draft_id: int) -> None:
    """Draft one pass for one parent. Provider retries happen inside (``llm.client``); the service
    is idempotent, so a re-delivered task after a worker crash writes nothing twice."""
    draft_execute(draft_id=draft_id)
