"""Memory masking (Debate §3.3.2), the pure half of the Pruner.

A pruning model labels each prior-round solution ``yes`` (fully correct), ``no`` or ``not sure``.
Memories labelled ``yes`` survive; ``no`` is always masked; ``not sure`` is masked in strict mode
(the paper's setting) and kept otherwise. A label that cannot be read counts as ``not sure``.
When every memory is masked, the next round re-solves without peer context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Label(StrEnum):
    YES = "yes"
    NO = "no"
    NOT_SURE = "not sure"


@dataclass(frozen=True)
class Memory:
    """One solver's solution from a round: its clean answer and the reasoning behind it."""

    solver: str
    answer: str
    reasoning: str


@dataclass(frozen=True)
class PruneResult:
    """Which memories survive. ``kept`` and ``masked`` keep the input order."""

    labels: tuple[Label, ...]
    kept: tuple[Memory, ...]
    masked: tuple[Memory, ...]

    @property
    def all_masked(self) -> bool:
        return not self.kept


# Longest phrases first, so "not sure" is never read as "no" and "incorrect" never as "correct".
_PHRASES: tuple[tuple[str, Label], ...] = (
    (
        r"not\s+sure|unsure|uncertain|cannot\s+(?:be\s+)?(?:determine|tell|verify)d?|can't\s+tell|unclear",
        Label.NOT_SURE,
    ),
    (r"not\s+(?:fully\s+)?correct|incorrect|wrong|not\s+reliable|unreliable", Label.NO),
    (r"no", Label.NO),
    (r"yes|(?:fully\s+)?correct|reliable", Label.YES),
)
_ANY_LABEL = re.compile(r"(?<![A-Za-z])(" + "|".join(p for p, _ in _PHRASES) + r")(?![A-Za-z])", re.I)
_FIELD = re.compile(
    r"<(?:label|verdict|judgment|judgement|answer|decision)>\s*(.*?)\s*</"
    r"|^\W*(?:label|verdict|judgment|judgement|decision|final\s+answer|answer)\s*[:：=]\s*(.+)$",
    re.I | re.M | re.S,
)


def parse_label(text: str) -> Label:
    """Read the pruning model's verdict; unreadable output is ``NOT_SURE``.

    The last labelled field (``<label>…</label>``, ``Verdict: no``, ``Answer: not sure``) decides;
    without one, the last label word in the text does (``… so the solution is correct. Yes``).
    """
    fields = [(m.group(1) or m.group(2) or "") for m in _FIELD.finditer(text or "")]
    for field in reversed(fields):
        label = _first_label(field)
        if label is not None:
            return label
    label = _last_label(text or "")
    return label if label is not None else Label.NOT_SURE


def parse_labels(text: str, count: int) -> tuple[Label, ...]:
    """Labels for ``count`` memories judged in one reply (``Solution 2: no`` lines, 1-based).

    Numbered lines win; otherwise the ``count`` label words in order; missing ones are ``NOT_SURE``.
    """
    numbered: dict[int, Label] = {}
    pattern = r"(?im)^\W*(?:solution|candidate|memory|answer|agent)?\s*#?(\d+)\s*[:.)\-]\s*(.+)$"
    for match in re.finditer(pattern, text or ""):
        index, label = int(match.group(1)), _first_label(match.group(2))
        if 1 <= index <= count and label is not None:
            numbered[index] = label
    if numbered:
        return tuple(numbered.get(index, Label.NOT_SURE) for index in range(1, count + 1))
    found = [_label_of(m.group(1)) for m in _ANY_LABEL.finditer(text or "")]
    found += [Label.NOT_SURE] * (count - len(found))
    return tuple(found[:count])


def apply_mask(memories: Sequence[Memory], labels: Sequence[Label], *, strict: bool = True) -> PruneResult:
    """Keep ``yes`` (and ``not sure`` unless ``strict``); mask the rest."""
    if len(memories) != len(labels):
        raise ValueError("one label per memory")
    keep = {Label.YES} if strict else {Label.YES, Label.NOT_SURE}
    kept = tuple(memory for memory, label in zip(memories, labels, strict=True) if label in keep)
    masked = tuple(memory for memory, label in zip(memories, labels, strict=True) if label not in keep)
    return PruneResult(labels=tuple(labels), kept=kept, masked=masked)


def _label_of(phrase: str) -> Label:
    for pattern, label in _PHRASES:
        if re.fullmatch(pattern, phrase, re.I):
            return label
    return Label.NOT_SURE


def _first_label(text: str) -> Label | None:
    match = _ANY_LABEL.search(text)
    return _label_of(match.group(1)) if match else None


def _last_label(text: str) -> Label | None:
    matches = list(_ANY_LABEL.finditer(text))
    return _label_of(matches[-1].group(1)) if matches else None
