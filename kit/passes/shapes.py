"""The shapes a Pass 1 visual node draws and the ``bbox_1000`` derived from them (Kit §2.4, §2.6). Pure.

A visual node always carries ``bbox_1000``; the Kit's compiler and renderer use only that box ("the native
adapter emits only bbox from the explicit bbox_1000"). The workspace also draws what the node's other
fields hold, and derives the box from them when an annotator draws or edits a shape:

==============  ==========  =========================================================================
type            shape       fields
==============  ==========  =========================================================================
point_mark      point       one keypoint
line_segment    line        two keypoints
arrow           arrow       two keypoints, tail then head (the arrowhead at the second)
polyline        polyline    two or more keypoints, in drawing order
curve           curve       two or more keypoints the curve passes through
circle          circle      ``center_1000`` and ``radius_1000``; no keypoints
arc             arc         centre and radius, and its two end points as keypoints: the arc runs
                            clockwise on screen (y down) from the first to the second
angle_mark      angle       three keypoints: the vertex, then the end of each arm
==============  ==========  =========================================================================

A node of these types without those fields (a box drawn around an arrow, as the Kit's examples do) is a
box, and so is every node of the other types. Keypoints and the centre are in the per-axis 0–1000 frame
(x·1000/W, y·1000/H); the radius is normalized by min(W, H)/1000, as the Kit's circle locator is. −1 means
absent (``[-1, -1]``, ``-1``).

The JavaScript twin is ``static/js/workspace/shapes.js``; both follow the same arithmetic, so the box the
workspace saves is the box :func:`derived_bbox` gives (tests/annotation/test_shapes.py pins the values).
"""

from __future__ import annotations

import math
from typing import Any

SHAPE_OF_TYPE: dict[str, str] = {
    "point_mark": "point",
    "line_segment": "line",
    "arrow": "arrow",
    "polyline": "polyline",
    "curve": "curve",
    "circle": "circle",
    "arc": "arc",
    "angle_mark": "angle",
}
KEYPOINT_COUNT: dict[str, tuple[int, int | None]] = {  # shape -> (fewest, most) keypoints it draws from
    "point": (1, 1),
    "line": (2, 2),
    "arrow": (2, 2),
    "polyline": (2, None),
    "curve": (2, None),
    "circle": (0, 0),
    "arc": (2, 2),
    "angle": (3, 3),
}
ROUND_SHAPES = ("circle", "arc")
# The smallest side of a derived box, in 0–1000 units: a point or a horizontal line still has an area, so
# the compiler's 0 ≤ x0 < x2 ≤ 1000 and 0 ≤ y0 < y2 ≤ 1000 hold for every drawn shape.
MIN_SIDE = 10


def _is_int(value: object) -> bool:
    return type(value) is int


def _pairs(value: object) -> list[tuple[int, int]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for point in value:
        if not (isinstance(point, list) and len(point) == 2 and all(_is_int(v) for v in point)):
            return None
        out.append((point[0], point[1]))
    return out


def center_of(node: dict[str, Any]) -> tuple[int, int] | None:
    """The centre, or ``None`` when absent (``[-1, -1]``) or malformed."""
    center = node.get("center_1000")
    if isinstance(center, list) and len(center) == 2 and all(_is_int(v) and v >= 0 for v in center):
        return center[0], center[1]
    return None


def radius_of(node: dict[str, Any]) -> int | None:
    radius = node.get("radius_1000")
    return radius if isinstance(radius, int) and _is_int(radius) and radius > 0 else None


def shape_of(node: dict[str, Any]) -> str | None:
    """The shape the node draws (``"arrow"``, ``"circle"``, …), or ``None`` for a box."""
    shape = SHAPE_OF_TYPE.get(str(node.get("type")))
    points = _pairs(node.get("keypoints_1000"))
    if shape is None or points is None:
        return None
    fewest, most = KEYPOINT_COUNT[shape]
    if len(points) < fewest or (most is not None and len(points) > most):
        return None
    if shape in ROUND_SHAPES and (center_of(node) is None or radius_of(node) is None):
        return None
    return shape


def radius_extent(radius: int, width: int, height: int) -> tuple[float, float]:
    """The radius in per-axis 0–1000 units (x, y): it is stored normalized by min(W, H)."""
    short = min(width, height)
    return radius * short / width, radius * short / height


def _tau_mod(angle: float) -> float:
    return angle % math.tau


def arc_extent_points(
    center: tuple[int, int],
    radius: int,
    start: tuple[int, int],
    end: tuple[int, int],
    width: int,
    height: int,
) -> list[tuple[float, float]]:
    """The end points and every axis extreme the arc passes, clockwise on screen from ``start`` to ``end``."""
    cx, cy = center
    rx, ry = radius_extent(radius, width, height)
    a0 = math.atan2((start[1] - cy) * height, (start[0] - cx) * width)
    a1 = math.atan2((end[1] - cy) * height, (end[0] - cx) * width)
    sweep = _tau_mod(a1 - a0)
    points: list[tuple[float, float]] = [(float(start[0]), float(start[1])), (float(end[0]), float(end[1]))]
    extremes = [(cx + rx, cy), (cx, cy + ry), (cx - rx, cy), (cx, cy - ry)]  # angles 0, π/2, π, 3π/2
    for k, point in enumerate(extremes):
        if _tau_mod(k * math.pi / 2 - a0) <= sweep:
            points.append(point)
    return points


def extent_points(node: dict[str, Any], width: int, height: int) -> list[tuple[float, float]]:
    """The points whose bounding box is the shape's (no padding); ``[]`` for a box."""
    shape = shape_of(node)
    if shape is None:
        return []
    points = _pairs(node.get("keypoints_1000")) or []
    if shape == "circle":
        center, radius = center_of(node), radius_of(node)
        assert center is not None and radius is not None
        rx, ry = radius_extent(radius, width, height)
        return [(center[0] - rx, center[1] - ry), (center[0] + rx, center[1] + ry)]
    if shape == "arc":
        center, radius = center_of(node), radius_of(node)
        assert center is not None and radius is not None
        return arc_extent_points(center, radius, points[0], points[1], width, height)
    return [(float(x), float(y)) for x, y in points]


def _axis(low: float, high: float) -> tuple[int, int]:
    a = max(0, min(1000, math.floor(low)))
    b = max(0, min(1000, math.ceil(high)))
    short = MIN_SIDE - (b - a)
    if short > 0:
        a -= short // 2
        b += short - short // 2
        if a < 0:
            b -= a
            a = 0
        if b > 1000:
            a -= b - 1000
            b = 1000
    return a, b


def derived_bbox(node: dict[str, Any], width: int, height: int) -> list[int] | None:
    """``bbox_1000`` of the shape: its extent rounded outwards, clipped to 0–1000, each side at least
    ``MIN_SIDE``; ``None`` for a box (its bbox is what the annotator drew)."""
    points = extent_points(node, width, height)
    if not points:
        return None
    x0, x1 = _axis(min(p[0] for p in points), max(p[0] for p in points))
    y0, y1 = _axis(min(p[1] for p in points), max(p[1] for p in points))
    return [x0, y0, x1, y1]
