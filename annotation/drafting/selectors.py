"""Reads of LLM drafts and draft runs for the pages and the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ..models import DraftRun, LLMDraft, ParentProblem
from ..selectors import pass_document_get
from .services import record_comparison


def draft_list(*, parent: ParentProblem, pass_no: int) -> QuerySet[LLMDraft]:
    """A parent's drafts of one pass, newest first, with their model and parent."""
    return (
        LLMDraft.objects.filter(parent=parent, pass_no=pass_no)
        .select_related("model_config", "parent")
        .order_by("-pk")
    )


def draft_get(*, draft_id: int) -> LLMDraft | None:
    """A draft with its parent and model, or None."""
    return LLMDraft.objects.select_related("parent", "model_config").filter(pk=draft_id).first()


def draft_run_get(*, run_id: int) -> DraftRun | None:
    """A draft run with its model, or None."""
    return DraftRun.objects.select_related("model_config").filter(pk=run_id).first()


@dataclass(frozen=True)
class DraftComparison:
    """A draft beside the current pass document: one row per record (``record_comparison``) and the
    document's version (0 when the pass has no document yet)."""

    rows: list[dict[str, Any]]
    current_version: int


def draft_comparison(*, draft: LLMDraft) -> DraftComparison:
    current = pass_document_get(parent=draft.parent, pass_no=draft.pass_no)
    rows = (
        record_comparison(
            draft_document=draft.parsed_document, current_document=current.document if current else None
        )
        if draft.parsed_document is not None
        else []
    )
    return DraftComparison(rows=rows, current_version=current.version if current else 0)
