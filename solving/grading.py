"""Expert grading (App. B.4): rubric components of a short or calculation answer and its credit s_i."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.services import event_record
from physalign_site.errors import ApplicationError

from .models import GradeComponent, SolveResponse, SolveRun
from .permissions import can_grade_solving
from .scoring import (
    EXPERT_TYPES,
    credit_from_components,
)

GRADE_LIMIT = Decimal(100000)  # awarded and maximum: 7 digits, 2 of them decimals


def _decimal(value: Any, label: str, index: int) -> Decimal:
    try:
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        raise ApplicationError(
            f"Component {index}: {label} must be a number.",
            code="grade_invalid",
            extra={"component": index, "field": label},
        ) from None
    if not number.is_finite():
        raise ApplicationError(
            f"Component {index}: {label} must be a number.",
            code="grade_invalid",
            extra={"component": index, "field": label},
        )
    if abs(number) >= GRADE_LIMIT:  # the column holds 7 digits, 2 of them decimals (and quantize would raise)
        raise ApplicationError(
            f"Component {index}: {label} must be below {GRADE_LIMIT}.",
            code="grade_invalid",
            extra={"component": index, "field": label},
        )
    return number.quantize(Decimal("0.01"))


def _clean_components(components: list[dict[str, Any]]) -> list[tuple[str, Decimal, Decimal]]:
    if not components:
        raise ApplicationError("A grade needs at least one rubric component.", code="grade_invalid")
    cleaned = []
    for index, component in enumerate(components, start=1):
        description = str(component.get("description") or "").strip()
        if not description:
            raise ApplicationError(
                f"Component {index}: describe what it awards.",
                code="grade_invalid",
                extra={"component": index, "field": "description"},
            )
        if len(description) > 500:
            raise ApplicationError(
                f"Component {index}: the description is longer than 500 characters.",
                code="grade_invalid",
                extra={"component": index, "field": "description"},
            )
        awarded = _decimal(component.get("awarded"), "awarded", index)
        maximum = _decimal(component.get("maximum"), "maximum", index)
        if maximum <= 0 or maximum >= Decimal("100000"):
            raise ApplicationError(
                f"Component {index}: the maximum must be positive (and below 100000).",
                code="grade_invalid",
                extra={"component": index, "field": "maximum"},
            )
        if awarded < 0 or awarded > maximum:
            raise ApplicationError(
                f"Component {index}: awarded points must lie between 0 and {maximum}.",
                code="grade_invalid",
                extra={"component": index, "field": "awarded"},
            )
        cleaned.append((description, awarded, maximum))
    return cleaned


@transaction.atomic
def solve_response_grade(
    *, response: SolveResponse, components: list[dict[str, Any]], correct: bool, note: str = "", actor: Any
) -> SolveResponse:
    """Record (or replace) an expert grade of a short-answer/calculation response: rubric components give the
    credit ``Σ awarded / Σ maximum``; ``correct`` is the expert's binary final-answer verdict."""
    if not can_grade_solving(actor):
        raise ApplicationError(
            "Grading is done against the reference answer: only key holders (admin + "
            "probes.view_private_mapping) grade solving responses.",
            code="forbidden",
            status=403,
        )
    locked = SolveResponse.objects.select_for_update().get(pk=response.pk)
    if locked.answer_type not in EXPERT_TYPES:
        raise ApplicationError("Choice and fill-in answers are scored by script.", code="not_gradable")
    if locked.grading not in (SolveResponse.Grading.PENDING, SolveResponse.Grading.GRADED):
        raise ApplicationError("This response has no returned solution to grade.", code="not_gradable")
    if not isinstance(correct, bool):
        raise ApplicationError("Say whether the final answer is correct.", code="grade_invalid")
    cleaned = _clean_components(components)
    before = {
        "credit": locked.credit,
        "correct": locked.correct,
        "components": [[c.description, str(c.awarded), str(c.maximum)] for c in locked.components.all()],
    }
    credit = credit_from_components((float(a), float(w)) for _, a, w in cleaned)
    locked.components.all().delete()
    GradeComponent.objects.bulk_create(
        [
            GradeComponent(response=locked, order=n, description=d, awarded=a, maximum=w)
            for n, (d, a, w) in enumerate(cleaned, start=1)
        ]
    )
    locked.credit, locked.correct, locked.grading = credit, correct, SolveResponse.Grading.GRADED
    locked.grade_note = (note or "").strip()
    locked.graded_by = actor if getattr(actor, "pk", None) else None
    locked.graded_at = timezone.now()
    locked.save(update_fields=["credit", "correct", "grading", "grade_note", "graded_by", "graded_at"])
    event_record(
        actor=actor,
        verb="solve_response.grade",
        obj=locked,
        before=before,
        after={
            "credit": credit,
            "correct": correct,
            "components": [[d, str(a), str(w)] for d, a, w in cleaned],
        },
    )
    run = SolveRun.objects.select_for_update().get(pk=locked.run_id)
    if (
        run.status == SolveRun.Status.GRADING
        and not run.responses.filter(grading=SolveResponse.Grading.PENDING).exists()
    ):
        run.status = SolveRun.Status.COMPLETED
        run.save(update_fields=["status"])
    return locked
