"""Canonical JSON and SHA-256 digests (Kit §2.0). Pure: no Django import.

Every ID, root and approval hash in the product goes through this module, so that a document
hashed here has the same digest as the same document hashed by the public kit.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


class DuplicateKeyError(ValueError):
    pass


def canonical_bytes(value: Any) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


def digest(value: Any) -> str:
    """SHA-256 hex of the canonical JSON bytes of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not allowed")


def loads_strict(text: str) -> Any:
    """JSON read as the Kit reads it: no duplicate keys at any depth, no NaN/Infinity (ValueError)."""
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)


def parse_json(data: str | bytes) -> Any:
    """A Kit JSON file: utf-8-sig (a leading BOM is dropped), then ``loads_strict``."""
    if isinstance(data, bytes):
        data = data.decode("utf-8-sig")
    elif data.startswith("\ufeff"):
        data = data[1:]
    return loads_strict(data)


def write_json_bytes(value: Any) -> bytes:
    """The kit's on-disk form: canonical bytes plus a newline."""
    return canonical_bytes(value) + b"\n"
