"""Ids a user types (a form field, a command option): one parser for every place that takes a list of them."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[\s,;]+")


def parse_id_list(text: str | None) -> list[str]:
    """The ids in ``text``, in order, each once: separated by commas, semicolons or white space (a pasted
    column works too); empty pieces are dropped."""
    seen: dict[str, None] = {}
    for piece in _SEPARATORS.split(text or ""):
        if piece:
            seen.setdefault(piece, None)
    return list(seen)
