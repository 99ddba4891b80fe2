"""Browser: an admin asks for a double-annotation sample from the menu; the second annotator finds it in their
menu, annotates Pass 1 on their own in the ordinary workspace (autosaved to their own document), marks it done, and
is refused the first annotation when they try its URL."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import IndependentPassDocument, SecondAnnotation
from annotation.services import pass_document_save
from tests.annotation.double.conftest import FIRST_SECRET, first_pass1
from tests.browser.conftest import assert_no_csp_violations, incline_diagram, menu, screenshot
from tests.browser.test_pages_browser import login
from tests.browser.test_workspace_browser import drag
from tests.factories import ParentProblemFactory, ProblemImageFactory, SourceFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_sample_is_asked_for_and_annotated_blind(page, page_problems, live_server, make_browser_user):
    make_browser_user("boss", "admin")
    first = make_browser_user("first", "annotator")
    make_browser_user("second", "annotator")
    source = SourceFactory(name="dbl-browser")
    for n in range(3):
        parent = ParentProblemFactory(
            problem_id=f"dblb_{n}", source=source, stem="A block of mass m rests on an incline."
        )
        ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1, data=incline_diagram(480, 300))
        pass_document_save(
            parent=parent,
            pass_no=1,
            document=first_pass1(parent.problem_id),
            actor=first,
            expected_version=None,
        )

    login(page, live_server, "boss", "/")
    menu(page, "Admin", "Double annotation")
    page.get_by_label("Source").select_option("dbl-browser")
    page.get_by_label("Sample size").fill("2")
    page.get_by_label("second").check()
    page.get_by_role("button", name="Draw the sample").click()
    expect(page.locator(".messages, [role=status], .alert").first).to_contain_text(
        "2 parents get a second annotator"
    )
    row = page.get_by_test_id("samples").locator("tbody tr").first
    expect(row).to_contain_text("dbl-browser")
    expect(row).to_contain_text("second (2)")
    screenshot(page, "i31-double-samples")
    chosen = sorted(SecondAnnotation.objects.values_list("parent__problem_id", flat=True))
    assert len(chosen) == 2

    page.context.clear_cookies()
    login(page, live_server, "second", "/")
    menu(page, "Annotation", "Independent annotation")
    work = page.get_by_test_id("independent-work")
    expect(work.locator("tbody tr")).to_have_count(2)
    work.get_by_role("link", name=chosen[0]).click()
    page.wait_for_url(re.compile(rf".*/problems/{chosen[0]}/independent/passes/1/$"))
    page.wait_for_selector("html[data-ws-ready]")
    page.wait_for_selector("#ws-stage svg", state="attached")
    expect(page.get_by_test_id("independent-badge")).to_be_visible()
    assert FIRST_SECRET not in page.content()
    page.keyboard.press("r")
    drag(page, 0.10, 0.10, 0.20, 0.20)
    text_field = page.locator("[data-rec='visual_nodes:v001'] [data-field=text]")
    expect(text_field).to_be_focused()
    page.keyboard.type("m")
    expect(text_field).to_have_value("m")
    expect(page.get_by_test_id("save-state")).to_have_text(re.compile(r"^Saved · v\d+"), timeout=10_000)
    for _ in range(50):  # the autosave of the typed text may follow the first save
        mine = IndependentPassDocument.objects.get(second__parent__problem_id=chosen[0], pass_no=1)
        if [n["text"] for n in mine.document["visual_nodes"]] == ["m"]:
            break
        page.wait_for_timeout(200)
    assert [n["text"] for n in mine.document["visual_nodes"]] == ["m"]
    screenshot(page, "i31-independent-workspace")
    page.get_by_test_id("submit").click()
    expect(page.get_by_test_id("submit")).to_have_text("Submitted", timeout=10_000)
    mine.refresh_from_db()
    assert mine.status == "submitted"
    # the first annotation is untouched, and closed to them
    assert [n["text"] for n in mine.second.parent.passes.get(pass_no=1).document["visual_nodes"]] == [
        FIRST_SECRET
    ]
    page_problems.allowed = ("status of 403",)  # the refusal below is the point
    response = page.goto(f"{live_server.url}/problems/{chosen[0]}/passes/1/")
    assert response.status == 403
    expect(page.locator("main")).to_contain_text("its first annotation is hidden from you")
    screenshot(page, "i31-first-annotation-refused")
    assert_no_csp_violations(page)
