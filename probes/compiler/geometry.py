"""Locators, geometry validation and origins (Kit §2.6). Pure."""

from __future__ import annotations

import copy
import math
from typing import Any

from kit.canonical import canonical_bytes, digest, text_digest

from .errors import CompileError, require


def _finite(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def validate_bbox(bbox: Any) -> None:
    """Compile-time validity is strict: 0 ≤ x0 < x2 ≤ 1000 and 0 ≤ y0 < y2 ≤ 1000."""
    require(isinstance(bbox, list) and len(bbox) == 4 and all(_finite(v) for v in bbox), "GEOMETRY_INVALID")
    require(0 <= bbox[0] < bbox[2] <= 1000 and 0 <= bbox[1] < bbox[3] <= 1000, "GEOMETRY_INVALID")


def visual_locator(image_id: str, bbox: list[int]) -> dict[str, Any]:
    return {"kind": "visual", "image_id": image_id, "geometry": {"type": "bbox", "bbox_1000": list(bbox)}}


def text_locator(section: str, start: int, end: int, quote: str, text: str) -> dict[str, Any]:
    return {
        "kind": "text",
        "section": section,
        "start": start,
        "end": end,
        "quote": quote,
        "section_sha256": text_digest(text),
    }


def validate_locator(loc: dict[str, Any], context: dict[str, Any], assets: dict[str, Any]) -> None:
    if loc.get("kind") == "visual":
        require(set(loc) == {"kind", "image_id", "geometry"}, "PUBLIC_FIELD_FORBIDDEN")
        image = loc["image_id"]
        require(image in context["image_ids"] and image in assets, "ASSET_MISSING", str(image))
        geometry = loc["geometry"]
        if geometry.get("type") != "bbox" or set(geometry) != {"type", "bbox_1000"}:
            raise CompileError("UNSUPPORTED_GEOMETRY", str(geometry.get("type")))
        validate_bbox(geometry["bbox_1000"])
    elif loc.get("kind") == "text":
        section = loc["section"]
        require(section in ("stem", "query"), "TEXT_SECTION_INVALID")
        text = context[section]
        start, end = loc["start"], loc["end"]
        require(
            type(start) is int and type(end) is int and 0 <= start < end <= len(text), "TEXT_RANGE_INVALID"
        )
        require(text_digest(text) == loc["section_sha256"], "SOURCE_TEXT_STALE")
        require(text[start:end] == loc["quote"], "TEXT_QUOTE_MISMATCH")
    else:
        raise CompileError("LOCATOR_INVALID")


def active_origin(loc: dict[str, Any], context: dict[str, Any], assets: dict[str, Any]) -> dict[str, Any]:
    """``{locator, source_version}``: original image bytes SHA-256, or the section's text digest."""
    validate_locator(loc, context, assets)
    if loc["kind"] == "visual":
        version = assets[loc["image_id"]]["bytes_sha256"]
    else:
        version = text_digest(context[loc["section"]])
    return {"locator": copy.deepcopy(loc), "source_version": version}


def origin_fingerprint(origin: dict[str, Any]) -> str:
    return digest(origin)


def source_points(loc: dict[str, Any], width: int, height: int) -> list[list[float]]:
    """Source-pixel polygon of a bbox locator: x·W/1000, y·H/1000, clockwise from top-left."""
    x1, y1, x2, y2 = loc["geometry"]["bbox_1000"]
    corners = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
    return [[x * width / 1000, y * height / 1000] for x, y in corners]


def affine_points(points: list[list[float]], matrix: list[int]) -> list[list[float]]:
    a, b, c, d, e, f = matrix
    return [[a * x + b * y + c, d * x + e * y + f] for x, y in points]


def view_fingerprint(locators: list[dict[str, Any]]) -> str:
    """Identical locator sets mean indistinguishable candidates."""
    return digest(sorted({canonical_bytes(loc).decode("utf-8") for loc in locators}))
