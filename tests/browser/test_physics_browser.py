"""Physics checks in Chromium (issue 30 §1), from login by clicks: a Pass 3 force given in joules shows as a
physics warning inline (its own group, and on its record) without blocking submit; clicking it selects the
quantity with the caret in its unit; an admin makes the rule blocking on /physics-rules/ by clicks, and the
annotator's submit is refused with the finding as the reason; the source reviewer sees the finding on the
review page. The page fixture fails a test on any console error."""

from __future__ import annotations

import copy
import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.demo.generator import generate_problem
from annotation.models import PassDocument
from annotation.services import pass_document_save, pass_document_submit
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

from .conftest import CSP_RECORDER, PASSWORD, assert_no_csp_violations, screenshot
from .test_workspace_browser import wait_saved
from .test_workspace_journey_browser import login_and_open_pass

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

UNIT_RULE = "PHYS_UNIT_DIMENSION"
UNIT_PATH = "quantities[4].unit_latex"  # q005, the weight W of the demo's beam problem


@pytest.fixture
def joules(make_browser_user):
    """The generated beam problem (known good): Passes 1–2 approved, Pass 3 saved by the annotator with the
    weight W = 300 in J."""
    annotator = make_browser_user("ann", "annotator")
    reviewer = make_browser_user("rev", "source_reviewer")
    admin = make_browser_user("boss", "admin")
    gen = generate_problem(seed=2027, index=5)
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(
        problem_id=gen.problem_id,
        stem=segments["stem"],
        query=segments["query"],
        language=gen.manifest_row["language"],
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    for pass_no, document in enumerate(gen.passes[:2], start=1):
        PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(document),
            approved_by=reviewer,
            updated_by=annotator,
        )
    wrong = copy.deepcopy(gen.passes[2])
    wrong["quantities"][4]["unit_latex"] = "J"
    pass_document_save(parent=parent, pass_no=3, document=wrong, actor=annotator, expected_version=None)
    return parent, annotator, admin


def login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")


def admin_makes_the_rule_blocking(browser, live_server) -> None:
    """The admin, in a browser of their own: the menu → Physics rules → "Make blocking" on the unit rule."""
    context = browser.new_context(viewport={"width": 1360, "height": 900}, locale="en-US")
    context.add_init_script(CSP_RECORDER)
    try:
        page = context.new_page()
        login(page, live_server, "boss")
        page.locator("summary", has_text="Annotation").click()
        page.get_by_role("link", name="Physics rules").click()
        page.wait_for_url(f"{live_server.url}{reverse('physics:rules')}")
        row = page.locator(f"#rule-{UNIT_RULE}")
        expect(row.get_by_test_id("severity")).to_have_text("warning")
        row.get_by_role("button", name=f"Make {UNIT_RULE} blocking").click()
        expect(page.locator("#messages")).to_contain_text(f"{UNIT_RULE} is now blocking.")
        expect(page.locator(f"#rule-{UNIT_RULE}").get_by_test_id("severity")).to_have_text("blocking")
        screenshot(page, "physics-rules-admin-blocking")
        assert_no_csp_violations(page)
    finally:
        context.close()


def test_a_physics_warning_is_inline_and_clicking_it_selects_the_quantity(page, live_server, joules):
    parent, _, _ = joules
    login_and_open_pass(page, live_server, parent, 3)

    expect(page.locator("#ws-issues h2").first).to_have_text("No validation issues ✓")
    warnings = page.get_by_test_id("physics-warnings")
    warning = warnings.get_by_role("button").filter(has_text=UNIT_RULE)
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text(UNIT_PATH)
    expect(page.locator("#ws-issues")).to_contain_text("Physics warnings (1)")
    card = page.locator("[data-rec='quantities:q005']")
    expect(card.locator(".ws-rec-issues")).to_contain_text(UNIT_RULE)  # on its record, like a validator issue
    expect(card).not_to_have_class(re.compile(r"\bis-selected\b"))
    page.locator("#ws-issues").scroll_into_view_if_needed()
    screenshot(page, "physics-warning-inline")

    warning.click()

    expect(card).to_have_class(re.compile(r"\bis-selected\b"))
    expect(card).to_be_in_viewport()
    field = card.locator("[data-field=unit_latex]")
    expect(field).to_be_focused()
    expect(field).to_have_value("J")
    screenshot(page, "physics-warning-click-selects-quantity")
    assert_no_csp_violations(page)


def test_a_blocking_rule_refuses_submit_with_the_reason(page, live_server, joules, browser, page_problems):
    parent, _, _ = joules
    page_problems.allowed = ("400 (Bad Request)",)  # the refused submit itself, reported by the browser
    login_and_open_pass(page, live_server, parent, 3)
    submit = page.locator("#ws-submit")
    # a warning never blocks: the annotator could submit now
    expect(submit).to_be_enabled()
    expect(submit).to_have_text("Submit for review")

    admin_makes_the_rule_blocking(browser, live_server)
    submit.click()  # the page still shows the rule as a warning; the server refuses

    banner = page.locator("#ws-banner")
    expect(banner).to_contain_text(
        f"Not submitted: Blocked by physics rule an admin made blocking — {UNIT_RULE}"
    )
    expect(banner).to_contain_text(UNIT_PATH)
    expect(page.locator("#ws-issues h2").first).to_have_text("1 validation issue")
    expect(page.locator("#ws-issues")).to_contain_text("Submitting is blocked until this issue is fixed.")
    expect(page.get_by_test_id("issues")).to_contain_text(UNIT_RULE)
    expect(submit).to_be_disabled()
    page.locator("#ws-issues").scroll_into_view_if_needed()
    screenshot(page, "physics-blocking-submit-refused")
    assert PassDocument.objects.get(parent=parent, pass_no=3).status == PassDocument.Status.DRAFT

    # the fix: the weight in newtons; then submit goes through
    page.get_by_test_id("issues").get_by_role("button").filter(has_text=UNIT_RULE).click()
    field = page.locator("[data-rec='quantities:q005'] [data-field=unit_latex]")
    expect(field).to_be_focused()
    page.keyboard.type("N")
    wait_saved(page)
    expect(page.locator("#ws-issues h2").first).to_have_text("No validation issues ✓", timeout=10_000)
    expect(page.get_by_test_id("physics-warnings")).to_have_count(0)
    submit.click()
    expect(banner).to_contain_text("Submitted for source review.")
    stored = PassDocument.objects.get(parent=parent, pass_no=3)
    assert stored.status == PassDocument.Status.SUBMITTED
    assert stored.document["quantities"][4]["unit_latex"] == "N"
    assert stored.physics_check["findings"] == []
    assert_no_csp_violations(page)


def test_the_source_reviewer_sees_the_findings_on_the_review_page(page, live_server, joules):
    parent, annotator, _ = joules
    pass_document_submit(doc=PassDocument.objects.get(parent=parent, pass_no=3), actor=annotator)
    login(page, live_server, "rev")
    page.locator("summary", has_text="Review").click()
    page.get_by_role("link", name="Source review queue").click()
    page.get_by_role("link", name="Review", exact=True).first.click()
    page.wait_for_url(f"{live_server.url}{reverse('annotation:pass_review', args=[parent.problem_id, 3])}")
    page.wait_for_selector("html[data-ws-ready]")
    findings = page.get_by_test_id("physics-findings")
    expect(findings).to_contain_text("Physics checks: 1 finding")
    expect(findings).to_contain_text(UNIT_RULE)
    expect(findings).to_contain_text(UNIT_PATH)
    expect(page.get_by_role("button", name="Approve this version")).to_be_enabled()  # the reviewer judges it
    expect(page.get_by_test_id("physics-warnings")).to_contain_text(UNIT_RULE)
    screenshot(page, "physics-findings-review-page")
    assert_no_csp_violations(page)
