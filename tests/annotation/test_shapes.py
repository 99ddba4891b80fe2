"""Shapes of Pass 1 visual nodes (issue 28 item 1): the box derived from a shape's points, and the workspace's
geometry checks per type. The derived boxes are the ones static/js/workspace/shapes.js saves (the browser test
tests/browser/test_shapes_browser.py compares what the workspace saved with ``derived_bbox``)."""

from __future__ import annotations

import pytest

from kit.passes.shapes import MIN_SIDE, derived_bbox, shape_of
from kit.passes.validator import (
    BBOX_EMPTY,
    BBOX_OUTSIDE_SHAPE,
    SHAPE_FIELDS_INVALID,
    validate_pass_document,
    workspace_checks,
)
from tests.annotation.test_validator import codes_and_paths, full_context, pass1_doc, visual

# One drawn node per shape type, as the workspace saves it on the 800 × 600 image of full_context().
DRAWN = {
    "point_mark": visual("v008", "point_mark", [295, 395, 305, 405], keypoints_1000=[[300, 400]]),
    "line_segment": visual(
        "v008", "line_segment", [100, 895, 500, 905], keypoints_1000=[[100, 900], [500, 900]]
    ),
    "arrow": visual("v008", "arrow", [515, 550, 525, 800], keypoints_1000=[[520, 550], [520, 800]]),
    "polyline": visual(
        "v008", "polyline", [600, 200, 800, 300], keypoints_1000=[[600, 200], [700, 300], [800, 200]]
    ),
    "curve": visual("v008", "curve", [150, 80, 350, 150], keypoints_1000=[[150, 150], [250, 80], [350, 150]]),
    "circle": visual("v008", "circle", [675, 550, 825, 750], center_1000=[750, 650], radius_1000=100),
    "arc": visual(
        "v008",
        "arc",
        [500, 500, 575, 600],
        keypoints_1000=[[575, 500], [500, 600]],
        center_1000=[500, 500],
        radius_1000=100,
    ),  # fmt: skip
    "angle_mark": visual(
        "v008", "angle_mark", [400, 500, 480, 600], keypoints_1000=[[400, 600], [480, 600], [440, 500]]
    ),
}
SHAPES = {
    "point_mark": "point",
    "line_segment": "line",
    "arrow": "arrow",
    "polyline": "polyline",
    "curve": "curve",
    "circle": "circle",
    "arc": "arc",
    "angle_mark": "angle",
}


def with_node(node: dict) -> dict:
    doc = pass1_doc()
    doc["visual_nodes"].append(node)
    return doc


@pytest.mark.parametrize("node_type", list(DRAWN))
def test_each_drawn_shape_has_its_derived_box_and_no_issue(node_type):
    node = DRAWN[node_type]
    assert shape_of(node) == SHAPES[node_type]
    assert derived_bbox(node, 800, 600) == node["bbox_1000"]
    doc = with_node(node)
    assert validate_pass_document(1, doc, full_context()) == []
    assert workspace_checks(1, doc, full_context()) == []


def test_derived_boxes_pad_clip_and_follow_the_min_dimension_radius():
    point = visual("v001", "point_mark", [0, 0, 1, 1], keypoints_1000=[[300, 400]])
    assert derived_bbox(point, 480, 300) == [295, 395, 305, 405]  # a point still has an area
    assert MIN_SIDE == 10
    corner = visual("v001", "polyline", [0, 0, 1, 1], keypoints_1000=[[995, 0], [1000, 3]])
    assert derived_bbox(corner, 480, 300) == [990, 0, 1000, 10]  # padded inwards at the image's edges
    # radius 80 of min(480, 300) = 24 px: 50 units across 480 px, 80 down 300 px
    circle = visual("v001", "circle", [0, 0, 1, 1], center_1000=[750, 650], radius_1000=80)
    assert derived_bbox(circle, 480, 300) == [700, 570, 800, 730]
    off_edge = visual("v001", "circle", [0, 0, 1, 1], center_1000=[20, 500], radius_1000=80)
    assert derived_bbox(off_edge, 480, 300) == [0, 420, 70, 580]  # clipped to the image
    # an arc runs clockwise on screen from its first keypoint: a quarter down-right, or three quarters round
    quarter = visual("v001", "arc", [0, 0, 1, 1], keypoints_1000=[[600, 500], [500, 600]])
    quarter.update(center_1000=[500, 500], radius_1000=100)
    assert derived_bbox(quarter, 1000, 1000) == [500, 500, 600, 600]
    three_quarters = {**quarter, "keypoints_1000": [[500, 600], [600, 500]]}
    assert derived_bbox(three_quarters, 1000, 1000) == [400, 400, 600, 600]
    angle = visual("v001", "angle_mark", [0, 0, 1, 1], keypoints_1000=[[400, 600], [480, 600], [440, 500]])
    assert derived_bbox(angle, 480, 300) == [400, 500, 480, 600]


@pytest.mark.parametrize(
    "node",
    [
        visual("v001", "arrow", [0, 0, 10, 10]),  # a box drawn round an arrow, as the Kit's examples have it
        visual("v001", "arrow", [0, 0, 10, 10], keypoints_1000=[[5, 5]]),  # too few points to draw
        visual("v001", "circle", [0, 0, 10, 10], center_1000=[5, 5], radius_1000=0),
        visual("v001", "object_shape", [0, 0, 10, 10], keypoints_1000=[[0, 0], [10, 0], [5, 10]]),
        visual("v001", "text_glyph", [0, 0, 10, 10], text="F"),
    ],
)
def test_nodes_without_a_complete_shape_are_boxes(node):
    assert shape_of(node) is None
    assert derived_bbox(node, 800, 600) is None


def issues_of(node: dict) -> list[tuple[str, str]]:
    doc = with_node(node)
    assert validate_pass_document(1, doc, full_context()) == []  # the Kit accepts every one of them
    return codes_and_paths(workspace_checks(1, doc, full_context()))


@pytest.mark.parametrize(
    ("node_type", "change", "code", "path"),
    [
        ("point_mark", {"keypoints_1000": [[300, 400], [310, 400]]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        (
            "point_mark",
            {"center_1000": [300, 400], "radius_1000": 5},
            SHAPE_FIELDS_INVALID,
            "visual_nodes[7]",
        ),
        ("line_segment", {"keypoints_1000": [[100, 900]]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        (
            "line_segment",
            {"bbox_1000": [100, 895, 400, 905]},
            BBOX_OUTSIDE_SHAPE,
            "visual_nodes[7].bbox_1000",
        ),
        (
            "arrow",
            {"keypoints_1000": [[520, 550], [520, 800], [530, 800]]},
            SHAPE_FIELDS_INVALID,
            "visual_nodes[7]",
        ),
        ("arrow", {"bbox_1000": [515, 550, 515, 800]}, BBOX_EMPTY, "visual_nodes[7].bbox_1000"),
        ("polyline", {"keypoints_1000": [[600, 200]]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("polyline", {"bbox_1000": [600, 200, 799, 300]}, BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000"),
        ("curve", {"center_1000": [250, 100], "radius_1000": 40}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("curve", {"bbox_1000": [150, 81, 350, 150]}, BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000"),
        ("circle", {"keypoints_1000": [[750, 650]]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("circle", {"radius_1000": -1}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("circle", {"center_1000": [750, -1]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("circle", {"radius_1000": 0}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("circle", {"bbox_1000": [700, 600, 800, 700]}, BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000"),
        ("arc", {"center_1000": [-1, -1], "radius_1000": -1}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("arc", {"bbox_1000": [500, 500, 575, 590]}, BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000"),
        ("angle_mark", {"keypoints_1000": [[400, 600], [480, 600]]}, SHAPE_FIELDS_INVALID, "visual_nodes[7]"),
        ("angle_mark", {"bbox_1000": [401, 500, 480, 600]}, BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000"),
    ],
)
def test_geometry_that_does_not_fit_the_type_is_a_workspace_issue(node_type, change, code, path):
    assert issues_of({**DRAWN[node_type], **change}) == [(code, path)]


def test_the_circle_box_allows_the_radius_rounding_but_not_more():
    circle = DRAWN["circle"]
    assert issues_of({**circle, "bbox_1000": [676, 551, 824, 749]}) == []  # one unit in on every side
    assert issues_of({**circle, "bbox_1000": [677, 550, 825, 750]}) == [
        (BBOX_OUTSIDE_SHAPE, "visual_nodes[7].bbox_1000")
    ]


def test_a_box_node_keeps_any_box_and_its_messages_name_the_region():
    assert issues_of(visual("v008", "arrow", [10, 10, 20, 20])) == []
    doc = with_node({**DRAWN["circle"], "keypoints_1000": [[750, 650]]})
    (issue,) = workspace_checks(1, doc, full_context())
    assert issue.message == ("Region v008: A circle is drawn from 0 keypoints (or none, for a box), not 1.")
    doc = with_node({**DRAWN["line_segment"], "center_1000": [1, 2], "radius_1000": 3})
    (issue,) = workspace_checks(1, doc, full_context())
    assert (
        issue.message
        == "Region v008: A line_segment has no centre or radius (only circles and arcs do): set them to -1."
    )


def test_without_the_image_size_a_round_shape_box_is_not_judged():
    doc = with_node({**DRAWN["circle"], "image_id": "img_9", "bbox_1000": [740, 640, 760, 660]})
    assert [i.code for i in workspace_checks(1, doc, full_context())] == []
    assert [i.code for i in validate_pass_document(1, doc, full_context())] == ["IMAGE_ID_UNKNOWN"]
