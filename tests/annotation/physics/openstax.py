"""The OpenStax fixture (hand annotations of demo_data/real_physics) as pass documents for the physics checker."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "demo_data" / "real_physics" / "manifest.jsonl"
FIXTURE = Path(__file__).with_name("fixtures") / "openstax_annotations.json"
QUANTITY_KEYS = ("id", "kind", "symbol_latex", "value_latex", "unit_latex", "owner_id", "visual_anchor_ids")


def manifest() -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip())
    return {row["id"]: row for row in rows}


def annotations() -> dict[str, dict[str, Any]]:
    return {p["problem_id"]: p for p in json.loads(FIXTURE.read_text(encoding="utf-8"))["problems"]}


def documents(annotation: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Passes 1–4 of one annotation: Pass 1's text glyphs, Pass 2's nodes, Pass 3's quantities and query target,
    and Pass 4 holding all of them (what the consolidated G_obs carries)."""
    glyphs = [{"id": i, "type": "text_glyph", "text": text} for i, text in annotation["glyphs"].items()]
    nodes = [{"id": i, "type": kind} for i, kind in annotation["nodes"].items()]
    quantities = [
        dict(zip(QUANTITY_KEYS, copy.deepcopy(row), strict=True)) for row in annotation["quantities"]
    ]
    target = {"target_kind": annotation["target_kind"]}
    return {
        1: {"problem_id": annotation["problem_id"], "visual_nodes": glyphs},
        2: {"problem_id": annotation["problem_id"], "physical_nodes": nodes},
        3: {
            "problem_id": annotation["problem_id"],
            "new_or_updated_physical_nodes": [],
            "quantities": quantities,
            "query_target": target,
        },
        4: {
            "problem_id": annotation["problem_id"],
            "visual_nodes": copy.deepcopy(glyphs),
            "physical_nodes": copy.deepcopy(nodes),
            "quantities": copy.deepcopy(quantities),
            "query_target": dict(target),
        },
    }
