"""The one strict JSON parser for every JSON value from outside, and the limits it must meet before we keep
it. Pure: no Django import.

PostgreSQL's jsonb and text columns refuse the NUL character, UTF-8 cannot encode an unpaired
surrogate (``"\\ud800"`` is valid JSON), canonical JSON (Kit §2.0) refuses NaN and infinities, the Kit
refuses a key given twice (which value would count?), and a deeply nested value overflows the recursive
code that walks it (validator, digests, templates). So ``loads`` refuses all of these, and anything
longer than ``MAX_BYTES`` (or the caller's ``max_bytes``), with one ``JSONRejected`` that says what and
where. Every JSON a user hands the app is read through it: API request bodies
(``physalign_site.parsers``), uploaded Kit decision files and Kit drafts (``review``), the files of an
import (``annotation.importers.rows.parse_stored_json``) — and model outputs too
(``annotation.drafting.services``), so none of these reaches a service.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64  # containers inside containers; a pass document needs fewer than ten
MAX_BYTES = (
    64 * 1024 * 1024
)  # the largest JSON text we read at all (API bodies and uploads have tighter caps)
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


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            # the Kit's wording (kit.canonical.loads_strict); the key as ASCII-only JSON, so always printable
            raise JSONRejected(
                f"duplicate key {json.dumps(key)}: a JSON object may name a key once.",
                code="json_duplicate_key",
            )
        result[key] = value
    return result


def loads(
    text: str | bytes,
    *,
    max_depth: int = MAX_DEPTH,
    max_string: int | None = None,
    max_bytes: int = MAX_BYTES,
) -> Any:
    """The strict parser: ``json.loads`` that refuses a text over ``max_bytes``, bytes that are not UTF-8 (a
    leading BOM is dropped, as the Kit reads files), NaN/Infinity and a key given twice, then ``check``s the
    value (depth, storable strings, ``max_string``). Every refusal is a ``JSONRejected`` (a ``ValueError``,
    like a syntax error, which is ``json.JSONDecodeError``); any depth is safe to hand it."""
    size = len(text)
    if isinstance(text, str) and size * 4 > max_bytes:  # a character is at most four UTF-8 bytes
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise JSONRejected(
            f"The JSON is {size:,} bytes long, more than the limit of {max_bytes:,}.", code="json_too_large"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JSONRejected(
                f"The JSON is not valid UTF-8 (byte {exc.start:,}).", code="json_not_utf8"
            ) from None
    elif text.startswith("\ufeff"):
        text = text[1:]
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
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


def unstorable_character(text: str) -> str | None:
    """What in ``text`` a text column cannot hold (``"the NUL character \\u0000"``, ``"an unpaired
    surrogate such as \\ud800"``), or None: the check of form fields and query parameters
    (``physalign_site.params.require_storable``), worded as the JSON refusals are."""
    bad = _UNSTORABLE.search(text)
    if bad is None:
        return None
    if bad.group() == "\x00":
        return "the NUL character \\u0000"
    return f"an unpaired surrogate such as \\u{ord(bad.group()):04x}"


def printable(text: str) -> str:
    """``text`` itself when it is storable and has no control character, else its ASCII-only JSON form
    without the quotes (``a\\u0000``): a field name or value that a message can always show."""
    if text.isprintable():  # NUL and surrogates are not
        return text
    return json.dumps(text)[1:-1]


def storable_text(text: str) -> str:
    """``text`` with NUL and unpaired surrogates replaced by U+FFFD, for keeping raw outside text
    (a model's output) that a text column would otherwise refuse."""
    return _UNSTORABLE.sub("\ufffd", text)
