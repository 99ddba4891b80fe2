"""The annotator's workspace journey in Chromium, from login by clicks (issue 15 items 4, 5, 7, 9): the
rejection note where they edit, a conflict that shows what differs and keeps their work on Enter, LaTeX in
the lists, and pages that write nothing when opened. The page fixture fails a test on any console error."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import ParentProblem, PassDocument
from annotation.services import pass_document_reject, pass_document_save, pass_document_submit
from tests.factories import ParentProblemFactory, ProblemImageFactory

from .conftest import PASSWORD, assert_no_csp_violations, incline_diagram, screenshot
from .test_workspace_browser import wait_saved

pytestmark = pytest.mark.django_db(transaction=True)
NOTE = "Region v001 reads “F”, but the diagram says “F₁”: type the subscript (F_1)."


def glyph(vid: str, text: str, x: int) -> dict:
    return {
        "id": vid,
        "type": "text_glyph",
        "subtype": "",
        "text": text,
        "image_id": "img_0",
        "bbox_1000": [x, 100, x + 80, 180],
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }


@pytest.fixture
def journey(make_browser_user):
    annotator = make_browser_user("ann", "annotator")
    reviewer = make_browser_user("rev", "source_reviewer")
    parent = ParentProblemFactory(
        problem_id="ws_journey",
        stem="A block A of mass m = 2 kg is pulled 5.0 km along an incline.",
        query="What is the work done on block A?",
        domain="optics",
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=incline_diagram(480, 300))
    return parent, annotator, reviewer


def login_and_open_pass(
    page, live_server, parent: ParentProblem, pass_no: int, username: str = "ann"
) -> None:
    """Log in on the login page, then click through the problem list and the problem to the pass."""
    page.goto(f"{live_server.url}/accounts/login/?next={reverse('annotation:problem_list')}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name=parent.problem_id, exact=True).first.click()
    page.wait_for_url(
        re.compile(re.escape(reverse("annotation:problem_detail", args=[parent.problem_id])) + "$")
    )
    page.get_by_role("link", name=f"Pass {pass_no}", exact=True).click()
    page.wait_for_url(
        re.compile(re.escape(reverse("annotation:pass_workspace", args=[parent.problem_id, pass_no])) + "$")
    )
    page.wait_for_selector("html[data-ws-ready]")
    page.wait_for_selector("#ws-stage .a9s-annotationlayer, #ws-stage svg", state="attached")


def test_a_rejected_pass_shows_the_reviewers_note_in_the_editable_workspace(page, live_server, journey):
    parent, annotator, reviewer = journey
    doc = pass_document_save(
        parent=parent,
        pass_no=1,
        document={
            "problem_id": parent.problem_id,
            "visual_nodes": [glyph("v001", "F", 100)],
            "ambiguities": [],
        },
        actor=annotator,
        expected_version=None,
    )
    doc = pass_document_submit(doc=doc, actor=annotator)
    pass_document_reject(doc=doc, actor=reviewer, document_sha256=doc.document_sha256, note=NOTE)

    login_and_open_pass(page, live_server, parent, 1)
    note = page.get_by_test_id("review-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("Rejected by rev on")
    expect(page.get_by_test_id("review-note-text")).to_have_text(NOTE)
    # near the top: above the canvas and the records, and the page is editable
    note_box, grid_box = note.bounding_box(), page.locator(".ws-grid").bounding_box()
    assert note_box["y"] + note_box["height"] <= grid_box["y"]
    expect(page.get_by_test_id("doc-status")).to_have_text("rejected")
    page.locator("[data-rec='visual_nodes:v001'] .rec__title").click()
    text_field = page.locator("[data-rec='visual_nodes:v001'] [data-field=text]")
    expect(text_field).to_be_editable()
    screenshot(page, "workspace-rejection-note")

    text_field.fill("F_1")
    wait_saved(page)
    assert PassDocument.objects.get(parent=parent, pass_no=1).status == PassDocument.Status.DRAFT
    page.reload()
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.get_by_test_id("review-note")).to_contain_text(
        "You have edited this pass since the rejection"
    )

    page.get_by_test_id("submit").click()
    banner = page.locator("#ws-banner")
    expect(banner).to_contain_text("Submitted for source review. A source reviewer now approves this pass")
    expect(banner).to_contain_text("You can go on with Pass 2 meanwhile")
    page.wait_for_load_state("load")
    expect(page.get_by_test_id("next-steps")).to_be_visible(timeout=10_000)
    expect(page.get_by_test_id("review-note")).to_have_count(0)
    expect(page.get_by_test_id("doc-status")).to_have_text("submitted")
    expect(page.locator("#ws-hint")).to_have_text("Read only (submitted).")  # the old note is not repeated
    screenshot(page, "workspace-submitted-next-steps")
    assert PassDocument.objects.get(parent=parent, pass_no=1).status == PassDocument.Status.SUBMITTED
    assert_no_csp_violations(page)


def test_the_conflict_dialog_shows_what_differs_and_enter_keeps_my_work(
    browser, page, live_server, journey, page_problems
):
    page_problems.allowed = ("409 (Conflict)",)  # the conflict itself, reported by the browser
    parent, annotator, _ = journey
    base = {"problem_id": parent.problem_id, "visual_nodes": [glyph("v001", "F", 100)], "ambiguities": []}
    pass_document_save(parent=parent, pass_no=1, document=base, actor=annotator, expected_version=None)
    login_and_open_pass(page, live_server, parent, 1)

    # Someone else (another browser of the same annotator) saves v2, where the glyph reads "N".
    other = browser.new_context(viewport={"width": 1360, "height": 900})
    second = other.new_page()
    login_and_open_pass(second, live_server, parent, 1)
    second.locator("[data-rec='visual_nodes:v001'] .rec__title").click()
    second.locator("[data-rec='visual_nodes:v001'] [data-field=text]").fill("N")
    wait_saved(second)
    other.close()

    page.locator("[data-rec='visual_nodes:v001'] .rec__title").click()
    page.locator("[data-rec='visual_nodes:v001'] [data-field=text]").fill("mg")
    dialog = page.get_by_test_id("conflict-dialog")
    expect(dialog).to_be_visible(timeout=10_000)
    expect(page.locator("#ws-conflict-text")).to_contain_text("Version 2 was saved by ann")
    table = page.get_by_test_id("conflict-diff")
    expect(table.locator("thead")).to_contain_text("Yours (this device)")
    expect(table.locator("thead")).to_contain_text("Server's (v2, ann)")
    row = table.locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("visual nodes v001")
    expect(row.locator("td")).to_have_text(["text", "mg", "N"])
    expect(page.locator("#ws-conflict-keep")).to_be_focused()
    screenshot(page, "workspace-conflict-dialog")

    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    wait_saved(page)
    stored = PassDocument.objects.get(parent=parent, pass_no=1)
    assert (stored.version, stored.document["visual_nodes"][0]["text"]) == (3, "mg")
    assert_no_csp_violations(page)


def test_latex_renders_in_the_region_and_quantity_lists(page, live_server, journey):
    parent, annotator, _ = journey
    pass1 = {
        "problem_id": parent.problem_id,
        "visual_nodes": [glyph("v001", "F_1", 100), glyph("v002", "mg", 300)],
        "ambiguities": [],
    }
    pass_document_save(parent=parent, pass_no=1, document=pass1, actor=annotator, expected_version=None)
    pass3 = {
        "problem_id": parent.problem_id,
        "new_or_updated_physical_nodes": [],
        "text_mentions": [],
        "quantities": [
            {
                "id": "q001",
                "kind": "distance",
                "symbol_latex": "s",
                "value_latex": r"5.0\,\text{km}",
                "unit_latex": "",
                "owner_id": "",
                "visual_anchor_ids": ["v001"],
                "text_mention_ids": [],
                "provenance": ["IMAGE"],
            }
        ],
        "bindings": [],
        "constraints": [],
        "query_target": {
            "mention_id": "",
            "target_kind": "",
            "target_symbol_latex": "",
            "target_node_ids": [],
            "location_node_ids": [],
            "time_or_event_node_ids": [],
        },
        "ambiguities": [],
    }
    pass_document_save(parent=parent, pass_no=3, document=pass3, actor=annotator, expected_version=None)

    login_and_open_pass(page, live_server, parent, 1)
    regions = page.get_by_test_id("region-list")
    expect(regions.locator("[data-rec='visual_nodes:v001'] .rec__title .katex")).to_have_count(1)
    assert "F_1" not in regions.locator("[data-rec='visual_nodes:v001'] .rec__title .katex-html").inner_text()
    expect(regions.locator("[data-rec='visual_nodes:v002'] .rec__title")).to_contain_text("mg")

    page.locator("a.ws-tab", has_text="Text grounding").click()
    page.wait_for_selector("html[data-ws-ready]")
    quantity = page.get_by_test_id("quantity-list").locator("[data-rec='quantities:q001']")
    tex = quantity.get_by_test_id("quantity-tex")
    expect(tex.locator(".katex")).to_have_count(1)
    assert tex.locator("annotation").first.text_content() == r"s = 5.0\,\text{km}"
    assert "\\text" not in tex.locator(".katex-html").inner_text()  # typeset, not shown as source
    expect(tex.locator(".katex-html")).to_contain_text("km")
    screenshot(page, "workspace-quantity-latex")
    assert_no_csp_violations(page)


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4])
def test_opening_a_pass_in_the_browser_writes_nothing(page, live_server, journey, pass_no):
    parent, _, _ = journey
    login_and_open_pass(page, live_server, parent, pass_no)
    expect(page.get_by_test_id("save-state")).to_have_text("Not started")
    page.wait_for_timeout(1200)  # an autosave (800 ms debounce) would have started by now
    assert not PassDocument.objects.filter(parent=parent).exists()
    assert ParentProblem.objects.get(pk=parent.pk).status == ParentProblem.Status.NEW
    if pass_no == 4:
        expect(page.get_by_test_id("domain-note")).to_contain_text(
            "This problem's domain is optics, which the Kit does not list"
        )
        expect(page.get_by_label("Kit domain")).to_have_value("electromagnetism")
        screenshot(page, "workspace-pass4-domain")


def test_submit_and_next_problem_opens_the_next_problem_whose_pass_waits(page, live_server, journey):
    parent, annotator, _ = journey
    pass_document_save(
        parent=parent,
        pass_no=1,
        document={
            "problem_id": parent.problem_id,
            "visual_nodes": [glyph("v001", "F_1", 100)],
            "ambiguities": [],
        },
        actor=annotator,
        expected_version=None,
    )
    text_only = ParentProblemFactory(problem_id="ws_journey_b")  # no diagram: no annotation work
    waiting = ParentProblemFactory(problem_id="ws_journey_c")
    ProblemImageFactory(parent=waiting, image_id="img_0", ordinal=0, data=incline_diagram(480, 300))
    login_and_open_pass(page, live_server, parent, 1)
    page.get_by_role("button", name="Submit and next problem").click()
    page.wait_for_url(re.compile(rf"/problems/{waiting.problem_id}/passes/1/$"))
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.get_by_test_id("doc-status")).to_have_text("not started")
    screenshot(page, "workspace-submit-and-next")
    assert PassDocument.objects.get(parent=parent, pass_no=1).status == PassDocument.Status.SUBMITTED
    assert not PassDocument.objects.filter(parent=text_only).exists()
    # the last problem waiting: nothing comes next, so the button is not offered
    expect(page.get_by_role("button", name="Submit and next problem")).to_be_hidden()
    assert_no_csp_violations(page)
