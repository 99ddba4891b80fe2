"""Reads for OCR runs and proposals."""

from __future__ import annotations

from django.db.models import QuerySet

from ..models import OcrProposal, OcrRun, ParentProblem


def ocr_run_get(*, run_id: int) -> OcrRun | None:
    return OcrRun.objects.select_related("parent", "source").filter(pk=run_id).first()


def ocr_run_active_for(*, parent: ParentProblem | None = None, source_id: int | None = None) -> OcrRun | None:
    """The queued or running run of this problem (or source), if any: a second request joins it."""
    runs = OcrRun.objects.filter(status__in=[OcrRun.Status.QUEUED, OcrRun.Status.RUNNING])
    if parent is not None:
        runs = runs.filter(parent=parent)
    elif source_id is not None:
        runs = runs.filter(source_id=source_id, parent__isnull=True)
    else:
        return None
    return runs.order_by("-pk").first()


def ocr_proposals_for(*, parent: ParentProblem, status: str | None = None) -> QuerySet[OcrProposal]:
    """A problem's proposals, by image and position of creation. Only proposals of finished runs exist:
    a run writes its proposals in the transaction that marks it done (``ocr_run_execute``)."""
    proposals = (
        OcrProposal.objects.filter(parent=parent)
        .select_related("image", "run")
        .order_by("image__ordinal", "pk")
    )
    return proposals.filter(status=status) if status else proposals
