"""The issue's "Done when", as a browser test: the real OpenStax torque problem (ostx_up_010: F1–F4,
"2 m", "3 m", 30°, 20°) annotated through Passes 1–4 with the mouse and keyboard only, each pass
submitted, every pass approved by a source reviewer on the review page, and the approved Pass 4
validating with zero issues. A subset of the regions keeps it well under a minute."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import expect

from annotation.models import PassDocument
from annotation.selectors import workspace_documents
from annotation.workspace_page import workspace_issues
from tests.factories import ParentProblemFactory, ProblemImageFactory

from .conftest import PASSWORD, assert_no_csp_violations, screenshot

pytestmark = pytest.mark.django_db(transaction=True)
DEMO = Path(settings.BASE_DIR) / "demo_data" / "real_physics"
W, H = 465, 380  # the real figure's pixel size

# (pixel box on the 465×380 figure, visual type, exact visible text)
REGIONS = [
    ((392, 118, 424, 150), "text_glyph", r"\vec{F}_1"),  # v001
    ((284, 70, 388, 132), "arrow", ""),  # v002 the F1 arrow
    ((72, 108, 102, 142), "text_glyph", r"\vec{F}_2"),  # v003
    ((106, 60, 202, 100), "arrow", ""),  # v004 the F2 arrow
    ((154, 114, 194, 140), "text_glyph", "2 m"),  # v005
    ((94, 62, 130, 84), "text_glyph", r"30^\circ"),  # v006
    ((176, 166, 196, 188), "text_glyph", "O"),  # v007
    ((194, 58, 210, 192), "arrow", ""),  # v008 the position vector of F2's point
]
# (name, symbol, physical type, regions)
ENTITIES = [
    ("force F1", "F_1", "force", ["v001", "v002"]),  # p001
    ("force F2", "F_2", "force", ["v003", "v004"]),  # p002
    ("origin O", "O", "pivot", ["v007"]),  # p003
    ("lever arm of F2", "r_2", "rod", ["v008", "v005"]),  # p004
]


def manifest_row() -> dict:
    for line in (DEMO / "manifest.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == "ostx_up_010":
            return row
    raise AssertionError("ostx_up_010 is missing from the demo manifest")


@pytest.fixture
def torque(make_browser_user):
    make_browser_user("ann", "annotator")
    make_browser_user("rev", "source_reviewer")
    row = manifest_row()
    parent = ParentProblemFactory(
        problem_id="ostx_up_010", stem=row["statement"], query=row["question"], options=[], domain="mechanics"
    )
    ProblemImageFactory(
        parent=parent, image_id="img_0", ordinal=0, data=(DEMO / row["images"][0]).read_bytes()
    )
    return parent


def login(page, base, username):
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))


def open_pass(page, base, pid, n, suffix=""):
    page.goto(f"{base}/problems/{pid}/passes/{n}/{suffix}")
    page.wait_for_selector("html[data-ws-ready]")


def wait_saved(page):
    expect(page.get_by_test_id("save-state")).to_have_text(re.compile(r"^Saved · v\d+"), timeout=10_000)


def drag(page, x1, y1, x2, y2):
    box = page.locator("#ws-stage img").bounding_box()
    sx, sy = box["width"] / W, box["height"] / H
    a = (box["x"] + x1 * sx, box["y"] + y1 * sy)
    b = (box["x"] + x2 * sx, box["y"] + y2 * sy)
    page.mouse.move(*a)
    page.mouse.down()
    page.mouse.move((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, steps=4)
    page.mouse.move(*b, steps=4)
    page.mouse.up()


def select_query_text(page, quote):
    query = page.locator("[data-section=query]")
    query.evaluate(
        """(el, quote) => { const t = [...el.childNodes].find((n) => n.nodeType === 3 && n.data.includes(quote));
        const i = t.data.indexOf(quote); const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + quote.length);
        const s = getSelection(); s.removeAllRanges(); s.addRange(r); }""",
        quote,
    )
    query.dispatch_event("mouseup")
    expect(page.get_by_test_id("selection-box")).to_contain_text(f"“{quote}”")


def fill_quantity(rec, kind, owner, symbol, value, unit):
    rec.locator("[data-field=kind]").fill(kind)
    rec.locator("[data-field=owner_id]").select_option(owner)
    rec.locator("[data-field=symbol_latex]").fill(symbol)
    rec.locator("[data-field=value_latex]").fill(value)
    rec.locator("[data-field=unit_latex]").fill(unit)


def submit(page):
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("doc-status")).to_have_text("submitted", timeout=10_000)
    expect(page.locator(".ws-tab[aria-current=page] .ws-tab__state")).to_have_text("submitted")


def test_torque_problem_through_pass_4_and_source_review(page, live_server, torque):
    base, pid = live_server.url, torque.problem_id
    login(page, base, "ann")

    # Pass 1: a box for each label and arrow, its visual type and exact visible text.
    open_pass(page, base, pid, 1)
    page.wait_for_selector("#ws-stage svg", state="attached")
    for index, (box, kind, text) in enumerate(REGIONS, start=1):
        vid = f"v{index:03d}"
        page.keyboard.press("r")
        drag(page, *box)
        rec = page.locator(f"[data-rec='visual_nodes:{vid}']")
        expect(rec.locator("[data-field=text]")).to_be_focused()
        rec.locator("[data-field=type]").select_option(kind)
        if text:
            rec.locator("[data-field=text]").fill(text)
        expect(rec.locator(".rec__title")).to_contain_text(kind)
        page.keyboard.press("Escape")
    wait_saved(page)
    expect(page.locator(".ws-tab[aria-current=page] .ws-tab__state")).to_have_text("draft")
    screenshot(page, "h9-walk-pass1")

    # Pass 2: entities, each bound to its label and drawing.
    open_pass(page, base, pid, 2)
    for index, (name, symbol, kind, regions) in enumerate(ENTITIES, start=1):
        page.get_by_role("button", name="New entity (E)").click()
        rec = page.locator(f"[data-rec='physical_nodes:p{index:03d}']")
        expect(rec.locator("[data-field=name]")).to_be_visible()
        rec.locator("[data-field=name]").fill(name)
        rec.locator("[data-field=symbol]").fill(symbol)
        rec.locator("[data-field=type]").select_option(kind)
        for vid in regions:
            rec.locator("[data-field=bind-region]").select_option(vid)
        expect(rec.locator(".rec__title")).to_contain_text(f"{len(regions)} region")
    wait_saved(page)
    screenshot(page, "h9-walk-pass2")

    # Back in Pass 1, deleting a region Pass 2 binds is refused with the referencing records named.
    open_pass(page, base, pid, 1)
    page.locator("[data-rec='visual_nodes:v002'] .rec__title").click()
    page.locator("[data-rec='visual_nodes:v002'] .rec__del").click()
    expect(page.get_by_test_id("delete-blocked")).to_contain_text("Pass 2 p001")
    expect(page.locator("[data-rec='visual_nodes:v002']")).to_have_count(1)

    # Pass 3: mentions in the question, quantities with owners and anchors, the query target.
    open_pass(page, base, pid, 3)
    select_query_text(page, "torque")
    page.locator("[data-action=mention-query_target]").click()
    select_query_text(page, "origin")
    page.locator("[data-action=mention-entity]").click()
    page.locator("[data-rec='text_mentions:m002'] [data-field=refers_to]").select_option("p003")
    for quote, owner, symbol, value in (
        (r"F_1=3\,\text{N}", "p001", "F_1", "3"),
        (r"F_2=2\,\text{N}", "p002", "F_2", "2"),
    ):
        select_query_text(page, quote)
        page.locator("[data-action=mention-quantity]").click()
        fill_quantity(page.locator(".rec.is-selected"), "force magnitude", owner, symbol, value, r"\text{N}")
    for vid, owner, kind, symbol, value, unit in (
        ("v005", "p004", "length", "r_2", "2", r"\text{m}"),
        ("v006", "p002", "angle", r"\theta_2", "30", r"^\circ"),
    ):
        page.locator("[data-action=new-quantity]").click()
        rec = page.locator(".rec.is-selected")
        fill_quantity(rec, kind, owner, symbol, value, unit)
        rec.locator("[data-field=add-visual_anchor_ids]").select_option(vid)
    target = page.locator("[data-rec='query_target:']")
    target.locator("[data-field=target_kind]").fill("torque")
    target.locator("[data-field=target_symbol_latex]").fill(r"\tau")
    target.locator("[data-field=add-location_node_ids]").select_option("p003")
    wait_saved(page)
    expect(page.locator("#ws-issues")).to_contain_text("No validation issues")
    screenshot(page, "h9-walk-pass3")

    for n in (1, 2, 3):
        open_pass(page, base, pid, n)
        submit(page)

    # Pass 4: consolidated from Passes 1–3 on first open, stored only on the first edit; one relation; submit.
    open_pass(page, base, pid, 4)
    expect(page.get_by_test_id("consolidate-box")).to_contain_text("G_obs matches Passes 1–3")
    page.wait_for_timeout(1000)  # an autosave would have started by now
    assert not PassDocument.objects.filter(parent__problem_id=pid, pass_no=4).exists()
    page.locator("[data-action=new-relation]").click()
    rec = page.locator("[data-rec='relations:r001']")
    rec.locator("[data-field=subject_id]").select_option("p004")
    rec.locator("[data-field=predicate]").fill("lever_arm_of")
    rec.locator("[data-field=object_id]").select_option("p002")
    rec.locator("[data-field=add-evidence_visual_ids]").select_option("v008")
    wait_saved(page)
    expect(page.locator("#ws-issues")).to_contain_text("No validation issues")
    screenshot(page, "h9-walk-pass4")
    submit(page)

    # The source reviewer approves every pass on the review page.
    page.context.clear_cookies()
    login(page, base, "rev")
    for n in (1, 2, 3, 4):
        open_pass(page, base, pid, n, "review/")
        page.locator("textarea[name=note]").fill(f"pass {n} matches the figure")
        page.get_by_role("button", name="Approve this version").click()
        expect(page.get_by_test_id("approval-state")).to_contain_text("Approved by rev")
    screenshot(page, "h9-walk-review")
    assert_no_csp_violations(page)

    docs = workspace_documents(parent=torque)
    assert all(
        docs[n].status == PassDocument.Status.APPROVED and docs[n].approval_is_fresh for n in (1, 2, 3, 4)
    )
    gobs = docs[4].document
    assert (
        workspace_issues(parent=torque, images=list(torque.images.all()), docs=docs, pass_no=4, document=gobs)
        == []
    )
    assert len(gobs["visual_nodes"]) == len(REGIONS)
    assert {(q["symbol_latex"], q["owner_id"]) for q in gobs["quantities"]} == {
        ("F_1", "p001"),
        ("F_2", "p002"),
        ("r_2", "p004"),
        (r"\theta_2", "p002"),
    }
    assert gobs["query_target"]["mention_id"] == "m001"
    assert [(r["subject_id"], r["predicate"], r["object_id"]) for r in gobs["relations"]] == [
        ("p004", "lever_arm_of", "p002")
    ]
