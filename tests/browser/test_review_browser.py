"""Browser: a probe reviewer takes a parent from the queue, answers blind, reveals, ticks the six confirmations
and approves; a second reviewer does the same and the probes become approved."""

from __future__ import annotations

from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from review.models import CONFIRMATION_KEYS, BlindAnswer, ReviewDecision
from review.redaction import WITHHELD
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot
from tests.browser.test_pages_browser import login
from tests.probes.conftest import make_demo_parent


def _work_through_slot(page, shots: str | None) -> None:
    """From a slot page, follow "Next" until every probe is decided: in the strict blind order every probe is
    answered blind first (each submit returns to the slot page), then each target is revealed and decided."""
    while page.locator("#next-probe").count():
        page.locator("#next-probe").click()
        page.wait_for_selector("#user-message")
        qid = page.url.rstrip("/").split("/")[-2 if page.url.rstrip("/").endswith("target") else -1]
        probe = Probe.objects.select_related("key").get(logical_probe_id=qid)
        if page.locator("#blind-form").count():
            assert "gold-aliases" not in page.content()  # the private side is not on the blind page
            page.wait_for_load_state("load")
            assert page.locator(".attachments img").evaluate_all(
                "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)"
            )
            page.fill("#binding", ", ".join(probe.key.gold_aliases))
            for read in probe.key.key["read_targets"]:
                page.fill(f"#read_{read['anchor_alias']}", read["expected"])
            if shots and not BlindAnswer.objects.exists():
                screenshot(page, f"{shots}-blind")
            page.click("#submit-blind")
            page.wait_for_selector("#slot-probes, #decision-form")
            if page.locator("#slot-probes").count():
                assert "still to answer" in page.locator(".alert").first.inner_text()
                continue
        page.wait_for_selector("#decision-form")
        assert page.locator("#gold-aliases").inner_text() == ", ".join(probe.key.gold_aliases)
        assert page.locator("#blind-match").inner_text() == "matches the target"
        assert not page.locator("#withheld-note").count()  # strict order: nothing of a sibling is held back
        for key in CONFIRMATION_KEYS:
            page.check(f"#confirm_{key}")
        if shots and not ReviewDecision.objects.exists():
            screenshot(page, f"{shots}-reveal")
        page.click("#approve")
        page.wait_for_selector("#slot-probes")
        assert_no_csp_violations(page)


def _review_parent(page, live_server, role_label: str, shots: str | None) -> None:
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name=f"{role_label} (1 waiting)").first.click()
    page.wait_for_selector("#slot-probes")
    _work_through_slot(page, shots)


def test_reviewer_blind_answer_reveal_confirm_approve(
    page, page_problems, live_server, make_browser_user, django_user_model
):
    page_problems.allowed = ("status of 403",)  # the deliberate early visit to the reveal page
    make_browser_user("alice", "probe_reviewer")
    make_browser_user("bob", "probe_reviewer")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)

    login(page, live_server, "alice", "/review/")
    screenshot(page, "h10-queue")
    # the reveal page answers 403 before a blind answer, even when typed in directly
    page.get_by_role("button", name="Primary (1 waiting)").first.click()
    page.wait_for_selector("#slot-probes")
    first = page.locator("#next-probe").get_attribute("href")
    response = page.goto(f"{live_server.url}{first}target/")
    assert response.status == 403
    assert page.locator("#refusal-reason").inner_text() == "Submit your blind answer first."
    screenshot(page, "h10-refused")
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("link", name="SYNTHETIC_TEST_ONLY").click()
    page.wait_for_selector("#slot-probes")
    screenshot(page, "h10-slot")
    _work_through_slot(page, "h10")
    screenshot(page, "h10-slot-done")
    assert ReviewDecision.objects.filter(status="approved").count() == 3
    assert set(Probe.objects.values_list("state", flat=True)) == {"pending_review"}
    page.get_by_role("button", name="Log out").click()

    login(page, live_server, "bob", "/review/")
    _review_parent(page, live_server, "Secondary", None)
    assert set(Probe.objects.values_list("state", flat=True)) == {"approved"}
    assert_no_csp_violations(page)


def test_admin_chooses_the_kit_order_and_a_reviewer_sees_sibling_text_withheld(
    page, live_server, make_browser_user, django_user_model
):
    make_browser_user("root", "admin")
    make_browser_user("carl", "probe_reviewer")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)

    login(page, live_server, "root", "/")
    menu(page, "Review", "Probe review queue")
    page.wait_for_selector("[data-testid='blind-order-development']")
    assert page.locator("[data-testid='blind-order-development']").text_content() == "strict blind order"
    page.get_by_label("Blind order").select_option("kit")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("[data-testid='blind-order-development']")
    assert page.locator("[data-testid='blind-order-development']").text_content() == "Kit blind order"
    page.get_by_role("button", name="Log out").click()

    login(page, live_server, "carl", "/")
    page.get_by_role("link", name="Review queue").click()
    page.get_by_role("button", name="Primary (1 waiting)").click()
    page.wait_for_selector("#slot-probes")
    assert "Kit blind order" in page.locator("#blind-order").inner_text()
    page.get_by_role("link", name="Answer blind").click()
    qid = page.url.rstrip("/").split("/")[-1]
    probe = Probe.objects.select_related("key").get(logical_probe_id=qid)
    page.fill("#binding", probe.key.gold_aliases[0])
    for read in probe.key.key["read_targets"]:
        page.fill(f"#read_{read['anchor_alias']}", read["expected"])
    page.click("#submit-blind")
    page.wait_for_selector("#decision-form")  # the Kit's order: the blind-first target opens at once
    assert page.locator("#withheld-note").is_visible()
    page.locator("summary", has_text="Candidate map").click()
    assert WITHHELD in page.locator("pre.json").first.inner_text()
    # the note says why in words true for a primary reviewer in the Kit order: own probes not answered yet
    assert page.locator("#withheld-note").inner_text() == (
        f"Some text is withheld (shown as {WITHHELD}): it is private to 2 probes of this parent that you have "
        "not answered blind yet (the Kit blind order opens each target after your own blind answer): it "
        "appears once you have answered them."
    )
    screenshot(page, "h12-kit-order-withheld")
    assert_no_csp_violations(page)


def test_a_reviewer_gives_a_parent_back_before_answering(
    page, live_server, make_browser_user, django_user_model
):
    make_browser_user("dora", "probe_reviewer")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    login(page, live_server, "dora", "/")
    page.get_by_role("link", name="Review queue").click()
    page.get_by_role("button", name="Primary (1 waiting)").click()
    page.wait_for_selector("#slot-probes")
    page.get_by_role("button", name="Give this parent back to the queue").click()
    page.wait_for_selector("text=is back in the queue")
    assert page.get_by_role("button", name="Primary (1 waiting)").is_enabled()
    assert_no_csp_violations(page)
