"""Diagnostics that are reported, never used to filter (Kit §5.6). Pure.

Two public-only measurements, each in the Kit's names and shapes:

- :func:`nearest_region`: which candidate rectangle lies closest to the query anchor's centre, in
  exact integer arithmetic over source pixels. It has no key argument; correctness is attached
  afterwards by :func:`with_outcome`.
- :func:`read_availability`: is the expected reading of a read target already copyable from the
  strings actually sent to the model? A finite lexical scan (no arithmetic, no unit conversion) whose
  equality decision is the OCR normalizer's (``kit.normalizers``).
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from typing import Any

from kit.canonical import digest
from kit.nearest import DISTANCE_DENOMINATOR, NEAREST_POLICY, nearest_region, with_outcome
from kit.normalizers import LABEL, NUMBER, normalize, numeric_unit_parts

__all__ = [
    "DISTANCE_DENOMINATOR",
    "NEAREST_POLICY",
    "nearest_region",
    "read_availability",
    "representation_kind",
    "with_outcome",
]

AVAILABILITY_SCOPE_NOTE = "lexical_diagnostic_only_includes_public_geometry_and_repeated_excerpts"
AVAILABILITY_PRIORITY = "full_match_then_supported_components_then_lexical_absence; unsupported_is_unknown"

# A reading the scan can rule on when it finds nothing: one atomic label (a letter with an optional
# one/two-digit or single-character subscript, a Chinese ordinal, or a sign), a bare number, or a
# number with a listed unit. Anything else without a verbatim hit is ``unknown``, never ``not_found``.
_ATOMIC_LABEL = re.compile(
    r"(?:[A-Za-zΑ-Ωα-ω甲乙丙丁戊己庚辛壬癸](?:\d{1,2}|_[A-Za-z0-9]|_\{[A-Za-z0-9]{1,2}\})?|[+\-])"
)
_WORD = "A-Za-z0-9_Α-Ωα-ω"  # a hit may not continue a word on either side
_LATEX_GAP = r"(?:\s|\\[,;:! ])*"  # between number and unit: any whitespace (NBSP too) or LaTeX spacing
_LITERAL_NUMBER = re.compile(r"(?<![A-Za-z0-9_])" + NUMBER + r"(?![A-Za-z0-9_])")
# Keys of a message part that carry no text the model reads as text (roles, image payloads, paths).
_NOT_TEXT = frozenset({"role", "type", "url", "image_url", "data", "path", "bytes_sha256", "asset_id"})
_ATTACHMENT_TEXT = ("alt", "title", "caption", "text")


# Public text availability -----------------------------------------------------------------------
def public_text_fields(public_raw: dict[str, Any]) -> list[tuple[str, str]]:
    """``(path, text)`` of every string the model receives as text, in message order: all strings
    under ``messages`` (paths like ``/messages/user``; role/type/url/image data/path/hash/asset id
    keys skipped) and the ``alt``/``title``/``caption``/``text`` of each attachment. Paths, hashes,
    private keys and observation stores are not text channels and are never scanned."""
    fields: list[tuple[str, str]] = []
    _collect(public_raw.get("messages", {}), "/messages", fields)
    for i, attachment in enumerate(public_raw.get("attachments", [])):
        if isinstance(attachment, dict):
            for name in _ATTACHMENT_TEXT:
                if name in attachment:
                    _collect(attachment[name], f"/attachments/{i}/{name}", fields)
    return fields


def _collect(value: Any, path: str, fields: list[tuple[str, str]]) -> None:
    if isinstance(value, str):
        fields.append((path, value))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _collect(item, f"{path}/{i}", fields)
    elif isinstance(value, dict):
        for name, item in value.items():
            if name not in _NOT_TEXT:
                _collect(item, f"{path}/{name}", fields)


def read_availability(
    public_raw: dict[str, Any], expected: str, normalizer_id: str = LABEL
) -> dict[str, Any]:
    """Kit §5.6 availability of one expected reading in ``public_raw`` (``{"messages": …}``).

    ``verbatim_available`` (a full hit, always first), ``components_available`` (only the number or
    the unit of a number+unit reading), ``not_found`` (a finite reading with no hit) or ``unknown``
    (a reading outside the finite grammar, or one the normalizer does not support). Offsets are code
    points in the original string; a hit counts only if its original text normalizes to the target.
    """
    fields = public_text_fields(public_raw)
    target = normalize(expected, normalizer_id)
    finite = target is not None and bool(
        _ATOMIC_LABEL.fullmatch(target) or re.fullmatch(NUMBER, target) or numeric_unit_parts(target)
    )
    hits = _hits(fields, target, normalizer_id) if target is not None else []
    components: list[dict[str, Any]] = []
    parts = numeric_unit_parts(target) if finite and target is not None else None
    for part in parts or ():
        components.extend(
            {**hit, "component": part} for hit in _hits(fields, normalize(part, normalizer_id), normalizer_id)
        )
    if hits:
        status = "verbatim_available"
    elif not finite:
        status = "unknown"
    else:
        status = "components_available" if components else "not_found"
    # positions in the serialized input, not source mentions: a repeated excerpt repeats its numbers
    literals = {m.group() for _, text in fields for m in _LITERAL_NUMBER.finditer(text)}
    return {
        "public_text_availability": status,
        "normalizer_id": normalizer_id,
        "full_hits": hits,
        "component_hits": components,
        "scanned_fields": [path for path, _ in fields],
        "raw_text_root": digest(fields),
        "hit_multiplicity": "none" if not hits else "one" if len(hits) == 1 else "multiple",
        "distinct_public_numeric_literals": len(literals),
        "unique_value_bound_to_R": "not_established",
        "vision_required": None,
        "scope_note": AVAILABILITY_SCOPE_NOTE,
        "priority": AVAILABILITY_PRIORITY,
    }


def _hits(fields: list[tuple[str, str]], target: str | None, normalizer_id: str) -> list[dict[str, Any]]:
    if target is None:
        return []
    pattern = _candidate_pattern(target)
    hits = []
    for path, text in fields:
        comparison = unicodedata.normalize("NFC", text)
        spans = _original_spans(text, comparison)
        for match in pattern.finditer(comparison):
            start, end = spans[match.start()][0], spans[match.end() - 1][1]
            if normalize(text[start:end], normalizer_id) == target:
                hits.append(
                    {"field": path, "start": start, "end": end, "text": text[start:end], "normalized": target}
                )
    return hits


def _candidate_pattern(target: str) -> re.Pattern[str]:
    """A permissive finite grammar for places the target may be written (U+2212 for a minus; for a
    number+unit, LaTeX spacing or whitespace before the unit, or the unit inside ``\\mathrm{}`` or
    ``\\text{}``); the normalizer then decides equality. Never computes or reorders anything."""
    parts = numeric_unit_parts(target)
    if parts:
        number, unit = parts
        unit_forms = re.escape(unit) + r"|\\(?:mathrm|text)\{" + re.escape(unit) + r"\}"
        body = _with_unicode_minus(number) + _LATEX_GAP + "(?:" + unit_forms + ")"
    else:
        body = _with_unicode_minus(target)
    return re.compile(f"(?<![{_WORD}])(?:{body})(?![{_WORD}])")


def _with_unicode_minus(text: str) -> str:
    return re.escape(text).replace(r"\-", "[\\-\u2212]")


def _original_spans(text: str, comparison: str) -> list[tuple[int, int]]:
    """For each code point of ``comparison`` (the NFC form of ``text``), the ``[start, end)`` of
    ``text`` it comes from; a composed character maps to the whole run it replaced."""
    if comparison == text:
        return [(i, i + 1) for i in range(len(text))]
    spans: list[tuple[int, int]] = []
    for tag, i, j, a, b in SequenceMatcher(None, text, comparison, autojunk=False).get_opcodes():
        if tag == "equal":
            spans.extend((k, k + 1) for k in range(i, j))
        else:
            spans.extend((i, j) for _ in range(a, b))
    return spans


# Representation ---------------------------------------------------------------------------------
def representation_kind(visual_sources: list[str], visual_rows: dict[str, Any]) -> str:
    kinds = {visual_rows[v]["type"] == "text_glyph" for v in visual_sources if v in visual_rows}
    if kinds == {True}:
        return "label_only"
    if kinds == {False}:
        return "entity_geometry"
    return "mixed_or_unresolved"
