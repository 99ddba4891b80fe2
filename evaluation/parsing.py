"""Response parsing (Kit §5.1). Pure: no Django import.

One JSON object, optionally inside exactly one ```json fence; duplicate keys at any depth and the
non-JSON constants NaN/Infinity/-Infinity are rejected; nothing is ever repaired.

Deliberate difference from the Kit: output that is not text (a list, a number, a dict, or null where a
provider returned no string) is not parsed, it gives None, so the item is scored ``unparseable`` (0 on
every field, kept in the denominator). The Kit's ``_parse_response`` raises ``TypeError`` on it instead.
"""

from __future__ import annotations

from typing import Any

from kit.canonical import loads_strict
from kit.model_output import scored_object, unfenced

_EXCERPT = 40


def parse_response(text: Any) -> dict[str, Any] | None:
    """The parsed object, or None when the output is not exactly one valid JSON object (also when it is
    not a string at all, where the Kit raises). The rule lives in ``kit.model_output``."""
    return scored_object(text)


def kind_of(value: Any) -> str:
    """A JSON value's kind in words ("a string", "a list", …), for explanations."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def parse_failure(text: Any) -> str | None:
    """Why ``parse_response`` gives None for this output, in words (None when it parses). It walks the same
    steps as ``kit.model_output.scored_object``: text, the exact fence, strict JSON, an object."""
    if not isinstance(text, str):
        return f"the output is {kind_of(text)}, not text"
    if not text.strip():
        return "the output is empty"
    body = unfenced(text, exact=True)
    if body is None:
        return "it opens a ``` fence that is not exactly one fenced block around the whole output"
    try:
        value = loads_strict(body)
    except RecursionError:
        return "its JSON nests too deeply to read"
    except ValueError as exc:
        start = body.lstrip()[:1]
        if start not in ("{", "["):
            excerpt = body.strip()
            excerpt = excerpt if len(excerpt) <= _EXCERPT else excerpt[:_EXCERPT] + "…"
            return f"it is not a JSON object (it begins “{excerpt}”)"
        return f"it is not valid JSON ({exc})"
    if not isinstance(value, dict):
        return f"its JSON is {kind_of(value)}, not an object"
    return None
