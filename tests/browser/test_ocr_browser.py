"""OCR suggestions on Pass 1 in Chromium (issue 30 §2), from login by clicks: on a generated problem with no
Pass 1 yet the annotator starts OCR, the suggestions appear as dashed boxes and in the list; one is accepted
by keyboard (T, Enter), one edited (its text) and accepted, one dropped, the rest accepted with "Accept all";
the saved Pass 1 is read back through the pass API and the proposals' decisions from the database."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.demo.generator import generate_problem
from annotation.models import OcrProposal, PassDocument
from tests.factories import ParentProblemFactory, ProblemImageFactory

from .conftest import assert_no_csp_violations, screenshot
from .test_workspace_journey_browser import login_and_open_pass

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def incline(make_browser_user):
    make_browser_user("ann", "annotator")
    gen = generate_problem(seed=2027, index=0)  # labels "4.0 kg", "A", "mg", "37°"
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(problem_id=gen.problem_id, stem=segments["stem"], query=segments["query"])
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    return parent


def test_propose_accept_edit_drop_accept_all(page, live_server, incline):
    parent = incline
    login_and_open_pass(page, live_server, parent, 1)
    suggestions = page.get_by_test_id("ocr-suggestion")
    expect(suggestions).to_have_count(0)
    page.get_by_role("button", name="Propose text (OCR)").click()
    expect(suggestions).to_have_count(4, timeout=20_000)
    expect(page.locator("[data-ocr-box]")).to_have_count(4)
    expect(page.get_by_test_id("ocr-status")).to_contain_text("4 suggestions")
    texts = [suggestions.nth(i).locator("input").input_value() for i in range(4)]
    assert texts == ["4.0 kg", "A", "mg", "37°"]
    screenshot(page, "ocr_suggestions")

    # Keyboard: T makes the first suggestion active, Enter accepts it.
    page.locator("#ws-viewport").focus()
    page.keyboard.press("t")
    expect(page.locator(".ws-ocr-box.is-active")).to_have_count(1)
    page.keyboard.press("Enter")
    expect(suggestions).to_have_count(3)

    # Edit: change the text in the suggestion's field, Enter accepts it as edited.
    field = page.locator("[data-ocr-row] input").first
    assert field.input_value() == "A"
    field.fill("B")
    field.press("Enter")
    expect(suggestions).to_have_count(2)

    # Drop one by its button, then accept the rest.
    assert suggestions.first.locator("input").input_value() == "mg"
    suggestions.first.get_by_role("button", name="Drop").click()
    expect(suggestions).to_have_count(1)
    page.get_by_role("button", name="Accept all").click()
    expect(suggestions).to_have_count(0)
    expect(page.get_by_test_id("ocr-status")).to_have_text("No suggestions left.")
    screenshot(page, "ocr_accepted")

    state = page.request.get(
        live_server.url + reverse("annotation-api:pass-detail", args=[parent.problem_id, 1])
    ).json()
    nodes = [(n["id"], n["type"], n["text"], n["bbox_1000"]) for n in state["document"]["visual_nodes"]]
    assert nodes == [
        ("v001", "text_glyph", "4.0 kg", [277, 196, 359, 239]),
        ("v002", "text_glyph", "B", [364, 343, 386, 383]),
        ("v003", "text_glyph", "37°", [255, 752, 302, 787]),
    ]
    assert state["version"] == 3 and PassDocument.objects.get(parent=parent, pass_no=1).version == 3
    decided = sorted(
        OcrProposal.objects.filter(parent=parent).values_list("text", "status", "visual_id", "final_text")
    )
    assert decided == [
        ("37°", "accepted", "v003", "37°"),
        ("4.0 kg", "accepted", "v001", "4.0 kg"),
        ("A", "edited", "v002", "B"),
        ("mg", "dropped", "", ""),
    ]
    # The workspace took the returned version: a later edit saves without a conflict.
    expect(page.get_by_test_id("save-state")).not_to_contain_text("conflict")
    assert_no_csp_violations(page)
