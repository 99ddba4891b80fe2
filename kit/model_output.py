"""Finding the JSON object in a model's output, in one place: the scorer (Kit §5.1, exact), the drafters
(a fence in any spacing) and the debate solver's light stages (the first object anywhere) each pick their rule
here, and all of them read the JSON strictly where the Kit does."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .canonical import loads_strict

# Kit §5.1: one ```json (or bare ```) fence around the whole output, its marks on lines of their own.
EXACT_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n```")
LOOSE_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S)
_FIRST_OBJECT = re.compile(r"\{.*\}", re.S)


def unfenced(text: str, *, exact: bool = True) -> str | None:
    """``text`` stripped, without a fence around all of it. ``exact`` (the scorer): an output that starts
    with a fence must be exactly one Kit fence, else None. Not exact (drafts): a fence in any spacing is
    removed, anything else is kept as it is."""
    body = text.strip()
    if exact:
        if not body.startswith("```"):
            return body
        fence = EXACT_FENCE.fullmatch(body)
        return None if fence is None else fence.group(1)
    loose = LOOSE_FENCE.fullmatch(body)
    return loose.group(1) if loose else body


def scored_object(text: Any) -> dict[str, Any] | None:
    """Kit §5.1: the output is exactly one JSON object (optionally in one exact fence), read strictly
    (no duplicate keys at any depth, no NaN/Infinity); nothing is repaired. None otherwise, also when the
    output is not text at all."""
    if not isinstance(text, str):
        return None
    body = unfenced(text, exact=True)
    if body is None:
        return None
    try:
        value = loads_strict(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def first_object(text: str | None, *, loads: Callable[[str], Any] = json.loads) -> dict[str, Any] | None:
    """The whole output if it is JSON (an object, else None); if it is not JSON, the first ``{…}`` span in it
    that parses as an object (light stages may wrap their JSON in prose or a fence); else None."""
    if not text:
        return None
    try:
        whole = loads(text)
    except (ValueError, RecursionError):
        match = _FIRST_OBJECT.search(text)
        try:
            whole = loads(match.group(0)) if match else None
        except (ValueError, RecursionError):
            whole = None
    return whole if isinstance(whole, dict) else None
