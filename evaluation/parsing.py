"""Response parsing (Kit §5.1). Pure: no Django import.

One JSON object, optionally inside exactly one ```json fence; duplicate keys at any depth and the
non-JSON constants NaN/Infinity/-Infinity are rejected; nothing is ever repaired.

Deliberate difference from the Kit: output that is not text (a list, a number, a dict, or null where a
provider returned no string) is not parsed, it gives None, so the item is scored ``unparseable`` (0 on
every field, kept in the denominator). The Kit's ``_parse_response`` raises ``TypeError`` on it instead.
"""

from __future__ import annotations

from typing import Any

from kit.model_output import scored_object


def parse_response(text: Any) -> dict[str, Any] | None:
    """The parsed object, or None when the output is not exactly one valid JSON object (also when it is
    not a string at all, where the Kit raises). The rule lives in ``kit.model_output``."""
    return scored_object(text)
