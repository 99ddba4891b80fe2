"""The arithmetic of annotation analytics, free of Django: active time from save timestamps, the tally one group
of work adds up to (with its rates), the table columns and CSV cells safe from formula injection.

``annotation.analytics.selectors`` reads the rows from the database and hands them here as plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

ACTIVE_GAP_LIMIT_S = 300  # a gap longer than 5 minutes between two saves is a break, not work

ACTIVE_TIME_RULE = (
    "Active time: take each user's saves in the period in time order, across all documents; every save adds "
    "the time since that user's previous save in the period when that gap is at most 5 minutes (300 s), and "
    "nothing when it is longer (a break) or when there is no previous save in the period (the first save of a "
    "session counts 0). The time a save adds is credited to the document it saved (its pass, source and domain)."
)


def credited_seconds(saves: Iterable[tuple[Any, datetime]]) -> Iterator[float]:
    """For saves given as ``(user, at)`` sorted by user then time, the seconds of work each save adds under
    ``ACTIVE_TIME_RULE``: the gap to the same user's previous save when it is at most ``ACTIVE_GAP_LIMIT_S``,
    else 0 (also 0 for a user's first save). Yields one value per save, in the order given."""
    previous_user: Any = object()
    previous_at: datetime | None = None
    for user, at in saves:
        gap = (
            (at - previous_at).total_seconds() if user == previous_user and previous_at is not None else None
        )
        if gap is not None and gap < 0:
            raise ValueError("Saves must be sorted by user, then by time.")
        yield gap if gap is not None and gap <= ACTIVE_GAP_LIMIT_S else 0.0
        previous_user, previous_at = user, at


def rate(part: int, whole: int) -> float | None:
    """``part / whole``, or None when there is nothing to divide (shown as "—", never as 0)."""
    return part / whole if whole else None


@dataclass
class Tally:
    """What one group of work (an annotator and pass, a source, a domain) adds up to in a period.

    ``documents`` are the pass documents with a save in the group; ``findings`` maps each of those whose physics
    check has run to its number of findings (so a document counts once however many saves it had)."""

    documents: set[int] = field(default_factory=set)
    findings: dict[int, int] = field(default_factory=dict)
    saves: int = 0
    active_seconds: float = 0.0
    submissions: int = 0
    rejections: int = 0
    drafts_accepted: int = 0
    drafts_edited: int = 0  # accepted after the annotator added, removed or changed at least one record
    drafts_discarded: int = 0
    ocr_accepted: int = 0  # accepted as proposed
    ocr_edited: int = 0  # accepted after an edit of its box or text
    ocr_dropped: int = 0

    def add_save(self, document_id: int, seconds: float, findings: int | None) -> None:
        self.saves += 1
        self.active_seconds += seconds
        self.documents.add(document_id)
        if findings is not None:
            self.findings[document_id] = findings

    def add_draft(self, *, accepted: bool, edited: bool) -> None:
        if not accepted:
            self.drafts_discarded += 1
            return
        self.drafts_accepted += 1
        self.drafts_edited += int(edited)

    def add_ocr(self, status: str, count: int) -> None:
        if status == "accepted":
            self.ocr_accepted += count
        elif status == "edited":
            self.ocr_edited += count
        elif status == "dropped":
            self.ocr_dropped += count
        else:
            raise ValueError(
                f"An OCR proposal decided as {status!r} is neither accepted, edited nor dropped."
            )

    def merge(self, other: Tally) -> Tally:
        """The tally of both groups together (a document in both counts once)."""
        return Tally(
            documents=self.documents | other.documents,
            findings={**self.findings, **other.findings},
            saves=self.saves + other.saves,
            active_seconds=self.active_seconds + other.active_seconds,
            submissions=self.submissions + other.submissions,
            rejections=self.rejections + other.rejections,
            drafts_accepted=self.drafts_accepted + other.drafts_accepted,
            drafts_edited=self.drafts_edited + other.drafts_edited,
            drafts_discarded=self.drafts_discarded + other.drafts_discarded,
            ocr_accepted=self.ocr_accepted + other.ocr_accepted,
            ocr_edited=self.ocr_edited + other.ocr_edited,
            ocr_dropped=self.ocr_dropped + other.ocr_dropped,
        )

    @property
    def document_count(self) -> int:
        return len(self.documents)

    @property
    def checked_documents(self) -> int:
        return len(self.findings)

    @property
    def finding_count(self) -> int:
        return sum(self.findings.values())

    @property
    def findings_per_document(self) -> float | None:
        """Physics findings per checked document (documents whose check has not run are left out)."""
        return rate(self.finding_count, self.checked_documents)

    @property
    def draft_acceptance_rate(self) -> float | None:
        """Accepted drafts over decided ones (accepted + discarded)."""
        return rate(self.drafts_accepted, self.drafts_accepted + self.drafts_discarded)

    @property
    def draft_edit_rate(self) -> float | None:
        """Accepted drafts the annotator edited, over accepted drafts."""
        return rate(self.drafts_edited, self.drafts_accepted)

    @property
    def ocr_acceptance_rate(self) -> float | None:
        """Proposals accepted (as proposed or edited) over decided ones (accepted + edited + dropped)."""
        taken = self.ocr_accepted + self.ocr_edited
        return rate(taken, taken + self.ocr_dropped)

    @property
    def ocr_edit_rate(self) -> float | None:
        """Accepted proposals that were edited first, over accepted ones."""
        return rate(self.ocr_edited, self.ocr_accepted + self.ocr_edited)

    @property
    def is_empty(self) -> bool:
        return self == Tally()


# The figure columns of every table, in order: (CSV header, label on the page, the value of a tally).
FIGURE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("documents", "Documents", "document_count"),
    ("saves", "Saves", "saves"),
    ("active_seconds", "Active time", "active_seconds"),
    ("submissions", "Submissions", "submissions"),
    ("rejections", "Rejections", "rejections"),
    ("drafts_accepted", "Drafts accepted", "drafts_accepted"),
    ("drafts_edited", "Drafts edited", "drafts_edited"),
    ("drafts_discarded", "Drafts discarded", "drafts_discarded"),
    ("draft_acceptance_rate", "Draft acceptance", "draft_acceptance_rate"),
    ("draft_edit_rate", "Draft edit rate", "draft_edit_rate"),
    ("ocr_accepted", "OCR accepted", "ocr_accepted"),
    ("ocr_edited", "OCR edited", "ocr_edited"),
    ("ocr_dropped", "OCR dropped", "ocr_dropped"),
    ("ocr_acceptance_rate", "OCR acceptance", "ocr_acceptance_rate"),
    ("ocr_edit_rate", "OCR edit rate", "ocr_edit_rate"),
    ("checked_documents", "Checked documents", "checked_documents"),
    ("physics_findings", "Physics findings", "finding_count"),
    ("findings_per_document", "Findings / document", "findings_per_document"),
)
RATE_FIELDS = frozenset(
    {
        "draft_acceptance_rate",
        "draft_edit_rate",
        "ocr_acceptance_rate",
        "ocr_edit_rate",
        "findings_per_document",
    }
)


def figure_values(tally: Tally) -> list[int | float | None]:
    """The tally's figures in ``FIGURE_COLUMNS`` order (active time in whole seconds)."""
    values: list[int | float | None] = []
    for _, _, attribute in FIGURE_COLUMNS:
        value = getattr(tally, attribute)
        values.append(round(value) if attribute == "active_seconds" else value)
    return values


def csv_value(value: Any) -> str:
    """One CSV cell: None → empty, a rate → 4 decimals, text that a spreadsheet would run as a formula
    (starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) → prefixed with ``'``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def duration_label(seconds: float) -> str:
    """``h:mm:ss`` of whole seconds (``0:00:00`` for nothing)."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
