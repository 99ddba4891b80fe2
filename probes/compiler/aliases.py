"""Neutral aliases and display order (Kit §3.5): two SHA-256 orderings, no gold argument."""

from __future__ import annotations

import copy
from typing import Any

from kit.canonical import digest

from .errors import require

SELECTION_SEED = 2027


def neutral_aliases(
    targets: list[dict[str, Any]],
    logical_probe_id: str,
    *,
    variant_id: str = "main",
    seed: int = SELECTION_SEED,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    require(type(seed) is int and bool(logical_probe_id), "ALIAS_SEED_OR_ID")
    unique = {digest(t): copy.deepcopy(t) for t in targets}
    require(len(unique) == len(targets) and len(targets) >= 2, "CANDIDATE_UNIVERSE_INVALID")
    base = {"seed": seed, "logical_probe_id": logical_probe_id, "variant_id": variant_id}
    ordered = sorted(unique.values(), key=lambda t: digest({**base, "phase": "alias", "target": t}))
    mapping = {f"E{i + 1}": t for i, t in enumerate(ordered)}
    display = sorted(mapping, key=lambda a: digest({**base, "phase": "display", "alias": a}))
    return mapping, display


def logical_probe_id(identity: dict[str, Any]) -> str:
    """``PAQ-`` + digest of the stable source-query identity (never content, answer or seed)."""
    return "PAQ-" + digest(identity)
