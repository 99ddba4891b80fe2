"""Pass 4's issues follow what it is built from, and an issue leads to its record (issue 28 item 4), from login
by clicks: "Rebuild from Passes 1–3" clears the issues the rebuilt document no longer has (the list, the page
after a reload and the pass API agree), and clicking an issue selects the record it names (selected card,
scrolled into view, its first field focused)."""

from __future__ import annotations

import copy
import re

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from annotation.demo.generator import generate_problem
from annotation.models import PassDocument
from annotation.services import pass_document_save
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

from .conftest import assert_no_csp_violations, screenshot
from .test_workspace_journey_browser import login_and_open_pass

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def built(make_browser_user):
    """A generated problem: Passes 1–3 approved, Pass 4 a draft saved by someone else."""
    annotator = make_browser_user("ann", "annotator")
    reviewer = make_browser_user("rev", "source_reviewer")
    other = make_browser_user("ann2", "annotator")
    gen = generate_problem(seed=2027, index=3)
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(
        problem_id=gen.problem_id,
        stem=segments["stem"],
        query=segments["query"],
        language=gen.manifest_row["language"],
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    for pass_no, document in enumerate(gen.passes[:3], start=1):
        PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(document),
            approved_by=reviewer,
            updated_by=other,
        )
    return parent, gen, annotator, other


def test_rebuild_from_passes_1_to_3_recomputes_the_issues(page, live_server, built):
    parent, gen, annotator, other = built
    three = gen.passes[2]
    broken = copy.deepcopy(gen.passes[3])
    broken["query_target"] = {**broken["query_target"], "mention_id": ""}  # as if saved before Pass 3 had one
    pass_document_save(parent=parent, pass_no=4, document=broken, actor=other, expected_version=None)

    login_and_open_pass(page, live_server, parent, 4)
    issues = page.get_by_test_id("issues")
    expect(issues).to_contain_text("QUERY_TARGET_MISSING")
    screenshot(page, "pass4-before-rebuild")

    page.get_by_role("button", name="Rebuild from Passes 1–3").click()
    expect(page.locator("#ws-issues h2")).to_have_text("No validation issues ✓", timeout=10_000)
    expect(page.get_by_test_id("consolidate-box")).to_contain_text("G_obs matches Passes 1–3.")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved · v2")
    screenshot(page, "pass4-after-rebuild")
    stored = PassDocument.objects.get(parent=parent, pass_no=4)
    assert stored.document["query_target"] == three["query_target"]

    page.reload()
    page.wait_for_selector("html[data-ws-ready]")
    expect(page.locator("#ws-issues h2")).to_have_text("No validation issues ✓")
    api = APIClient()
    api.force_authenticate(annotator)
    state = api.get(f"/api/parents/{parent.problem_id}/passes/4/").json()
    assert state["validation_errors"] == []
    assert state["document"]["query_target"] == three["query_target"]
    assert_no_csp_violations(page)


def _glyphs(count: int, empty: str) -> list[dict]:
    nodes = []
    for i in range(1, count + 1):
        vid = f"v{i:03d}"
        x, y = 40 + (i % 6) * 150, 40 + (i // 6) * 150
        nodes.append(
            {
                "id": vid,
                "type": "text_glyph",
                "subtype": "",
                "text": "" if vid == empty else f"L{i}",
                "image_id": "img_0",
                "bbox_1000": [x, y, x + 60, y + 60],
                "keypoints_1000": [],
                "center_1000": [-1, -1],
                "radius_1000": -1,
                "confidence": "high",
            }
        )
    return nodes


def test_clicking_an_issue_selects_its_region_and_puts_the_caret_in_the_field_at_fault(
    page, live_server, built
):
    parent, _, _, other = built
    PassDocument.objects.filter(parent=parent, pass_no=1).delete()
    document = {"problem_id": parent.problem_id, "visual_nodes": _glyphs(14, empty="v012"), "ambiguities": []}
    pass_document_save(parent=parent, pass_no=1, document=document, actor=other, expected_version=None)

    login_and_open_pass(page, live_server, parent, 1)
    card = page.locator("[data-rec='visual_nodes:v012']")
    expect(card).not_to_have_class(re.compile(r"\bis-selected\b"))
    issue = page.get_by_test_id("issues").get_by_role("button").filter(has_text="TEXT_GLYPH_TEXT_EMPTY")
    expect(issue).to_contain_text("visual_nodes[11].text")
    issue.click()

    expect(card).to_have_class(re.compile(r"\bis-selected\b"))
    expect(page.locator("#ws-panel .rec.is-selected")).to_have_count(1)
    expect(card).to_be_in_viewport()
    field = card.locator("[data-field=text]")
    expect(field).to_be_focused()
    expect(field).to_have_value("")
    screenshot(page, "issue-click-selects-region")
    page.keyboard.type("m")  # the caret is in the right field: typing fixes the issue
    expect(page.locator("#ws-issues h2")).to_have_text("No validation issues ✓", timeout=10_000)
    stored = PassDocument.objects.get(parent=parent, pass_no=1)
    assert [n["text"] for n in stored.document["visual_nodes"] if n["id"] == "v012"] == ["m"]
    assert_no_csp_violations(page)


def test_clicking_an_unbound_entity_issue_selects_the_entity_and_its_bind_a_region_field(
    page, live_server, built
):
    parent, gen, _, other = built
    two = copy.deepcopy(gen.passes[1])
    index, entity = next((i, n) for i, n in enumerate(two["physical_nodes"]) if n.get("visual_anchor_ids"))
    two["bindings"] = [b for b in two["bindings"] if b["to_id"] != entity["id"]]
    PassDocument.objects.filter(parent=parent, pass_no=2).delete()
    pass_document_save(parent=parent, pass_no=2, document=two, actor=other, expected_version=None)

    login_and_open_pass(page, live_server, parent, 2)
    issue = page.get_by_test_id("issues").get_by_role("button").filter(has_text="PHYSICAL_NODE_UNBOUND")
    expect(issue).to_contain_text(f"physical_nodes[{index}]")
    issue.click()

    card = page.locator(f"[data-rec='physical_nodes:{entity['id']}']")
    expect(card).to_have_class(re.compile(r"\bis-selected\b"))
    expect(card).to_be_in_viewport()
    expect(card.locator("[data-field=name]")).to_have_value(entity["name"])  # its editor is open
    expect(card.locator("[data-field=bind-region]")).to_be_focused()
    screenshot(page, "issue-click-selects-entity")
    assert_no_csp_violations(page)
