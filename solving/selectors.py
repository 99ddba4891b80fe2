"""Reads of solve runs and their responses (both kinds) for pages, the API and other apps. Run statistics,
comparisons and transcripts are in ``solving.runs.reads``."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotation.models import ParentProblem
from audit.disclosure import may_show_targets

from .models import DebateTurn, SolveResponse, SolveRun


def reference_for(user: Any, parent: ParentProblem, *, where: str) -> dict[str, str] | None:
    """The parent's reference answer and solution for a key holder (the showing recorded), else None."""
    if not may_show_targets(user, where=where, parents=[parent.pk]):
        return None
    return {"answer": parent.answer, "solution": parent.solution}


def solve_run_list(*, kind: str = "") -> QuerySet[SolveRun]:
    """Solve runs, newest first; only those of ``kind`` ("single" | "debate") when given."""
    runs = SolveRun.objects.select_related("model", "release", "debate").order_by("-created_at")
    return runs.filter(kind=kind) if kind else runs


def solve_run_get(*, pk: int, kind: str = "") -> SolveRun | None:
    """A run with its model, release and debate settings; None when there is none (of ``kind``, if given)."""
    return solve_run_list(kind=kind).filter(pk=pk).first()


def solve_response_get(*, pk: int, kind: str = "") -> SolveResponse | None:
    """A response with its run, parent and grader; None when there is none (of a run of ``kind``, if given)."""
    rows = SolveResponse.objects.select_related("run__model", "run__debate", "parent", "graded_by")
    if kind:
        rows = rows.filter(run__kind=kind)
    return rows.filter(pk=pk).first()


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


def pending_responses(run: SolveRun) -> QuerySet[SolveResponse]:
    """The run's responses awaiting an expert grade, in row order."""
    return run.responses.filter(grading=SolveResponse.Grading.PENDING).order_by("pk")


def next_ungraded(row: SolveResponse) -> SolveResponse | None:
    """The next response of the run awaiting a grade after ``row`` (wrapping around), not ``row`` itself."""
    pending = pending_responses(row.run).exclude(pk=row.pk)
    return pending.filter(pk__gt=row.pk).first() or pending.first()


def grade_rows_prefill(row: SolveResponse) -> tuple[list[dict[str, str]], SolveResponse | None]:
    """The response's own components, else the rubric of another graded response of the same parent (awarded
    left empty for the grader) and that response, else one empty row."""
    own = list(row.components.all())
    if own:
        return [
            {"description": c.description, "awarded": str(c.awarded), "maximum": str(c.maximum)} for c in own
        ], None
    source = (
        SolveResponse.objects.filter(parent=row.parent, grading=SolveResponse.Grading.GRADED)
        .exclude(pk=row.pk)
        .select_related("run__model")
        .order_by("-graded_at")
        .first()
    )
    if source:
        return [
            {"description": c.description, "awarded": "", "maximum": str(c.maximum)}
            for c in source.components.all()
        ], source
    return [{"description": "", "awarded": "", "maximum": "1"}], None


def debate_responses(run: SolveRun) -> list[SolveResponse]:
    """A debate run's responses by parent id, each with ``rounds_used`` and ``decided_by`` from its selection
    turn (None and "" while it has none)."""
    decided = {
        response_id: (round_number, (parsed or {}).get("decided_by", ""))
        for response_id, round_number, parsed in DebateTurn.objects.filter(
            response__run=run, stage="selection"
        ).values_list("response_id", "round", "parsed")
    }
    responses = list(run.responses.select_related("parent").order_by("parent__problem_id"))
    for response in responses:
        response.rounds_used, response.decided_by = decided.get(response.pk, (None, ""))  # type: ignore[attr-defined]
    return responses


def transcript_turns(response: SolveResponse) -> QuerySet[DebateTurn]:
    """A response's turns with their models, in ``seq`` order."""
    return response.turns.select_related("model").order_by("seq")


def compare_candidates() -> QuerySet[SolveRun]:
    """The runs the comparison page offers to pick from (newest first)."""
    return SolveRun.objects.select_related("model", "debate").order_by("-created_at")
