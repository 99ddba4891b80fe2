"""The checks that keep an unscorable probe out of every pool (Kit ``prepare_probe``). Pure.

The Kit compiles a group, then validates the draft before it keeps it; a failed check blocks that one
group (the parent's other groups still compile) with the check's code. These are the checks that guard
scorability, restated in one place and run in the Kit's order:

1. :func:`check_observations` (before the packet is built): every observation bound to an anchor is
   approved, meaningful text; every read target is the observation at its own anchor, with that
   observation's exact text and origin as its truth.
2. :func:`check_pair`: the raw view carries no packet, raw and +GT differ only in the packet, every
   packet entry is non-blank, and the packet text at a read anchor is the read's truth.
3. :func:`check_response_contract`: the response contract is well formed and consistent with the reads
   and candidates; every gold reading normalizes under its normalizer (``UNSUPPORTED_GOLD_READING``).
4. :func:`check_joint_reading`: a read is an image glyph reading; the public view asks for the reads
   the contract scores.
5. :func:`check_task_contract`: the contract's binding key and cardinality are those of the task
   registry (the prompt set's task file), and the question has exactly one query anchor.
"""

from __future__ import annotations

import re
from typing import Any

from kit.normalizers import PROFILES, meaningful_text, normalize

from .errors import require
from .geometry import origin_fingerprint

BINDING_KEYS = ("owner", "referent", "role", "subjects", "endpoint", "evidence")
CARDINALITIES = ("one", "set")
READ_SHAPES = ("none", "string", "object_by_anchor")
CONTRACT_KEYS = {"binding_key", "cardinality", "read_shape", "read_anchor_ids"}
TARGET_KINDS = ("entity", "role", "evidence")
_R_ALIAS = re.compile(r"R[1-9][0-9]*")
_E_ALIAS = re.compile(r"E[1-9][0-9]*")


def check_observations(key: dict[str, Any], observations: dict[str, Any]) -> dict[str, str]:
    """Return observation id → anchor alias, or raise the Kit's observation/read code."""
    alias_of: dict[str, str] = {}
    for alias, meta in key["anchor_map"].items():
        for oid in meta["observation_ids"]:
            require(
                oid in observations and oid not in alias_of, "DUPLICATE_OR_UNKNOWN_OBSERVATION_ALIAS", oid
            )
            observation = observations[oid]
            require(
                observation.get("observation_id") == oid and observation.get("state") == "approved",
                "OBSERVATION_UNAPPROVED",
                oid,
            )
            require(meaningful_text(observation.get("text")), "EMPTY_OBSERVATION_TEXT", oid)
            alias_of[oid] = alias
    for target in key["read_targets"]:
        oid = target["observation_id"]
        require(
            oid in observations and alias_of.get(oid) == target["anchor_alias"],
            "READ_OBSERVATION_ANCHOR_MISMATCH",
            oid,
        )
        require(target.get("expected") == observations[oid]["text"], "READ_TEXT_MISMATCH", oid)
        require(
            target.get("origin_fingerprint") == origin_fingerprint(observations[oid]["origin"]),
            "READ_ORIGIN_MISMATCH",
            oid,
        )
    return alias_of


def check_pair(raw: dict[str, Any], gold: dict[str, Any], key: dict[str, Any]) -> None:
    require(raw.get("recognition_packet") == [], "RAW_HAS_PACKET")
    require(
        {k: v for k, v in raw.items() if k != "recognition_packet"}
        == {k: v for k, v in gold.items() if k != "recognition_packet"},
        "RAW_GOLD_UNMATCHED",
    )
    packet = gold["recognition_packet"]
    for entry in packet:
        require(
            isinstance(entry.get("text"), str) and bool(entry["text"].strip()),
            "PACKET_INVALID",
            str(entry.get("anchor")),
        )
    shown = {entry["anchor"]: entry["text"] for entry in packet}
    planned = set(key["packet_plan"]["observation_ids"])
    for target in key["read_targets"]:
        if target["observation_id"] in planned:
            require(
                shown.get(target["anchor_alias"]) == target["expected"],
                "PACKET_TEXT_MISMATCH",
                target["anchor_alias"],
            )


def check_response_contract(key: dict[str, Any]) -> None:
    """The Kit's response-contract validation: an output shape the scorer can score, and a gold it can read."""
    contract = key["response_contract"]
    require(set(contract) == CONTRACT_KEYS, "RESPONSE_CONTRACT_KEYS")
    require(contract["binding_key"] in BINDING_KEYS, "BINDING_KEY", str(contract["binding_key"]))
    require(contract["cardinality"] in CARDINALITIES, "CARDINALITY")
    require(contract["read_shape"] in READ_SHAPES, "READ_SHAPE")
    ids = contract["read_anchor_ids"]
    require(
        isinstance(ids, list) and all(isinstance(x, str) and _R_ALIAS.fullmatch(x) for x in ids),
        "READ_ANCHORS",
    )
    require(len(ids) == len(set(ids)), "DUPLICATE_READ_ANCHOR")
    shape = contract["read_shape"]
    require(
        (shape == "none" and not ids)
        or (shape == "string" and len(ids) == 1)
        or (shape == "object_by_anchor" and len(ids) >= 2),
        "READ_SHAPE_ARITY",
    )
    require(
        type(key["joint_eligible"]) is bool and key["joint_eligible"] == bool(ids), "JOINT_CONTRACT_MISMATCH"
    )
    targets = key["read_targets"]
    require(
        isinstance(targets, list) and [t["anchor_alias"] for t in targets] == ids,
        "READ_TARGET_ORDER_OR_COVERAGE",
    )
    for target in targets:
        require(target["normalizer_id"] in PROFILES, "UNKNOWN_NORMALIZER", str(target["normalizer_id"]))
        require(
            normalize(target["expected"], target["normalizer_id"]) is not None,
            "UNSUPPORTED_GOLD_READING",
            f"{target['anchor_alias']}: {target['expected']!r} under {target['normalizer_id']}",
        )
    candidates = key["candidate_map"]
    require(isinstance(candidates, dict) and len(candidates) >= 2, "CANDIDATE_MAP")
    for alias, target in candidates.items():
        require(isinstance(alias, str) and _E_ALIAS.fullmatch(alias) is not None, "ALIAS_SCHEMA", str(alias))
        require(
            isinstance(target, dict)
            and set(target) == {"kind", "id"}
            and target["kind"] in TARGET_KINDS
            and isinstance(target["id"], str)
            and bool(target["id"]),
            "CANONICAL_TARGET",
            alias,
        )
    universe = {(t["kind"], t["id"]) for t in candidates.values()}
    require(len(universe) == len(candidates), "DUPLICATE_CANONICAL_CANDIDATE")
    gold = key["gold_targets"]
    require(isinstance(gold, list) and bool(gold), "EMPTY_GOLD")
    require(all(isinstance(t, dict) and set(t) == {"kind", "id"} for t in gold), "GOLD_SCHEMA")
    gold_set = {(t["kind"], t["id"]) for t in gold}
    require(len(gold_set) == len(gold) and gold_set <= universe, "GOLD_CANDIDATE_COVERAGE")
    require(contract["cardinality"] != "one" or len(gold_set) == 1, "SINGLE_TARGET_COUNT")


def check_joint_reading(key: dict[str, Any], raw: dict[str, Any], observations: dict[str, Any]) -> None:
    for target in key["read_targets"]:
        observation = observations[target["observation_id"]]
        require(
            raw["anchors"][target["anchor_alias"]]["kind"] == "visual"
            and observation["asset_role"] == "diagram"
            and observation["source_kind"] == "text_glyph",
            "MAIN_JOINT_REQUIRES_IMAGE_READING",
            target["anchor_alias"],
        )
    require(
        key["response_contract"]["read_anchor_ids"] == raw["read_anchor_ids"], "PUBLIC_READ_CONTRACT_MISMATCH"
    )


def check_task_contract(key: dict[str, Any], raw: dict[str, Any], tasks: dict[str, Any]) -> None:
    """The contract must be the one the task registry defines, or the question asks for another field."""
    task = tasks.get(key["task_id"])
    contract = key["response_contract"]
    allowed = task.get("allowed_cardinalities") if isinstance(task, dict) else None
    require(
        isinstance(task, dict)
        and contract["binding_key"] == task.get("binding_key")
        and isinstance(allowed, list)
        and contract["cardinality"] in allowed,
        "TASK_OUTPUT_CONTRACT",
        key["task_id"],
    )
    require(len(raw["query_anchor_ids"]) == 1, "CORE_QUERY_ANCHOR_ARITY")


def check_scorable(
    key: dict[str, Any],
    raw: dict[str, Any],
    gold: dict[str, Any],
    observations: dict[str, Any],
    tasks: dict[str, Any],
) -> None:
    """Steps 2–5, after the packet is built; raise the first failing check's CompileError."""
    check_pair(raw, gold, key)
    check_response_contract(key)
    check_joint_reading(key, raw, observations)
    check_task_contract(key, raw, tasks)
