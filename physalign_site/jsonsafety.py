"""The limits every JSON value from outside must meet before we keep it. Pure: no Django import.

PostgreSQL's jsonb and text columns refuse the NUL character, UTF-8 cannot encode an unpaired
surrogate (``"\\ud800"`` is valid JSON), canonical JSON (Kit §2.0) refuses NaN and infinities, and a
deeply nested value overflows the recursive code that walks it (validator, digests, templates).
API request bodies (``physalign_site.parsers``) and model outputs (``annotation.drafting.services``) are both
read through ``loads``, so none of these reaches a service.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64  # containers inside containers; a pass document needs fewer than ten
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class JSONRejected(ValueError):
    """A JSON text or value we refuse: ``code`` for programs, ``path`` (``$.a[0].b``) says where."""

    def __init__(self, message: str, *, code: str, path: str = "$") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path


def _reject_constant(name: str) -> Any:
    raise JSONRejected(f"JSON has no {name}; numbers must be finite.", code="json_number_not_finite")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_string: int | None = None) -> Any:
    """``json.loads`` that refuses NaN/Infinity and then ``check``s the value; every refusal is a
    ``JSONRejected`` (a ``ValueError``, like a syntax error, which is ``json.JSONDecodeError``)."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise JSONRejected(
            f"The JSON is nested more than {max_depth} levels deep.", code="json_too_deep"
        ) from None
    check(value, max_depth=max_depth, max_string=max_string)
    return value


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _where(path: tuple[str | int, ...]) -> str:
    """``$.visual_nodes[0].text``; a key that is not a plain name is quoted ASCII-only JSON
    (``$["a\\u0000"]``), so the path itself is always storable and printable."""
    parts = (
        f"[{part}]"
        if isinstance(part, int)
        else f".{part}"
        if _NAME.fullmatch(part)
        else f"[{json.dumps(part)}]"
        for part in path
    )
    return "$" + "".join(parts)


def _check_string(text: str, path: tuple[str | int, ...], max_string: int | None = None) -> None:
    if max_string is not None and len(text) > max_string:
        raise JSONRejected(
            f"A text of {len(text):,} characters is longer than the limit of {max_string:,} "
            f"(at {_where(path)}).",
            code="json_text_too_long",
            path=_where(path),
        )
    bad = _UNSTORABLE.search(text)
    if bad is None:
        return
    if bad.group() == "\x00":
        raise JSONRejected(
            f"JSON strings may not contain the NUL character \\u0000 (at {_where(path)}).",
            code="json_nul_character",
            path=_where(path),
        )
    raise JSONRejected(
        f"JSON strings may not contain an unpaired surrogate such as \\u{ord(bad.group()):04x} "
        f"(at {_where(path)}).",
        code="json_lone_surrogate",
        path=_where(path),
    )


def check(value: Any, *, max_depth: int = MAX_DEPTH, max_string: int | None = None) -> None:
    """Raise ``JSONRejected`` unless every string (keys too) is storable (and at most ``max_string``
    characters long, when given), every float is finite and no container is nested deeper than
    ``max_depth``. Iterative, so any depth is safe to check."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str):
            _check_string(node, path, max_string)
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise JSONRejected(
                    f"JSON numbers must be finite (at {_where(path)}).",
                    code="json_number_not_finite",
                    path=_where(path),
                )
        elif isinstance(node, dict | list):
            if depth >= max_depth:
                raise JSONRejected(
                    f"The JSON is nested more than {max_depth} levels deep (at {_where(path)}).",
                    code="json_too_deep",
                    path=_where(path),
                )
            if isinstance(node, dict):
                for key, item in node.items():
                    if isinstance(key, str):
                        _check_string(key, (*path, key), max_string)
                    stack.append((item, depth + 1, (*path, key)))
            else:
                stack.extend((item, depth + 1, (*path, index)) for index, item in enumerate(node))


def storable_text(text: str) -> str:
    """``text`` with NUL and unpaired surrogates replaced by U+FFFD, for keeping raw outside text
    (a model's output) that a text column would otherwise refuse."""
    return _UNSTORABLE.sub("\ufffd", text)
