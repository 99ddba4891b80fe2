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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

WITHHELD = "[withheld until you answer every probe of this parent blind]"


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
