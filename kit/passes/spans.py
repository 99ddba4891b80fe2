"""Text-span resolution for mentions (Kit §2.7, rule ``literal_nonoverlap_1based_v1``). Pure: no Django.

A mention names a quote and a 1-based occurrence inside one exact section string (stem or query).
Matching is case-sensitive and literal, and counts non-overlapping matches left to right: each search
starts at the end of the previous match. There is no normalization (no case folding, whitespace, NFC
or LaTeX handling) and no word boundaries. Offsets are 0-based half-open *Unicode code point* offsets
into the Python ``str`` (not UTF-8 bytes, not UTF-16 units), so ``text[start:end] == quote``.

The resolution record hashes the decision: ``decision_content_hash`` is the digest of the record
without that field, so a reviewer's approval of a span decision goes stale when anything changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kit.canonical import digest, text_digest

MATCH_POLICY = "literal_nonoverlap_1based_v1"
REPAIR_POLICY = "unique_exact_sidecar_v1"

RESOLVED_EXACT = "resolved_exact"
UNIQUE_EXACT_REPAIR_PROPOSED = "unique_exact_repair_proposed"
REPAIRED_UNIQUE_EXACT = "repaired_unique_exact"
AMBIGUOUS_OCCURRENCE = "ambiguous_occurrence"
QUOTE_NOT_FOUND = "quote_not_found"

Span = tuple[int, int]


class SpanStructuralError(ValueError):
    """The request itself is malformed (empty quote, non-positive occurrence, non-string text).

    Such a mention is a structural error of the pass document; it is never repaired automatically.
    ``code`` is a stable machine-readable reason.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SpanResolution:
    """One span decision. ``as_record()`` gives the Kit's JSON record form.

    ``span`` is set only when the decision is usable (``resolved_exact`` or, after an approved rule,
    ``repaired_unique_exact``). The repair fields are set only for a unique exact match whose
    occurrence was out of range.
    """

    section_sha256: str
    quote: str
    original_occurrence: int
    all_matches: tuple[Span, ...]
    match_policy: str
    span: Span | None
    status: str
    decision_content_hash: str
    proposed_span: Span | None = None
    corrected_occurrence: int | None = None
    repair_policy: str | None = None

    @property
    def is_resolved(self) -> bool:
        return self.span is not None

    def as_record(self) -> dict[str, Any]:
        record = _record_without_hash(self)
        record["decision_content_hash"] = self.decision_content_hash
        return record


def find_exact_matches(text: str, quote: str) -> list[Span]:
    """All non-overlapping exact matches of ``quote`` in ``text``, left to right."""
    matches: list[Span] = []
    cursor = 0
    while (start := text.find(quote, cursor)) >= 0:
        end = start + len(quote)
        matches.append((start, end))
        cursor = end
    return matches


def resolve_span(text: str, quote: str, occurrence: int) -> SpanResolution:
    """Resolve the ``occurrence``-th (1-based) exact match of ``quote`` in ``text``.

    Raises :class:`SpanStructuralError` for a non-string text or quote, an empty quote, or an
    occurrence that is not a positive ``int`` (``bool`` is rejected). Never raises otherwise.
    """
    _require_well_formed(text, quote, occurrence)
    matches = tuple(find_exact_matches(text, quote))
    span: Span | None = None
    proposed: Span | None = None
    if occurrence <= len(matches):
        status, span = RESOLVED_EXACT, matches[occurrence - 1]
    elif len(matches) == 1:
        status, proposed = UNIQUE_EXACT_REPAIR_PROPOSED, matches[0]
    elif matches:
        status = AMBIGUOUS_OCCURRENCE
    else:
        status = QUOTE_NOT_FOUND
    # The Kit's executable resolver already carries the repair fields on the *proposed* record
    # (with ``span`` still null), so the decision hash of a proposal matches the Kit's audit bytes.
    return _sealed(
        SpanResolution(
            section_sha256=text_digest(text),
            quote=quote,
            original_occurrence=occurrence,
            all_matches=matches,
            match_policy=MATCH_POLICY,
            span=span,
            status=status,
            decision_content_hash="",
            proposed_span=proposed,
            corrected_occurrence=1 if proposed is not None else None,
            repair_policy=REPAIR_POLICY if proposed is not None else None,
        )
    )


def apply_unique_exact_repair(record: SpanResolution | Mapping[str, Any]) -> Any:
    """Turn a ``unique_exact_repair_proposed`` decision into ``repaired_unique_exact``.

    Call this only under an approved ``unique_exact_sidecar_v1`` rule. The span becomes the only
    exact match, ``corrected_occurrence`` is 1 and the decision hash is recomputed. Accepts a
    :class:`SpanResolution` (returns one) or its record dict (returns a new dict). Raises
    :class:`SpanStructuralError` (``SPAN_REPAIR_NOT_APPLICABLE``) for any other status.
    """
    if isinstance(record, SpanResolution):
        return _repair_resolution(record)
    if isinstance(record, Mapping):
        return _repair_resolution(_from_record(record)).as_record()
    raise SpanStructuralError("SPAN_REPAIR_NOT_APPLICABLE", "A span decision record is required.")


def _repair_resolution(resolution: SpanResolution) -> SpanResolution:
    if resolution.status != UNIQUE_EXACT_REPAIR_PROPOSED or len(resolution.all_matches) != 1:
        raise SpanStructuralError(
            "SPAN_REPAIR_NOT_APPLICABLE",
            f"Only a unique exact match can be repaired; this decision is {resolution.status!r}.",
        )
    only_match = resolution.all_matches[0]
    return _sealed(
        replace(
            resolution,
            status=REPAIRED_UNIQUE_EXACT,
            span=only_match,
            proposed_span=only_match,
            corrected_occurrence=1,
            repair_policy=REPAIR_POLICY,
        )
    )


def _require_well_formed(text: object, quote: object, occurrence: object) -> None:
    if not isinstance(text, str):
        raise SpanStructuralError("SPAN_TEXT_INVALID", "The section text must be a string.")
    if not isinstance(quote, str) or not quote:
        raise SpanStructuralError("SPAN_QUOTE_EMPTY", "The quote must be a non-empty string.")
    if type(occurrence) is not int or occurrence < 1:
        raise SpanStructuralError(
            "SPAN_OCCURRENCE_INVALID", "The occurrence must be an integer of at least 1."
        )


def _record_without_hash(resolution: SpanResolution) -> dict[str, Any]:
    record: dict[str, Any] = {
        "section_sha256": resolution.section_sha256,
        "quote": resolution.quote,
        "original_occurrence": resolution.original_occurrence,
        "all_matches": [list(match) for match in resolution.all_matches],
        "match_policy": resolution.match_policy,
        "span": list(resolution.span) if resolution.span is not None else None,
        "status": resolution.status,
    }
    if resolution.proposed_span is not None:
        record["proposed_span"] = list(resolution.proposed_span)
        record["corrected_occurrence"] = resolution.corrected_occurrence
        record["repair_policy"] = resolution.repair_policy
    return record


def _sealed(resolution: SpanResolution) -> SpanResolution:
    return replace(resolution, decision_content_hash=digest(_record_without_hash(resolution)))


def _as_span(value: Any) -> Span | None:
    if value is None:
        return None
    start, end = value
    return (int(start), int(end))


def _from_record(record: Mapping[str, Any]) -> SpanResolution:
    try:
        return SpanResolution(
            section_sha256=record["section_sha256"],
            quote=record["quote"],
            original_occurrence=record["original_occurrence"],
            all_matches=tuple((int(s), int(e)) for s, e in record["all_matches"]),
            match_policy=record["match_policy"],
            span=_as_span(record["span"]),
            status=record["status"],
            decision_content_hash=record.get("decision_content_hash", ""),
            proposed_span=_as_span(record.get("proposed_span")),
            corrected_occurrence=record.get("corrected_occurrence"),
            repair_policy=record.get("repair_policy"),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise SpanStructuralError(
            "SPAN_REPAIR_NOT_APPLICABLE", f"The span decision record is malformed: {error}."
        ) from error
