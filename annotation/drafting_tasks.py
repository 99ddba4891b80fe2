"""Thin Celery tasks for LLM drafting."""

from __future__ import annotations

from celery import shared_task

from run_engine.engine import BUSY_RETRY_SECONDS, CHUNK_TASK_OPTIONS

from .drafting import DraftBusy, draft_execute


@shared_task(**CHUNK_TASK_OPTIONS)
def draft_execute_task(self, draft_id: int) -> None:
    """Draft one pass for one parent. The draft is claimed with a lease (``run_engine``): a re-delivered task
    after a worker crash writes nothing twice, and an error retries with Celery's backoff. Provider retries
    happen inside (``llm.client``)."""
    try:
        draft_execute(draft_id=draft_id)
    except DraftBusy:
        self.apply_async((draft_id,), countdown=BUSY_RETRY_SECONDS)
