"""Diagnostics that are reported, never used to filter (Kit §5.6). Pure."""

from __future__ import annotations

import re
from typing import Any

from kit.normalizers import LABEL, NUMBER, UNITS, normalize
from physalign_site.canonical import digest

NEAREST_POLICY = "public_R_center_to_rectangle_pixel_squared_v1"


def nearest_region(view: dict[str, Any], assets: dict[str, Any]) -> dict[str, Any]:
    """Integer arithmetic in source pixels ×2000; ties are reported, never broken."""
    base = {"policy": NEAREST_POLICY}
    if len(view["query_anchor_ids"]) != 1:
        return {**base, "status": "not_applicable", "reason": "query_arity"}
    anchor = view["anchors"][view["query_anchor_ids"][0]]
    if anchor["kind"] != "visual":
        return {**base, "status": "not_applicable", "reason": "text_R_has_no_visual_origin"}
    image = anchor["image_id"]
    width, height = assets[image]["width"], assets[image]["height"]
    x0, y0, x1, y1 = anchor["geometry"]["bbox_1000"]
    cx, cy = (x0 + x1) * width, (y0 + y1) * height
    distances = {}
    for candidate in view["candidates"]:
        boxes = [loc["geometry"]["bbox_1000"] for loc in candidate["locators"] if loc.get("image_id") == image]
        if not boxes:
            return {**base, "status": "not_applicable", "reason": "cross_image_candidate_distance_undefined"}
        distances[candidate["alias"]] = min(_distance2(cx, cy, box, width, height) for box in boxes)
    best = min(distances.values())
    tied = sorted(a for a, d in distances.items() if d == best)
    result = {**base, "distance2_numerators": distances, "denominator": 4_000_000}
    if len(tied) > 1:
        return {**result, "status": "tie", "tied_aliases": tied}
    return {**result, "status": "unique", "alias": tied[0]}


def _distance2(cx: int, cy: int, box: list[int], width: int, height: int) -> int:
    left, top, right, bottom = box
    dx = max(2 * left * width - cx, 0, cx - 2 * right * width)
    dy = max(2 * top * height - cy, 0, cy - 2 * bottom * height)
    return dx * dx + dy * dy


def public_text_availability(expected: str, messages: dict[str, str]) -> dict[str, Any]:
    """Is the expected reading already copyable from the strings actually sent to the model?"""
    target = normalize(expected, LABEL)
    texts = [["messages." + k, messages[k]] for k in sorted(messages)]
    result = {"raw_text_root": digest(texts), "vision_required": None, "unique_value_bound_to_R": "not_established"}
    if target is None:
        return {**result, "status": "unknown", "hit_multiplicity": 0}
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(target) + r"(?![A-Za-z0-9_])")
    hits = [(path, m.start()) for path, text in texts for m in pattern.finditer(text)]
    if hits:
        return {**result, "status": "verbatim_available", "hit_multiplicity": len(hits),
                "offsets": [[p, o] for p, o in hits]}
    number = re.fullmatch(r"(" + NUMBER + r") (" + "|".join(map(re.escape, UNITS)) + r")", target)
    if number:
        parts = [re.compile(r"(?<![A-Za-z0-9_.])" + re.escape(x) + r"(?![A-Za-z0-9_])") for x in number.groups()]
        if any(p.search(text) for p in parts for _, text in texts):
            return {**result, "status": "components_available", "hit_multiplicity": 0}
    return {**result, "status": "not_found", "hit_multiplicity": 0}


def representation_kind(visual_sources: list[str], visual_rows: dict[str, Any]) -> str:
    kinds = {visual_rows[v]["type"] == "text_glyph" for v in visual_sources if v in visual_rows}
    if kinds == {True}:
        return "label_only"
    if kinds == {False}:
        return "entity_geometry"
    return "mixed_or_unresolved"
