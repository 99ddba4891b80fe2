"""Writes of assignments: assign (one user, or evenly across several), unassign, a source's strict flag, and the
one rule every pass write asks first (``require_may_edit``).

Every function takes keyword arguments, runs in one transaction, refuses with ``ApplicationError`` without
changing anything, and records each change in the audit log (one event per problem and role changed:
``assignment.set`` / ``assignment.remove``, and ``source.assignment_strict``).

The rules:
- an assignee holds the role (``permissions.may_hold_assignment``); a refusal names them (400);
- nobody reviews their own pass: a problem's assigned annotator is never its assigned source reviewer (400);
- several users: round robin in problem-id order (``rules.spread_evenly``);
- assigning the user a problem already has in that role only moves its due date; the same user and due date
  again changes nothing and records nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction

from audit.services import event_record
from physalign_site.errors import ApplicationError
from physalign_site.roles import is_admin

from ..models import Assignment, ParentProblem, Source
from .permissions import (
    ROLE_NOUNS,
    can_manage_assignments,
    may_hold_assignment,
    strict_edit_allowed,
)
from .rules import spread_evenly
from .selectors import ROLES, parent_annotator_assignment

OTHER_ROLE = {"annotator": "source_reviewer", "source_reviewer": "annotator"}
MAX_PROBLEMS = 20_000  # one request's problems; a bigger batch is refused, never half done


@dataclass
class AssignOutcome:
    """What an assignment request changed: per problem count, and how many each user now holds from it."""

    role: str
    created: int = 0
    replaced: int = 0
    unchanged: int = 0
    per_user: dict[str, int] = field(default_factory=dict)

    @property
    def changed(self) -> int:
        return self.created + self.replaced


def _require_admin(actor: Any) -> None:
    if not can_manage_assignments(actor):
        raise ApplicationError("Only an admin assigns work.", code="assignment_forbidden", status=403)


def _require_role(role: str) -> None:
    if role not in ROLES:
        raise ApplicationError(
            f"Unknown role {role!r}: one of {', '.join(ROLES)}.", code="assignment_role_unknown"
        )


def _require_assignees(users: Sequence[Any], role: str) -> None:
    if not users:
        raise ApplicationError("Choose at least one user to assign.", code="assignee_required")
    wrong = sorted(u.get_username() for u in users if not may_hold_assignment(u, role))
    if wrong:
        raise ApplicationError(
            f"Not {ROLE_NOUNS[role]}: {', '.join(wrong)}. Only {ROLE_NOUNS[role]} can be assigned as one.",
            code="assignee_lacks_role",
            extra={"users": wrong, "role": role},
        )
    if len({u.pk for u in users}) != len(users):
        raise ApplicationError("A user is chosen twice.", code="assignee_repeated")


def _state(row: Assignment | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "user": row.user.get_username(),
        "due_date": row.due_date.isoformat() if row.due_date else None,
    }


def _require_no_self_review(pairs: list[tuple[ParentProblem, Any]], role: str) -> None:
    """A problem's annotator and its source reviewer are two people: refuse every pair that would make them one."""
    other = Assignment.objects.filter(parent__in=[p for p, _ in pairs], role=OTHER_ROLE[role]).values_list(
        "parent_id", "user_id"
    )
    other_user = dict(other)
    clashes = sorted(
        (parent.problem_id, user.get_username())
        for parent, user in pairs
        if other_user.get(parent.pk) == user.pk
    )
    if clashes:
        shown = ", ".join(f"{pid} ({name})" for pid, name in clashes[:10])
        more = f" and {len(clashes) - 10} more" if len(clashes) > 10 else ""
        raise ApplicationError(
            f"Nobody reviews their own pass: already the {OTHER_ROLE[role].replace('_', ' ')} of {shown}{more}.",
            code="assignment_self_review",
            extra={"problems": [pid for pid, _ in clashes]},
        )


@transaction.atomic
def assignment_assign(
    *,
    parent_ids: Sequence[int],
    role: str,
    users: Sequence[Any],
    actor: Any,
    due_date: date | None = None,
) -> AssignOutcome:
    """Assign the problems (primary keys; taken in problem-id order, whatever order they come in) to ``users`` in ``role``: one user takes
    them all; several share them round robin (``rules.spread_evenly``). An existing assignee of that role is
    replaced. Refused as a whole: by a non-admin (403), an unknown role, no user, a user without the role, an
    annotator who would also be the source reviewer (or the other way round), or no problem (400)."""
    _require_admin(actor)
    _require_role(role)
    _require_assignees(users, role)
    if not parent_ids:
        raise ApplicationError("No problem to assign: select some, or filter.", code="problems_required")
    if len(parent_ids) > MAX_PROBLEMS:
        raise ApplicationError(
            f"At most {MAX_PROBLEMS:,} problems at once; narrow the filter.", code="too_many_problems"
        )
    parents = list(
        ParentProblem.objects.select_for_update()
        .filter(pk__in=list(parent_ids))
        .only("pk", "problem_id")
        .order_by("problem_id")
    )
    pairs = spread_evenly(parents, list(users))
    _require_no_self_review(pairs, role)
    existing = {
        row.parent_id: row
        for row in Assignment.objects.select_for_update()
        .select_related("user")
        .filter(parent__in=parents, role=role)
    }
    outcome = AssignOutcome(role=role)
    counts: Counter[str] = Counter()
    for parent, user in pairs:
        counts[user.get_username()] += 1
        _assign_one(parent, user, role, due_date, actor, existing.get(parent.pk), outcome)
    outcome.per_user = {u.get_username(): counts[u.get_username()] for u in users}
    return outcome


def _assign_one(
    parent: ParentProblem,
    user: Any,
    role: str,
    due_date: date | None,
    actor: Any,
    row: Assignment | None,
    outcome: AssignOutcome,
) -> None:
    before = _state(row)
    if row is None:
        row = Assignment.objects.create(
            parent=parent, role=role, user=user, due_date=due_date, assigned_by=actor
        )
        outcome.created += 1
    elif row.user_id == user.pk and row.due_date == due_date:
        outcome.unchanged += 1
        return
    else:
        row.user, row.due_date, row.assigned_by = user, due_date, actor
        row.save(update_fields=["user", "due_date", "assigned_by", "updated_at"])
        outcome.replaced += 1
    event_record(
        actor=actor,
        verb="assignment.set",
        obj=row,
        before=before,
        after={**(_state(row) or {}), "problem_id": parent.problem_id, "role": role},
    )


@transaction.atomic
def assignment_unassign(*, parent_ids: Sequence[int], role: str, actor: Any) -> int:
    """Remove the ``role`` assignee of each problem (those without one are skipped); the count removed."""
    _require_admin(actor)
    _require_role(role)
    rows = list(
        Assignment.objects.select_for_update()
        .select_related("user", "parent")
        .filter(parent_id__in=list(parent_ids), role=role)
        .order_by("parent__problem_id")
    )
    for row in rows:
        _remove(row, actor)
    return len(rows)


@transaction.atomic
def assignment_delete(*, assignment: Assignment, actor: Any) -> None:
    """Remove one assignment (the API's DELETE)."""
    _require_admin(actor)
    row = (
        Assignment.objects.select_for_update()
        .select_related("user", "parent")
        .filter(pk=assignment.pk)
        .first()
    )
    if row is not None:
        _remove(row, actor)


def _remove(row: Assignment, actor: Any) -> None:
    before = {**(_state(row) or {}), "problem_id": row.parent.problem_id, "role": row.role}
    object_id = str(row.pk)
    row.delete()
    event_record(
        actor=actor,
        verb="assignment.remove",
        object_type="annotation.assignment",
        object_id=object_id,
        before=before,
    )


@transaction.atomic
def source_assignment_strict_set(*, source: Source, strict: bool, actor: Any) -> Source:
    """Make a source's assignment strict (only the assigned annotator, and admins, edit its passes; unassigned
    problems only admins) or open again (assignment orders work, locks nothing). Unchanged: no event."""
    _require_admin(actor)
    source = Source.objects.select_for_update().get(pk=source.pk)
    if source.assignment_strict == strict:
        return source
    source.assignment_strict = strict
    source.save(update_fields=["assignment_strict"])
    event_record(
        actor=actor,
        verb="source.assignment_strict",
        obj=source,
        before={"assignment_strict": not strict},
        after={"assignment_strict": strict},
    )
    return source


# --- the rule every pass write asks ---------------------------------------------------------------------


def edit_refusal(actor: Any, parent: ParentProblem) -> str:
    """Why ``actor`` may not save, submit or revert ``parent``'s passes under strict assignment ('' if they may).
    Two small queries for a non-admin (the source's flag, unless the parent came with its source, then the
    assignee when strict), none for an admin."""
    if actor is None or is_admin(actor):
        return ""
    strict: bool | None
    if ParentProblem.source.is_cached(parent):
        strict = parent.source.assignment_strict
    else:
        strict = (
            Source.objects.filter(pk=parent.source_id).values_list("assignment_strict", flat=True).first()
        )
    if not strict:
        return ""
    assignment = parent_annotator_assignment(parent.pk)
    if strict_edit_allowed(actor, strict=True, assignee_id=assignment.user_id if assignment else None):
        return ""
    if assignment is None:
        return (
            f"{parent.problem_id} is not assigned to anyone, and its source uses strict assignment: only admins "
            "may edit it until an admin assigns it."
        )
    return (
        f"{parent.problem_id} is assigned to {assignment.user.get_username()}, and its source uses strict "
        "assignment: only they (and admins) may edit its passes."
    )


def require_may_edit(actor: Any, parent: ParentProblem) -> None:
    """Refuse (403, code ``not_assignee``) a pass write by anyone strict assignment keeps out; reading is
    never refused here. ``annotation.services`` asks this first in every save, submit and revert (an accepted
    LLM draft and a decided OCR proposal save through ``pass_document_save``, so they are covered too)."""
    reason = edit_refusal(actor, parent)
    if reason:
        raise ApplicationError(reason, code="not_assignee", status=403)
