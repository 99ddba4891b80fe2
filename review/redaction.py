"""What of a probe is private, and withholding it from text. Pure: no Django import.

A probe's private strings are what its key and +GT side know and its public prompt does not: the read
targets' expected texts, the candidate→entity ids (every candidate's and the gold ones), the +GT packet
texts, and the diagnostics marked ``_PRIVATE`` (candidate native types). Siblings of one parent share
entities, anchors and packets, so revealing one probe can give away another's target; every response
to a reviewer is passed through :func:`redact` with the strings of the probes that reviewer has not
answered blind yet.

Gold *aliases* (``E2``) are private as a binding but are also public labels in every prompt, so they
cannot be withheld as text; the strict blind order (every probe of the parent answered before any
reveal) is what protects them.

Who must stay blind to a probe (``review.selectors.withholding_for`` decides, this module phrases it): a
primary or secondary reviewer, to every probe of the parent they have not answered blind (those of their own
review, and those outside it, which they may still review elsewhere); an adjudicator, to the probes of their
own adjudication they have not answered and to the probes the two reviewers have not both decided yet (a
disagreement would bring them to the adjudicator to answer blind). A probe both reviewers have decided
without dispute never comes to the adjudicator, so nothing of it is withheld from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

WITHHELD = "[withheld: private to a probe you may still answer blind]"


@dataclass(frozen=True)
class WithheldProbes:
    """How many of the parent's probes one reviewer must stay blind to, by the reason that is true for them."""

    own_unanswered: int = 0  # in the reviewer's own work, not answered blind yet
    undecided: int = 0  # adjudicator: not (yet) disputed, and not decided by both reviewers
    outside: int = 0  # primary/secondary: not part of this review context

    @property
    def any(self) -> bool:
        return bool(self.own_unanswered or self.undecided or self.outside)


def _probes(n: int, *, other: bool = False) -> str:
    return f"{n} {'other ' if other else ''}probe{'s' if n != 1 else ''} of this parent"


def withholding_message(reasons: WithheldProbes, *, order_name: str) -> str:
    """The sentence that tells one reviewer why text is withheld and when (if ever) it appears; every clause is
    true for that reviewer (an adjudicator is never told to answer probes that are not theirs to answer)."""
    parts: list[str] = []
    if reasons.own_unanswered:
        n = reasons.own_unanswered
        parts.append(
            f"{_probes(n)} that you have not answered blind yet (the {order_name} opens each target after "
            f"your own blind answer): it appears once you have answered {'it' if n == 1 else 'them'}"
        )
    if reasons.undecided:
        n = reasons.undecided
        parts.append(
            f"{_probes(n, other=True)} that the primary and secondary reviewers have not both decided yet: a "
            f"disagreement would bring {'it' if n == 1 else 'one'} to you to answer blind, so you stay blind to "
            f"{'it' if n == 1 else 'them'}; the text appears once both reviewers have decided without dispute, "
            f"or after your own blind answer if {'it comes' if n == 1 else 'one comes'} to you"
        )
    if reasons.outside:
        n = reasons.outside
        parts.append(
            f"{_probes(n)} that {'is' if n == 1 else 'are'} not part of this review: you may still review "
            f"{'it' if n == 1 else 'them'} blind elsewhere, so the text stays withheld here"
        )
    if not parts:
        return ""
    return f"Some text is withheld (shown as {WITHHELD}): it is private to " + "; and to ".join(parts) + "."


def _leaf_strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _leaf_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaf_strings(item)


def private_strings(
    *, key: Mapping[str, Any], gold_view: Mapping[str, Any], metadata: Mapping[str, Any]
) -> set[str]:
    """Every private string of one probe (see the module docstring)."""
    found: set[str] = set()
    found.update(str(read.get("expected", "")) for read in key.get("read_targets") or [])
    found.update(str(target.get("id", "")) for target in (key.get("candidate_map") or {}).values())
    found.update(str(target.get("id", "")) for target in key.get("gold_targets") or [])
    found.update(str(entry.get("text", "")) for entry in gold_view.get("recognition_packet") or [])
    for name, value in metadata.items():
        if name.endswith("_PRIVATE"):
            found.update(_leaf_strings(value))
    return {text for text in found if text.strip()}


def withheld(private: Iterable[str], *, public_text: str) -> frozenset[str]:
    """The private strings that the public text does not already show (those need no withholding: a
    reviewer sees the public prompt anyway, and masking them would garble it)."""
    return frozenset(text for text in private if text not in public_text)


def _pattern(strings: frozenset[str]) -> re.Pattern[str] | None:
    if not strings:
        return None
    return re.compile("|".join(re.escape(text) for text in sorted(strings, key=len, reverse=True)))


def redact(value: Any, strings: frozenset[str]) -> Any:
    """``value`` (JSON-like) with every occurrence of ``strings`` inside any string replaced by WITHHELD."""
    pattern = _pattern(strings)
    if pattern is None:
        return value

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return pattern.sub(WITHHELD, node)
        if isinstance(node, Mapping):
            return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(item) for item in node]
        return node

    return walk(value)
