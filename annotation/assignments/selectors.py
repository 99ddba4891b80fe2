"""Reads of assignments: the admins' page (problems matching a filter, with both assignees, in a fixed number of
queries however many problems match), the API's list, the users who may be assigned, and each assignee's own
work (the annotator's and the source reviewer's home)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, ClassVar

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery

from ..models import (
    APPROVAL_FRESHNESS_FIELDS,
    Assignment,
    ParentProblem,
    PassDocument,
    Source,
)
from .permissions import ASSIGNMENT_ROLES
from .rules import ANNOTATION_PASSES, NextStep, next_step

ROLES = tuple(ASSIGNMENT_ROLES)
ROLE_LABELS = dict(Assignment.Role.choices)
# what the page's table loads of a problem (never its answer, solution or raw text)
PROBLEM_FIELDS = (
    "pk",
    "problem_id",
    "status",
    "domain",
    "language",
    "source__name",
    "source__assignment_strict",
)


@dataclass(frozen=True)
class AssignmentFilters:
    """Which problems an admin is looking at (and "all matching" assigns): every field optional; ``unassigned``
    names a role (only problems without an assignee in it); ``assignee`` a user holding an assignment of either
    role on them."""

    QUERY_PARAMS: ClassVar[tuple[str, ...]] = (
        "q",
        "source",
        "status",
        "domain",
        "language",
        "unassigned",
        "assignee",
    )
    search: str = ""
    source_id: int | None = None
    status: str = ""
    domain: str = ""
    language: str = ""
    unassigned: str = ""
    assignee_id: int | None = None

    def apply(self, problems: QuerySet[ParentProblem]) -> QuerySet[ParentProblem]:
        if self.search:
            problems = problems.filter(problem_id__icontains=self.search)
        if self.source_id is not None:
            problems = problems.filter(source_id=self.source_id)
        if self.status:
            problems = problems.filter(status=self.status)
        if self.domain:
            problems = problems.filter(domain=self.domain)
        if self.language:
            problems = problems.filter(language=self.language)
        if self.unassigned in ROLES:
            taken = Assignment.objects.filter(parent=OuterRef("pk"), role=self.unassigned)
            problems = problems.filter(~Exists(taken))
        if self.assignee_id is not None:
            held = Assignment.objects.filter(parent=OuterRef("pk"), user_id=self.assignee_id)
            problems = problems.filter(Exists(held))
        return problems

    def as_query(self) -> dict[str, str]:
        values = {
            "q": self.search,
            "source": "" if self.source_id is None else str(self.source_id),
            "status": self.status,
            "domain": self.domain,
            "language": self.language,
            "unassigned": self.unassigned,
            "assignee": "" if self.assignee_id is None else str(self.assignee_id),
        }
        return {key: value for key, value in values.items() if value}

    @property
    def is_empty(self) -> bool:
        return not self.as_query()


def matching_problems(filters: AssignmentFilters) -> QuerySet[ParentProblem]:
    """The problems under the filters, by problem id (the order the even spread follows), each with its
    assignments and their users prefetched: a page of them costs the same queries at 10 rows as at 100."""
    return (
        filters.apply(ParentProblem.objects.all())
        .select_related("source")
        .only(*PROBLEM_FIELDS)
        .prefetch_related(
            Prefetch(
                "assignments",
                queryset=Assignment.objects.select_related("user").only(
                    "pk", "parent_id", "role", "due_date", "user__username"
                ),
            )
        )
        .order_by("problem_id")
    )


def matching_problem_ids(filters: AssignmentFilters) -> list[int]:
    """The primary keys of every matching problem, in problem-id order (what "all matching" acts on)."""
    return list(
        filters.apply(ParentProblem.objects.all()).order_by("problem_id").values_list("pk", flat=True)
    )


def assignable_users(role: str) -> QuerySet[Any]:
    """Active accounts holding the role ``role`` names (``annotator`` / ``source_reviewer``), by username."""
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name=ASSIGNMENT_ROLES[role])
        .distinct()
        .order_by("username")
        .only("pk", "username")
    )


def assignment_rows(
    *,
    role: str = "",
    user_id: int | None = None,
    source_id: int | None = None,
    problem_id: str = "",
    due_before: date | None = None,
) -> QuerySet[Assignment]:
    """Assignments for the API's list, each with its problem, source, assignee and assigner in the same row."""
    rows = Assignment.objects.select_related("parent__source", "user", "assigned_by").only(
        "pk",
        "role",
        "due_date",
        "created_at",
        "updated_at",
        "parent__problem_id",
        "parent__source__name",
        "user__username",
        "assigned_by__username",
    )
    if role:
        rows = rows.filter(role=role)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    if source_id is not None:
        rows = rows.filter(parent__source_id=source_id)
    if problem_id:
        rows = rows.filter(parent__problem_id=problem_id)
    if due_before is not None:
        rows = rows.filter(due_date__lt=due_before)
    return rows


def strict_sources() -> QuerySet[Source]:
    """Every source with whether its assignment is strict, by name (the page's toggles)."""
    return Source.objects.only("pk", "name", "assignment_strict").order_by("name")


def parent_annotator_assignment(parent_id: int) -> Assignment | None:
    return (
        Assignment.objects.filter(parent_id=parent_id, role=Assignment.Role.ANNOTATOR)
        .select_related("user")
        .only("pk", "user_id", "user__username", "parent_id")
        .first()
    )


# --- each assignee's own work ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AssignedWork:
    """One problem assigned to an annotator, what they do next on it and when it is due."""

    problem_id: str
    due_date: date | None
    step: NextStep
    overdue: bool


@dataclass(frozen=True)
class AssignedToMe:
    work: list[AssignedWork] = field(default_factory=list)  # not done: overdue first, then by due date, id
    done: int = 0  # assigned problems with nothing left to do


def _pass_state(doc: PassDocument, content_sha256: str) -> str:
    if doc.status == PassDocument.Status.APPROVED:
        return "approved" if doc.approval_fresh_for(content_sha256) else "stale"
    return doc.status


def annotator_assigned_work(*, user: Any, today: date) -> AssignedToMe:
    """The problems assigned to ``user`` as annotator (excluded problems left out), with the pass to do next
    (``rules.next_step``), in two queries however many there are. Overdue: due before ``today`` and not done."""
    rows = (
        Assignment.objects.filter(user=user, role=Assignment.Role.ANNOTATOR)
        .exclude(parent__status=ParentProblem.Status.EXCLUDED)
        .select_related("parent")
        .only("pk", "due_date", "parent_id", "parent__problem_id", "parent__content_sha256")
        .prefetch_related(
            Prefetch(
                "parent__passes",
                queryset=PassDocument.objects.only("pk", "parent_id", "pass_no", *APPROVAL_FRESHNESS_FIELDS),
            )
        )
    )
    work, done = [], 0
    for row in rows:
        parent = row.parent
        step = next_step(
            {doc.pass_no: _pass_state(doc, parent.content_sha256) for doc in parent.passes.all()}
        )
        if step.done:
            done += 1
            continue
        overdue = row.due_date is not None and row.due_date < today
        work.append(AssignedWork(parent.problem_id, row.due_date, step, overdue))
    work.sort(key=lambda w: (not w.overdue, w.due_date is None, w.due_date or today, w.problem_id))
    return AssignedToMe(work=work, done=done)


def source_reviews_assigned(*, user: Any) -> QuerySet[PassDocument]:
    """Submitted passes 1–4 of the problems assigned to ``user`` as source reviewer, by due date (none last),
    then oldest first; each row carries ``assignment_due``."""
    mine = Assignment.objects.filter(
        parent=OuterRef("parent_id"), role=Assignment.Role.SOURCE_REVIEWER, user=user
    )
    return (
        PassDocument.objects.filter(
            Exists(mine), status=PassDocument.Status.SUBMITTED, pass_no__in=ANNOTATION_PASSES
        )
        .annotate(assignment_due=Subquery(mine.values("due_date")[:1]))
        .select_related("parent", "updated_by")
        .only("pk", "pass_no", "version", "updated_at", "parent__problem_id", "updated_by__username")
        .order_by(F("assignment_due").asc(nulls_last=True), "updated_at", "pk")
    )


def has_assignments(user: Any, role: str) -> bool:
    return Assignment.objects.filter(Q(user=user) & Q(role=role)).exists()
