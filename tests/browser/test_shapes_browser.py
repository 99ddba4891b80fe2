"""The Pass 1 shape tools in Chromium (issue 28 item 1): point, line, arrow, polyline, curve, circle, arc and angle
mark, each picked by its key and by its button, drawn with mouse clicks, selected, moved, edited point by point and
undone; the saved document holds the Kit's fields (keypoints_1000, center_1000, radius_1000) and the bbox_1000
derived from them exactly as ``kit.passes.shapes.derived_bbox`` derives it. Later passes draw the shapes too."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import PassDocument
from annotation.services import pass_document_save, pass_document_submit
from kit.passes.shapes import derived_bbox, shape_of
from tests.factories import ParentProblemFactory, ProblemImageFactory

from .conftest import PASSWORD, assert_no_csp_violations, incline_diagram, screenshot
from .test_workspace_browser import wait_saved
from .test_workspace_journey_browser import login_and_open_pass

pytestmark = pytest.mark.django_db(transaction=True)
W, H = 480, 300


@pytest.fixture
def parent(make_browser_user):
    make_browser_user("annotator", "annotator")
    problem = ParentProblemFactory(
        problem_id="ws_shapes",
        stem="A block rests on an incline; its weight mg acts straight down.",
        query="What is the normal force on the block?",
    )
    ProblemImageFactory(parent=problem, image_id="img_0", ordinal=0, data=incline_diagram(W, H))
    return problem


def at(page, fx: float, fy: float) -> tuple[float, float]:
    box = page.locator("#ws-stage img").bounding_box()
    return box["x"] + box["width"] * fx, box["y"] + box["height"] * fy


def click(page, fx: float, fy: float) -> None:
    page.mouse.click(*at(page, fx, fy))


def drag(page, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=3)
    page.mouse.move(*end, steps=3)
    page.mouse.up()


def nodes(parent) -> list[dict]:
    return PassDocument.objects.get(parent=parent, pass_no=1).document["visual_nodes"]


def near(point: list[int], fx: float, fy: float, tolerance: int = 3) -> bool:
    return abs(point[0] - fx * 1000) <= tolerance and abs(point[1] - fy * 1000) <= tolerance


def assert_kit_fields(node: dict, node_type: str, shape: str) -> None:
    """The node is of its type, draws its shape, and its box is the one derived from its points."""
    assert node["type"] == node_type
    assert shape_of(node) == shape
    assert node["bbox_1000"] == derived_bbox(node, W, H)
    x0, y0, x2, y2 = node["bbox_1000"]
    assert 0 <= x0 < x2 <= 1000 and 0 <= y0 < y2 <= 1000  # the compiler's stricter rule


def radius_px(node: dict) -> float:
    return node["radius_1000"] * min(W, H) / 1000


def test_every_shape_tool_by_its_key_draws_the_kit_fields(page, live_server, parent):
    login_and_open_pass(page, live_server, parent, 1, username="annotator")
    page.keyboard.press("?")
    help_dialog = page.locator("#ws-help")
    for row in (
        "Point mark: click the point",
        "arrow's tail, then its head",
        "Polyline / curve",
        "Angle mark",
    ):
        expect(help_dialog).to_contain_text(row)
    screenshot(page, "h1-shapes-help")
    page.get_by_role("button", name="Close").click()

    page.keyboard.press("p")
    expect(page.locator("#tool-point")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("draw-status")).to_have_text("Point: Click the point. Esc cancels.")
    click(page, 0.30, 0.40)
    expect(page.locator("[data-shape-id=v001][data-shape=point]")).to_be_visible()
    expect(page.locator("#tool-select")).to_have_attribute("aria-pressed", "true")

    page.keyboard.press("l")
    click(page, 0.10, 0.90)
    expect(page.get_by_test_id("draw-status")).to_have_text("Line: Click the other end. Esc cancels.")
    click(page, 0.50, 0.90)

    page.keyboard.press("a")
    click(page, 0.52, 0.55)
    click(page, 0.52, 0.80)
    arrow = page.locator("[data-shape-id=v003][data-shape=arrow]")
    expect(arrow.locator("path.ws-shape__fill")).to_have_count(1)  # the arrowhead

    page.keyboard.press("y")
    for fx, fy in ((0.60, 0.20), (0.70, 0.30), (0.80, 0.20), (0.88, 0.35)):
        click(page, fx, fy)
    page.keyboard.press("Backspace")  # the last point taken back
    expect(page.get_by_test_id("shape-draft")).to_be_visible()
    page.keyboard.press("Enter")

    page.keyboard.press("c")
    for fx, fy in ((0.15, 0.15), (0.25, 0.08), (0.35, 0.15)):
        click(page, fx, fy)
    page.keyboard.press("Enter")

    page.keyboard.press("o")
    click(page, 0.75, 0.65)
    click(page, 0.80, 0.65)

    page.keyboard.press("u")
    click(page, 0.10, 0.85)  # centre
    click(page, 0.20, 0.85)  # start: on the incline's base, to the right of the centre
    page.mouse.move(*at(page, 0.18, 0.78), steps=4)
    expect(page.get_by_test_id("draw-status")).to_have_text(
        "Arc: Move along the arc and click where it ends. Esc cancels."
    )
    expect(page.get_by_test_id("shape-draft").locator("path")).to_have_count(1)  # the arc so far
    screenshot(page, "h1-shapes-drawing-arc")
    click(page, 0.15, 0.7114)  # end: 60° up (counter-clockwise on screen) round the centre
    page.keyboard.press("g")
    click(page, 0.40, 0.60)
    click(page, 0.48, 0.60)
    click(page, 0.44, 0.50)

    page.keyboard.press("o")  # Esc drops a started shape, and a second Esc the tool
    click(page, 0.5, 0.5)
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("shape-draft")).to_have_count(0)
    expect(page.locator("#tool-circle")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Escape")
    expect(page.locator("#tool-select")).to_have_attribute("aria-pressed", "true")

    wait_saved(page)
    expect(page.locator("[data-shape-id]")).to_have_count(8)
    screenshot(page, "h1-shapes-all-tools")
    saved = nodes(parent)
    assert [n["id"] for n in saved] == [f"v{i:03d}" for i in range(1, 9)]
    point, line, arrow_node, polyline, curve, circle, arc, angle = saved

    assert_kit_fields(point, "point_mark", "point")
    assert len(point["keypoints_1000"]) == 1 and near(point["keypoints_1000"][0], 0.30, 0.40)
    assert (point["center_1000"], point["radius_1000"]) == ([-1, -1], -1)

    assert_kit_fields(line, "line_segment", "line")
    assert near(line["keypoints_1000"][0], 0.10, 0.90) and near(line["keypoints_1000"][1], 0.50, 0.90)
    assert line["bbox_1000"][3] - line["bbox_1000"][1] == 10  # a horizontal line still has an area

    assert_kit_fields(arrow_node, "arrow", "arrow")
    tail, head = arrow_node["keypoints_1000"]
    assert near(tail, 0.52, 0.55) and near(head, 0.52, 0.80)  # tail first, head second

    assert_kit_fields(polyline, "polyline", "polyline")
    assert len(polyline["keypoints_1000"]) == 3 and near(polyline["keypoints_1000"][2], 0.80, 0.20)

    assert_kit_fields(curve, "curve", "curve")
    assert len(curve["keypoints_1000"]) == 3

    assert_kit_fields(circle, "circle", "circle")
    assert circle["keypoints_1000"] == [] and near(circle["center_1000"], 0.75, 0.65)
    assert abs(radius_px(circle) - 0.05 * W) <= 2  # the radius is normalized by min(W, H)

    assert_kit_fields(arc, "arc", "arc")
    assert near(arc["center_1000"], 0.10, 0.85) and abs(radius_px(arc) - 0.10 * W) <= 2
    start, end = arc["keypoints_1000"]
    # drawn counter-clockwise on screen (up from the start), so stored clockwise from the end to the start
    assert near(end, 0.20, 0.85) and start[1] < end[1]

    assert_kit_fields(angle, "angle_mark", "angle")
    vertex, arm1, arm2 = angle["keypoints_1000"]
    assert near(vertex, 0.40, 0.60) and near(arm1, 0.48, 0.60) and near(arm2, 0.44, 0.50)

    # undo takes the last shape away, redo brings it back
    page.keyboard.press("Control+z")
    expect(page.locator("[data-shape-id]")).to_have_count(7)
    page.keyboard.press("Control+Shift+z")
    expect(page.locator("[data-shape-id=v008][data-shape=angle]")).to_be_visible()
    wait_saved(page)

    page.reload()
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.locator("[data-shape-id]")).to_have_count(8)
    shapes = page.locator("[data-shape-id]")
    assert [shapes.nth(i).get_attribute("data-shape") for i in range(8)] == [
        "point", "line", "arrow", "polyline", "curve", "circle", "arc", "angle",
    ]  # fmt: skip
    assert nodes(parent) == saved
    assert_no_csp_violations(page)


def test_shapes_by_button_select_drag_a_point_move_undo(page, live_server, parent):
    login_and_open_pass(page, live_server, parent, 1, username="annotator")
    page.get_by_role("button", name="Arrow A").click()
    expect(page.locator("#tool-arrow")).to_have_attribute("aria-pressed", "true")
    click(page, 0.30, 0.30)
    click(page, 0.30, 0.60)
    page.get_by_role("button", name="Circle O").click()
    click(page, 0.70, 0.50)
    click(page, 0.70, 0.62)
    wait_saved(page)
    arrow_before, circle_before = nodes(parent)
    assert_kit_fields(arrow_before, "arrow", "arrow")
    assert_kit_fields(circle_before, "circle", "circle")

    # select the arrow by clicking its line; its handles appear and its fields show in the panel
    click(page, 0.30, 0.45)
    handles = page.locator("[data-handles-of=v001] .ws-handle")
    expect(handles).to_have_count(2)
    panel = page.locator("[data-rec='visual_nodes:v001']")
    expect(panel.get_by_test_id("shape-fields")).to_contain_text("Drawn as an arrow: tail → head")
    expect(panel.locator("[data-field=kp_1_y]")).to_have_value(str(arrow_before["keypoints_1000"][1][1]))
    screenshot(page, "h1-shapes-arrow-selected")

    # drag the head handle: only the head moves, the box follows
    head = page.locator("[data-handles-of=v001] [data-handle=point-1]").bounding_box()
    drag(page, (head["x"] + head["width"] / 2, head["y"] + head["height"] / 2), at(page, 0.45, 0.70))
    wait_saved(page)
    arrow_after = nodes(parent)[0]
    assert arrow_after["keypoints_1000"][0] == arrow_before["keypoints_1000"][0]
    assert near(arrow_after["keypoints_1000"][1], 0.45, 0.70)
    assert_kit_fields(arrow_after, "arrow", "arrow")
    expect(panel.get_by_test_id("shape-bbox")).to_have_text(
        "Box (from the points): " + ", ".join(str(v) for v in arrow_after["bbox_1000"])
    )

    # drag the circle by its outline: the centre moves, the radius stays
    click(page, 0.70, 0.62)  # on the circle's outline (centre 0.70, 0.50; radius 0.12 of H)
    expect(page.locator("[data-handles-of=v002] .ws-handle")).to_have_count(2)  # centre and radius
    drag(page, at(page, 0.70, 0.62), at(page, 0.60, 0.72))
    wait_saved(page)
    circle_after = nodes(parent)[1]
    assert circle_after["radius_1000"] == circle_before["radius_1000"]
    assert abs(circle_after["center_1000"][0] - (circle_before["center_1000"][0] - 100)) <= 3
    assert abs(circle_after["center_1000"][1] - (circle_before["center_1000"][1] + 100)) <= 3
    assert_kit_fields(circle_after, "circle", "circle")

    # the radius handle resizes it
    rim = page.locator("[data-handles-of=v002] [data-handle=radius]").bounding_box()
    drag(page, (rim["x"] + rim["width"] / 2, rim["y"] + rim["height"] / 2), at(page, 0.80, 0.60))
    wait_saved(page)
    resized = nodes(parent)[1]
    assert abs(radius_px(resized) - 0.20 * W) <= 2 and resized["center_1000"] == circle_after["center_1000"]
    assert_kit_fields(resized, "circle", "circle")

    # the arrow keys move a selected shape by its points
    page.keyboard.press("Shift+ArrowRight")
    wait_saved(page)
    nudged = nodes(parent)[1]
    assert nudged["center_1000"] == [resized["center_1000"][0] + 10, resized["center_1000"][1]]
    assert_kit_fields(nudged, "circle", "circle")

    # one undo per gesture: the nudge, the resize, the move
    for _ in range(3):
        page.get_by_role("button", name="Undo").click()
    wait_saved(page)
    assert nodes(parent)[1] == circle_before
    page.keyboard.press("Control+z")  # then the head drag
    wait_saved(page)
    assert nodes(parent)[0] == arrow_before

    # a point typed in the panel moves the handle and re-derives the box
    click(page, 0.30, 0.45)
    tail_x = panel.locator("[data-field=kp_0_x]")
    tail_x.fill("200")
    wait_saved(page)
    typed = nodes(parent)[0]
    assert typed["keypoints_1000"][0][0] == 200
    assert_kit_fields(typed, "arrow", "arrow")
    screenshot(page, "h1-shapes-edited")
    assert_no_csp_violations(page)


def test_later_passes_draw_the_shapes_and_select_them(page, live_server, parent, make_browser_user):
    login_and_open_pass(page, live_server, parent, 1, username="annotator")
    page.keyboard.press("a")
    click(page, 0.52, 0.55)
    click(page, 0.52, 0.80)
    page.keyboard.press("u")
    click(page, 0.20, 0.50)
    click(page, 0.30, 0.50)
    click(page, 0.20, 0.35)
    wait_saved(page)

    page.get_by_role("navigation", name="Passes").locator("a.ws-tab[href$='/passes/2/']").click()
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.locator("[data-shape-id=v001][data-shape=arrow]")).to_be_visible()
    expect(page.locator("[data-shape-id=v002][data-shape=arc]")).to_be_visible()
    page.get_by_role("button", name="New entity (E)").click()
    page.locator("[data-rec='physical_nodes:p001'] [data-field=name]").fill("weight")
    click(page, 0.52, 0.68)  # on the arrow: selects region v001, no handles outside Pass 1
    expect(page.locator("[data-shape-id=v001]")).to_have_class(re.compile(r"\bis-selected\b"))
    expect(page.locator(".ws-handle")).to_have_count(0)
    page.keyboard.press("b")
    expect(page.locator("[data-rec='physical_nodes:p001'] .rec__title")).to_contain_text("1 region")
    wait_saved(page)
    bindings = PassDocument.objects.get(parent=parent, pass_no=2).document["bindings"]
    assert [(b["from_id"], b["to_id"]) for b in bindings] == [("v001", "p001")]
    screenshot(page, "h1-shapes-pass2")
    assert_no_csp_violations(page)


def test_the_source_reviewer_sees_the_shapes_on_the_review_page(page, live_server, parent, make_browser_user):
    annotator = make_browser_user("ann2", "annotator")
    make_browser_user("rev", "source_reviewer")
    node = {
        "id": "v001",
        "type": "arrow",
        "subtype": "force",
        "text": "",
        "image_id": "img_0",
        "bbox_1000": [0, 0, 0, 0],
        "keypoints_1000": [[520, 550], [520, 800]],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }
    circle = {**node, "id": "v002", "type": "circle", "subtype": "pulley", "keypoints_1000": []}
    circle.update(center_1000=[750, 650], radius_1000=80)
    for n in (node, circle):
        n["bbox_1000"] = derived_bbox(n, W, H)
    document = {"problem_id": parent.problem_id, "visual_nodes": [node, circle], "ambiguities": []}
    doc = pass_document_save(
        parent=parent, pass_no=1, document=document, actor=annotator, expected_version=None
    )
    pass_document_submit(doc=doc, actor=annotator)

    page.goto(f"{live_server.url}/accounts/login/?next=/source-review/")
    page.get_by_label("Username").fill("rev")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Review", exact=True).first.click()
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.locator("[data-shape-id=v001][data-shape=arrow]")).to_be_visible()
    expect(page.locator("[data-shape-id=v002][data-shape=circle]")).to_be_visible()
    click(page, 0.52, 0.70)  # selecting the arrow shows its record; nothing to drag on a review page
    expect(page.locator("[data-shape-id=v001]")).to_have_class(re.compile(r"\bis-selected\b"))
    expect(page.locator(".ws-handle")).to_have_count(0)
    screenshot(page, "h1-shapes-source-review")
    assert PassDocument.objects.get(parent=parent, pass_no=1).document == document
    assert_no_csp_violations(page)


def handle_centre(page, node_id: str, key: str) -> tuple[float, float]:
    box = page.locator(f"[data-handles-of={node_id}] [data-handle={key}]").bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_every_tool_button_and_point_edits_of_polyline_arc_and_angle(page, live_server, parent):
    login_and_open_pass(page, live_server, parent, 1, username="annotator")
    first_steps = {
        "Point P": "Point: Click the point.",
        "Line L": "Line: Click one end.",
        "Arrow A": "Arrow: Click the tail.",
        "Polyline Y": "Polyline: Click the first point.",
        "Curve C": "Curve: Click the first point.",
        "Circle O": "Circle: Click the centre.",
        "Arc U": "Arc: Click the centre.",
        "Angle G": "Angle: Click the vertex.",
    }
    for name, step in first_steps.items():
        page.get_by_role("button", name=name, exact=True).click()
        expect(page.get_by_role("button", name=name, exact=True)).to_have_attribute("aria-pressed", "true")
        expect(page.get_by_test_id("draw-status")).to_have_text(f"{step} Esc cancels.")
    page.get_by_role("button", name="Select V", exact=True).click()
    expect(page.get_by_test_id("draw-status")).to_be_hidden()

    page.get_by_role("button", name="Polyline Y", exact=True).click()
    for fx, fy in ((0.10, 0.20), (0.20, 0.30), (0.30, 0.20)):
        click(page, fx, fy)
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Arc U", exact=True).click()
    click(page, 0.60, 0.50)  # centre
    click(page, 0.70, 0.50)  # start, 48 px to the right
    click(page, 0.60, 0.66)  # end, 48 px below: a quarter clockwise on screen
    page.get_by_role("button", name="Angle G", exact=True).click()
    click(page, 0.30, 0.80)
    click(page, 0.45, 0.80)
    click(page, 0.40, 0.65)
    wait_saved(page)
    polyline, arc, angle = nodes(parent)
    assert_kit_fields(arc, "arc", "arc")
    assert near(arc["keypoints_1000"][0], 0.70, 0.50) and near(arc["keypoints_1000"][1], 0.60, 0.66)

    # the polyline's middle point moves alone
    click(page, 0.15, 0.25)
    drag(page, handle_centre(page, "v001", "point-1"), at(page, 0.20, 0.45))
    wait_saved(page)
    moved = nodes(parent)[0]
    assert moved["keypoints_1000"][0] == polyline["keypoints_1000"][0]
    assert moved["keypoints_1000"][2] == polyline["keypoints_1000"][2]
    assert near(moved["keypoints_1000"][1], 0.20, 0.45)
    assert_kit_fields(moved, "polyline", "polyline")

    # the arc's end sets a new radius; the other end keeps its angle on the new circle
    click(page, 0.60 + 0.10 * 0.7071, 0.50 + 0.16 * 0.7071)  # on the arc, half way round
    drag(page, handle_centre(page, "v002", "point-1"), at(page, 0.60, 0.82))  # 96 px below the centre
    wait_saved(page)
    wider = nodes(parent)[1]
    assert wider["center_1000"] == arc["center_1000"]
    assert abs(radius_px(wider) - 96) <= 2
    assert near(wider["keypoints_1000"][0], 0.80, 0.50) and near(wider["keypoints_1000"][1], 0.60, 0.82)
    assert_kit_fields(wider, "arc", "arc")

    # the angle's vertex moves, its arms' ends stay
    click(page, 0.375, 0.80)  # on the first arm
    drag(page, handle_centre(page, "v003", "point-0"), at(page, 0.32, 0.90))
    wait_saved(page)
    bent = nodes(parent)[2]
    assert near(bent["keypoints_1000"][0], 0.32, 0.90)
    assert bent["keypoints_1000"][1:] == angle["keypoints_1000"][1:]
    assert_kit_fields(bent, "angle_mark", "angle")
    expect(page.get_by_test_id("save-state")).to_contain_text("Saved")
    expect(page.locator("#ws-issues")).to_contain_text("No validation issues")
    screenshot(page, "h1-shapes-point-edits")

    page.keyboard.press("Control+z")
    wait_saved(page)
    assert nodes(parent)[2] == angle
    assert_no_csp_violations(page)
