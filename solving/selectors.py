"""Reads for solving runs and their responses."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotation.models import ParentProblem
from audit.disclosure import may_show_targets

from .models import SolveResponse, SolveRun


def reference_for(user: Any, parent: ParentProblem, *, where: str) -> dict[str, str] | None:
    """The parent's reference answer and solution for a key holder (the showing recorded), else None."""
    if not may_show_targets(user, where=where, parents=[parent.pk]):
        return None
    return {"answer": parent.answer, "solution": parent.solution}


def solve_run_list() -> QuerySet[SolveRun]:
    return SolveRun.objects.select_related("model", "release")


def solve_runs_for_models(model_ids: Any) -> QuerySet[SolveRun]:
    """Single-solver runs of these models that returned every answer (App. B.4, D.3), newest first."""
    return (
        SolveRun.objects.filter(
            kind=SolveRun.Kind.SINGLE,
            model__in=model_ids,
            status__in=[SolveRun.Status.COMPLETED, SolveRun.Status.GRADING],
        )
        .select_related("model")
        .order_by("-created_at")
    )


def solve_responses(run: SolveRun, *, status: str = "", grading: str = "") -> QuerySet[SolveResponse]:
    rows = run.responses.select_related("parent").order_by("pk")
    if status:
        rows = rows.filter(status=status)
    if grading:
        rows = rows.filter(grading=grading)
    return rows
