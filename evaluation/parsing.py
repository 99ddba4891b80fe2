"""Response parsing (Kit §5.1). Pure: no Django import.

One JSON object, optionally inside exactly one ```json fence; duplicate keys at any depth and the
non-JSON constants NaN/Infinity/-Infinity are rejected; nothing is ever repaired.

Deliberate difference from the Kit: output that is not text (a list, a number, a dict, or null where a
provider returned no string) is not parsed, it gives None, so the item is scored ``unparseable`` (0 on
every field, kept in the denominator). The Kit's ``_parse_response`` raises ``TypeError`` on it instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n```")


class _Invalid(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Invalid(f"duplicate key {key!r}")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise _Invalid(f"non-JSON constant {name}")


def parse_response(text: Any) -> dict[str, Any] | None:
    """The parsed object, or None when the output is not exactly one valid JSON object (also when it is
    not a string at all, where the Kit raises)."""
    if not isinstance(text, str):
        return None
    body = text.strip()
    if body.startswith("```"):
        fence = _FENCE.fullmatch(body)
        if fence is None:
            return None
        body = fence.group(1)
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
