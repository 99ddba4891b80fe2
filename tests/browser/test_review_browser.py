"""Browser: a probe reviewer takes a parent from the queue, answers blind, reveals, ticks the six confirmations
and approves; a second reviewer does the same and the probes become approved."""

from __future__ import annotations

from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from review.models import CONFIRMATION_KEYS, BlindAnswer, ReviewDecision
from tests.browser.conftest import assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login
from tests.probes.conftest import make_demo_parent


def _review_parent(page, live_server, role_label: str, shots: str | None) -> None:
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name=f"{role_label} (1 waiting)").first.click()
    page.wait_for_selector("#slot-probes")
    while page.locator("#next-probe").count():
        page.locator("#next-probe").click()
        page.wait_for_selector("#user-message")
        qid = page.url.rstrip("/").split("/")[-1]
        probe = Probe.objects.select_related("key").get(logical_probe_id=qid)
        assert "gold-aliases" not in page.content()  # the private side is not on the blind page
        page.wait_for_load_state("load")
        assert page.locator(".attachments img").evaluate_all("imgs => imgs.every(i => i.complete && i.naturalWidth > 0)")
        page.fill("#binding", ", ".join(probe.key.gold_aliases))
        for read in probe.key.key["read_targets"]:
            page.fill(f"#read_{read['anchor_alias']}", read["expected"])
        if shots:
            screenshot(page, f"{shots}-blind")
        page.click("#submit-blind")
        page.wait_for_selector("#decision-form")
        assert page.locator("#gold-aliases").inner_text() == ", ".join(probe.key.gold_aliases)
        assert page.locator("#blind-match").inner_text() == "matches the target"
        for key in CONFIRMATION_KEYS:
            page.check(f"#confirm_{key}")
        if shots:
            screenshot(page, f"{shots}-reveal")
            shots = None
        page.click("#approve")
        page.wait_for_selector("#slot-probes")
        assert_no_csp_violations(page)


def test_reviewer_blind_answer_reveal_confirm_approve(page, page_problems, live_server, make_browser_user,
                                                      django_user_model):
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
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("link", name="SYNTHETIC_TEST_ONLY").click()
    page.wait_for_selector("#slot-probes")
    while page.locator("#next-probe").count():
        page.locator("#next-probe").click()
        page.wait_for_selector("#user-message")
        qid = page.url.rstrip("/").split("/")[-1]
        probe = Probe.objects.select_related("key").get(logical_probe_id=qid)
        page.fill("#binding", ", ".join(probe.key.gold_aliases))
        for read in probe.key.key["read_targets"]:
            page.fill(f"#read_{read['anchor_alias']}", read["expected"])
        if not BlindAnswer.objects.exists():
            screenshot(page, "h10-blind")
        page.click("#submit-blind")
        page.wait_for_selector("#decision-form")
        for key in CONFIRMATION_KEYS:
            page.check(f"#confirm_{key}")
        if ReviewDecision.objects.count() == 0:
            screenshot(page, "h10-reveal")
        page.click("#approve")
        page.wait_for_selector("#slot-probes")
    screenshot(page, "h10-slot-done")
    assert ReviewDecision.objects.filter(status="approved").count() == 3
    assert set(Probe.objects.values_list("state", flat=True)) == {"pending_review"}
    page.get_by_role("button", name="Log out").click()

    login(page, live_server, "bob", "/review/")
    _review_parent(page, live_server, "Secondary", None)
    assert set(Probe.objects.values_list("state", flat=True)) == {"approved"}
    assert_no_csp_violations(page)
