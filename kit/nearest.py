"""The Kit's nearest-region rule (``public_R_center_to_rectangle_pixel_squared_v1``, Kit §5.6). Pure.

One rule, three callers: the compiler's diagnostic (reported per probe, ties never broken), the
evaluation controls and the ``baseline-ocr-nearest`` provider (which must answer, so they break a tie by
the frozen candidate display order: :func:`controls_choice`).
"""

from __future__ import annotations

from typing import Any

NEAREST_POLICY = "public_R_center_to_rectangle_pixel_squared_v1"
DISTANCE_DENOMINATOR = 4_000_000  # centres and edges are scaled by 2000, squared distances by its square


def nearest_region(view: dict[str, Any], image_sizes: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """R-centre to candidate-rectangle squared distance in source pixels (numerators over 4,000,000).

    ``image_sizes`` maps an original image id to ``(width, height)``. A candidate with several parts
    takes its nearest part; ties are reported (``tied_aliases``), never broken.
    """
    if len(view["query_anchor_ids"]) != 1:
        return {"status": "not_applicable", "reason": "query_arity"}
    anchor = view["anchors"][view["query_anchor_ids"][0]]
    if anchor["kind"] != "visual":
        return {"status": "not_applicable", "reason": "text_R_has_no_visual_origin"}
    if anchor["geometry"]["type"] != "bbox":
        return {"status": "not_applicable", "reason": "unsupported_geometry"}
    image = anchor["image_id"]
    width, height = image_sizes[image]
    x0, y0, x1, y1 = anchor["geometry"]["bbox_1000"]
    cx, cy = (x0 + x1) * width, (y0 + y1) * height
    distances: dict[str, Any] = {}
    for candidate in view["candidates"]:
        parts = [
            loc
            for loc in candidate.get("locators", [])
            if loc["kind"] == "visual" and loc["image_id"] == image
        ]
        if any(loc["geometry"]["type"] != "bbox" for loc in parts):
            return {"status": "not_applicable", "reason": "unsupported_candidate_geometry"}
        if not parts:
            return {"status": "not_applicable", "reason": "cross_image_candidate_distance_undefined"}
        distances[candidate["alias"]] = min(
            _distance2(cx, cy, loc["geometry"]["bbox_1000"], width, height) for loc in parts
        )
    if not distances:
        raise ValueError("NEAREST_EMPTY_CANDIDATES: the view has no candidates")
    best = min(distances.values())
    nearest = sorted(alias for alias, d in distances.items() if d == best)
    tie = len(nearest) > 1
    return {
        "status": "tie" if tie else "predicted",
        "predicted_alias": None if tie else nearest[0],
        "tied_aliases": nearest if tie else [],
        "squared_distance_numerators": distances,
        "distance_denominator": DISTANCE_DENOMINATOR,
        "policy_id": NEAREST_POLICY,
    }


def _distance2(cx: Any, cy: Any, box: list[Any], width: int, height: int) -> Any:
    left, top, right, bottom = box
    dx = max(2 * left * width - cx, 0, cx - 2 * right * width)
    dy = max(2 * top * height - cy, 0, cy - 2 * bottom * height)
    return dx * dx + dy * dy


def with_outcome(
    nearest: dict[str, Any], candidate_map: dict[str, Any], gold_targets: list[dict[str, Any]]
) -> dict[str, Any]:
    """The prediction plus ``outcome``: ``correct``/``wrong`` for a unique prediction, otherwise the
    status itself (``tie``, ``not_applicable``). Attached only after the public-only prediction."""
    outcome = nearest["status"]
    if outcome == "predicted":
        outcome = "correct" if candidate_map[nearest["predicted_alias"]] in gold_targets else "wrong"
    return {**nearest, "outcome": outcome}


def controls_choice(nearest: dict[str, Any], display_order: list[str]) -> str | None:
    """The alias a control answers with: the prediction, or on a tie the first tied alias in display
    order (the evaluation framework's rule); ``None`` when the rule does not apply."""
    if nearest.get("status") == "predicted":
        predicted: str = nearest["predicted_alias"]
        return predicted
    if nearest.get("status") == "tie":
        rank = {alias: i for i, alias in enumerate(display_order)}
        first_tied: str = min(nearest["tied_aliases"], key=lambda a: rank.get(a, len(rank)))
        return first_tied
    return None
