"""Annotation analytics for admins: what each annotator did per pass over a period, and the same per problem
source and per domain.

Where each figure comes from (every one bounded by the period):

- saves, documents and active time: the audit events ``pass_document.save`` (every stored change of a pass
  document writes one, whatever coalescing does to the history), by their actor; active time follows
  ``figures.ACTIVE_TIME_RULE``. Saves without an account (imports, the command line) are left out.
- submissions: the events ``pass_document.submit``, by their actor.
- rejections and their reasons: ``SourceReview`` rows decided ``rejected`` (the note and the per-record comments),
  counted for the annotator who submitted the rejected document (the actor of its latest ``pass_document.submit``
  at or before the rejection; else the author of the rejected version; else unknown).
- LLM drafts: the events ``llm_draft.accept`` / ``llm_draft.discard``, by who decided; an accepted draft is edited
  when its ``acceptance`` counts a record added, removed or changed.
- OCR proposals: ``OcrProposal`` rows decided in the period (``decided_at``), by ``decided_by``; they are Pass 1.
- physics findings: the latest check of each document worked on (``PassDocument.physics_check``), per checked
  document.

The number of queries is the same whatever the amount of data: each source of figures is one query, joined in
one pass in Python.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import BigIntegerField, CharField, Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from audit.models import Event

from ..models import LLMDraft, OcrProposal, PassDocument, PassDocumentVersion, SourceReview
from .figures import Tally, credited_seconds

DEFAULT_PERIOD_DAYS = 30
PASS_DOCUMENT = "annotation.passdocument"
LLM_DRAFT = "annotation.llmdraft"
SAVE, SUBMIT = "pass_document.save", "pass_document.submit"
DRAFT_ACCEPT, DRAFT_DISCARD = "llm_draft.accept", "llm_draft.discard"
NO_DOMAIN = "(no domain)"
UNKNOWN_ANNOTATOR = "(unknown)"
OCR_PASS = 1


@dataclass(frozen=True)
class Period:
    """Whole days, both ends included, in the site's time zone; None: open on that side (both None: all time)."""

    first_day: date | None
    last_day: date | None

    @classmethod
    def default(cls, today: date | None = None) -> Period:
        """The last 30 days, today included."""
        today = today or timezone.localdate()
        return cls(today - timedelta(days=DEFAULT_PERIOD_DAYS - 1), today)

    @property
    def start(self) -> datetime | None:
        return _midnight(self.first_day) if self.first_day else None

    @property
    def end(self) -> datetime | None:
        """The first instant after the period (exclusive); None after the calendar's last day, too."""
        if self.last_day is None or self.last_day == date.max:
            return None
        return _midnight(self.last_day + timedelta(days=1))

    @property
    def is_all_time(self) -> bool:
        return self.first_day is None and self.last_day is None

    @property
    def label(self) -> str:
        if self.is_all_time:
            return "all time"
        first = self.first_day.isoformat() if self.first_day else "the beginning"
        last = self.last_day.isoformat() if self.last_day else "now"
        return f"{first} to {last}"

    def query(self) -> dict[str, str]:
        """The GET parameters that ask for this period (an empty value: open on that side)."""
        return {
            "from": self.first_day.isoformat() if self.first_day else "",
            "to": self.last_day.isoformat() if self.last_day else "",
        }

    def filter(self, queryset: QuerySet, field_name: str) -> QuerySet:
        if self.start is not None:
            queryset = queryset.filter(**{f"{field_name}__gte": self.start})
        if self.end is not None:
            queryset = queryset.filter(**{f"{field_name}__lt": self.end})
        return queryset


def _midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


@dataclass(frozen=True)
class AnnotatorRow:
    user_id: int | None
    username: str
    pass_no: int
    tally: Tally


@dataclass(frozen=True)
class GroupRow:
    name: str
    tally: Tally


@dataclass(frozen=True)
class RejectionRow:
    at: datetime
    problem_id: str
    source: str
    domain: str
    pass_no: int
    annotator: str
    reviewer: str
    note: str
    comments: list[str]


@dataclass(frozen=True)
class AnnotationAnalytics:
    period: Period
    annotators: list[AnnotatorRow]  # one row per annotator and pass, by username then pass
    annotator_totals: list[GroupRow]  # one row per annotator, every pass together
    sources: list[GroupRow]
    domains: list[GroupRow]
    rejections: list[RejectionRow]  # newest first
    total: Tally


@dataclass
class _Books:
    """The tallies every fact is added to: its annotator and pass, its source, its domain and the total."""

    annotators: dict[tuple[int | None, int], Tally] = field(default_factory=lambda: defaultdict(Tally))
    sources: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    domains: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    total: Tally = field(default_factory=Tally)

    def tallies(self, user_id: int | None, pass_no: int, source: str, domain: str) -> tuple[Tally, ...]:
        return (
            self.annotators[(user_id, pass_no)],
            self.sources[source],
            self.domains[domain or NO_DOMAIN],
            self.total,
        )


def annotation_analytics(*, period: Period) -> AnnotationAnalytics:
    """Every figure of the analytics page for ``period`` (see the module docstring for where each comes from)."""
    books = _Books()
    _add_saves_and_submissions(books, period)
    _add_drafts(books, period)
    _add_ocr(books, period)
    rejections = _add_rejections(books, period)
    names = _usernames({user_id for user_id, _ in books.annotators})

    def name(user_id: int | None) -> str:
        return names.get(user_id, UNKNOWN_ANNOTATOR) if user_id is not None else UNKNOWN_ANNOTATOR

    annotators = sorted(
        (
            AnnotatorRow(user_id, name(user_id), pass_no, tally)
            for (user_id, pass_no), tally in books.annotators.items()
        ),
        key=lambda row: (row.user_id is None, row.username, row.pass_no),
    )
    totals: dict[int | None, Tally] = {}
    for row in annotators:
        totals[row.user_id] = totals[row.user_id].merge(row.tally) if row.user_id in totals else row.tally
    return AnnotationAnalytics(
        period=period,
        annotators=annotators,
        annotator_totals=[GroupRow(name(user_id), tally) for user_id, tally in totals.items()],
        sources=[GroupRow(key, books.sources[key]) for key in sorted(books.sources)],
        domains=[GroupRow(key, books.domains[key]) for key in sorted(books.domains)],
        rejections=[_rejection_row(row, name) for row in rejections],
        total=books.total,
    )


def _events(period: Period, verbs: Iterable[str], object_type: str) -> QuerySet:
    return period.filter(
        Event.objects.filter(verb__in=list(verbs), object_type=object_type, actor__isnull=False), "at"
    ).annotate(target_id=Cast("object_id", BigIntegerField()))


def _add_saves_and_submissions(books: _Books, period: Period) -> None:
    events = _events(period, (SAVE, SUBMIT), PASS_DOCUMENT)
    documents = {
        pk: (pass_no, source, domain, _finding_count(check))
        for pk, pass_no, source, domain, check in PassDocument.objects.filter(
            pk__in=Subquery(events.order_by().values("target_id"))
        ).values_list("pk", "pass_no", "parent__source__name", "parent__domain", "physics_check")
    }
    rows = list(events.order_by("actor_id", "at", "pk").values_list("actor_id", "at", "verb", "target_id"))
    saves = [
        (actor_id, at, doc_id) for actor_id, at, verb, doc_id in rows if verb == SAVE and doc_id in documents
    ]
    for (actor_id, _, doc_id), seconds in zip(
        saves, credited_seconds((a, at) for a, at, _ in saves), strict=True
    ):
        pass_no, source, domain, findings = documents[doc_id]
        for tally in books.tallies(actor_id, pass_no, source, domain):
            tally.add_save(doc_id, seconds, findings)
    for actor_id, _, verb, doc_id in rows:
        if verb == SUBMIT and doc_id in documents:
            pass_no, source, domain, _ = documents[doc_id]
            for tally in books.tallies(actor_id, pass_no, source, domain):
                tally.submissions += 1


def _finding_count(check: Any) -> int | None:
    """The number of findings of a document's latest physics check; None when no check has run."""
    if not isinstance(check, dict) or not check:
        return None
    findings = check.get("findings")
    return len(findings) if isinstance(findings, list) else 0


def _add_drafts(books: _Books, period: Period) -> None:
    events = _events(period, (DRAFT_ACCEPT, DRAFT_DISCARD), LLM_DRAFT)
    drafts = {
        pk: (pass_no, source, domain, acceptance)
        for pk, pass_no, source, domain, acceptance in LLMDraft.objects.filter(
            pk__in=Subquery(events.order_by().values("target_id"))
        ).values_list("pk", "pass_no", "parent__source__name", "parent__domain", "acceptance")
    }
    for actor_id, verb, draft_id in events.order_by("at", "pk").values_list("actor_id", "verb", "target_id"):
        if draft_id not in drafts:
            continue
        pass_no, source, domain, acceptance = drafts[draft_id]
        accepted = verb == DRAFT_ACCEPT
        edited = accepted and _draft_edited(acceptance)
        for tally in books.tallies(actor_id, pass_no, source, domain):
            tally.add_draft(accepted=accepted, edited=edited)


def _draft_edited(acceptance: Any) -> bool:
    if not isinstance(acceptance, dict):
        return False
    return any(_count(acceptance.get(key)) > 0 for key in ("added", "removed", "changed"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _add_ocr(books: _Books, period: Period) -> None:
    decided = period.filter(
        OcrProposal.objects.filter(
            status__in=[OcrProposal.Status.ACCEPTED, OcrProposal.Status.EDITED, OcrProposal.Status.DROPPED],
            decided_by__isnull=False,
        ),
        "decided_at",
    )
    grouped = (
        decided.order_by()
        .values_list("decided_by_id", "parent__source__name", "parent__domain", "status")
        .annotate(n=Count("pk"))
    )
    for user_id, source, domain, status, n in grouped:
        for tally in books.tallies(user_id, OCR_PASS, source, domain):
            tally.add_ocr(status, n)


def _add_rejections(books: _Books, period: Period) -> list[SourceReview]:
    doc_ref = Cast(OuterRef("pass_document_id"), CharField())
    submitter = (
        Event.objects.filter(
            verb=SUBMIT, object_type=PASS_DOCUMENT, object_id=doc_ref, at__lte=OuterRef("created_at")
        )
        .order_by("-at", "-pk")
        .values("actor_id")[:1]
    )
    author = PassDocumentVersion.objects.filter(
        pass_document_id=OuterRef("pass_document_id"), document_version=OuterRef("version")
    ).values("saved_by_id")[:1]
    reviews = list(
        period.filter(SourceReview.objects.filter(decision=SourceReview.Decision.REJECTED), "created_at")
        .annotate(annotator_id=Coalesce(Subquery(submitter), Subquery(author)))
        .select_related("pass_document__parent__source", "reviewer")
        .prefetch_related("comments")
        .order_by("-created_at", "-pk")
    )
    for review in reviews:
        parent = review.pass_document.parent
        for tally in books.tallies(
            review.annotator_id, review.pass_document.pass_no, parent.source.name, parent.domain
        ):
            tally.rejections += 1
    return reviews


def _usernames(user_ids: set[int | None]) -> dict[int | None, str]:
    ids = [pk for pk in user_ids if pk is not None]
    if not ids:
        return {}
    user_model = get_user_model()
    return dict(user_model.objects.filter(pk__in=ids).values_list("pk", user_model.USERNAME_FIELD))


def _rejection_row(review: SourceReview, name: Any) -> RejectionRow:
    parent = review.pass_document.parent
    return RejectionRow(
        at=review.created_at,
        problem_id=parent.problem_id,
        source=parent.source.name,
        domain=parent.domain or NO_DOMAIN,
        pass_no=review.pass_document.pass_no,
        annotator=name(review.annotator_id),  # type: ignore[attr-defined]
        reviewer=review.reviewer.get_username() if review.reviewer else UNKNOWN_ANNOTATOR,
        note=review.note,
        comments=[f"{c.collection}:{c.record_id}: {c.text}" for c in review.comments.all()],
    )
