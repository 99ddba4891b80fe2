"""Browser: probe review by clicking and by keyboard (issue 28 item 8) and the adjudicator's page (item 9).

A reviewer answers each binding by clicking the candidate (its box on a view, or its button), uses the keys
1–9, n, ?, c, a and r, and finds the blind answer, the target and the decision together above the fold at
1,280 × 800; an adjudicator sees the two reviews side by side at the top, whole, and one blind-order wording."""

from __future__ import annotations

from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from review import redaction, services
from review.models import CONFIRMATION_KEYS, ReviewDecision, Role
from tests.browser.conftest import assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login
from tests.probes.conftest import make_demo_parent
from tests.review.test_flow import approve, review_all

FOLD = {"width": 1280, "height": 800}


def _probe_on(page) -> Probe:
    parts = page.url.rstrip("/").split("/")
    qid = parts[-2] if parts[-1] == "target" else parts[-1]
    return Probe.objects.select_related("key").get(logical_probe_id=qid)


def _pressed(page) -> list[str]:
    return page.locator("[data-pick][aria-pressed=true]").evaluate_all(
        "els => [...new Set(els.map(e => e.dataset.pick))]"
    )


def _answer_by_clicking(page, probe: Probe) -> None:
    """Choose the target's candidates by clicking them: the box drawn on a view where there is one, else the
    candidate's button; then type the reads and submit."""
    page.fill("#binding", "")
    assert page.locator("#pick-status").inner_text() == "Nothing chosen yet."
    for alias in probe.key.gold_aliases:
        mark = page.locator(f".candidate-mark[data-pick='{alias}']")
        (mark.first if mark.count() else page.locator(f".candidate-pick[data-pick='{alias}']")).click()
    assert sorted(_pressed(page)) == sorted(probe.key.gold_aliases)
    assert [a.strip() for a in page.input_value("#binding").split(",")] == probe.key.gold_aliases
    for read in probe.key.key["read_targets"]:
        page.fill(f"#read_{read['anchor_alias']}", read["expected"])
    page.click("#submit-blind")


def _wait_for_slot(page) -> None:
    """Back on the slot page after a decision; a refusal is shown as an error and fails here with its text."""
    page.wait_for_selector("#slot-probes, .alert--error")
    assert not page.locator(".alert--error").count(), page.locator(".alert--error").inner_text()


def _assert_above_the_fold(page, *selectors: str) -> None:
    for selector in selectors:
        box = page.locator(selector).bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= FOLD["height"], (
            selector,
            box,
        )


def test_a_reviewer_answers_by_clicking_and_decides_by_keys(
    page, live_server, make_browser_user, django_user_model
):
    make_browser_user("alice", "probe_reviewer")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    page.set_viewport_size(FOLD)

    login(page, live_server, "alice", "/")
    page.get_by_role("link", name="Review queue").click()
    page.get_by_role("button", name="Primary (1 waiting)").click()
    page.wait_for_selector("#slot-probes")
    page.get_by_role("link", name="Next blind answer").click()
    page.wait_for_selector("#blind-form")
    probe = _probe_on(page)
    picks = page.locator(".candidate-pick")
    assert picks.count() == len(services.contract_of(probe)["aliases"])
    assert page.locator(".candidate-mark:visible").count() > 0  # candidates marked on the views, clickable
    # the keys 1–9 choose candidate n of the list; typing updates the same state
    page.locator("h1").click()
    page.keyboard.press("2")
    second = picks.nth(1).get_attribute("data-pick")
    assert page.input_value("#binding").split(",")[-1].strip() == second and second in _pressed(page)
    page.fill("#binding", picks.nth(0).get_attribute("data-pick"))
    assert _pressed(page) == [picks.nth(0).get_attribute("data-pick")]
    # ? shows the shortcut list
    page.locator("h1").click()
    page.keyboard.press("?")
    assert page.locator("#shortcut-help").get_attribute("open") is not None
    assert "choose candidate 1–9 of the list" in page.locator("#shortcut-help").inner_text()
    screenshot(page, "h28-8-blind-picks")
    _answer_by_clicking(page, probe)

    decided: list[str] = []
    while True:  # the strict order: every probe blind first (back to the slot page after each), then targets
        page.wait_for_selector("#slot-probes, #decision-form")
        if page.locator("#decision-form").count():
            break
        page.locator("#next-probe").click()
        page.wait_for_selector("#blind-form")
        _answer_by_clicking(page, _probe_on(page))

    first_target = _probe_on(page)
    assert page.locator("#blind-match").inner_text() == "matches the target"
    _assert_above_the_fold(page, "#blind-answer-box", "#gold-aliases", "#decision-form legend", "#approve")
    screenshot(page, "h28-8-target-fold")
    # n opens the next probe's target without deciding this one
    page.locator("h1").click()
    page.keyboard.press("n")
    page.wait_for_url(lambda url: first_target.logical_probe_id not in url)
    page.wait_for_selector("#decision-form")
    while page.locator("#decision-form").count():
        probe = _probe_on(page)
        page.locator("h1").click()
        page.keyboard.press("c")
        assert all(page.is_checked(f"#confirm_{key}") for key in CONFIRMATION_KEYS)
        assert (
            page.locator("#decision-status").inner_text()
            == f"All {len(CONFIRMATION_KEYS)} confirmations ticked."
        )
        if len(decided) == 2:  # the last: r asks for the note first, then rejects
            page.keyboard.press("r")
            assert page.evaluate("document.activeElement.id") == "note"
            assert page.locator("#decision-status").inner_text().startswith("Write the note first")
            page.fill("#note", "[localization error] the label sits on the arrow's head")
            page.select_option("#severity", "serious")
            page.locator("h1").click()
            page.keyboard.press("r")
        else:
            page.keyboard.press("a")
        _wait_for_slot(page)
        decided.append(probe.logical_probe_id)
        if page.locator("#next-probe").count():
            page.locator("#next-probe").click()
            page.wait_for_selector("#decision-form")
    statuses = dict(ReviewDecision.objects.values_list("probe__logical_probe_id", "status"))
    assert sorted(statuses) == sorted(decided) and len(decided) == 3
    assert [statuses[q] for q in decided] == ["approved", "approved", "rejected"]
    assert decided[2] != first_target.logical_probe_id or decided[0] != first_target.logical_probe_id
    assert_no_csp_violations(page)


def test_the_adjudicator_reads_both_reviews_side_by_side_whole(
    page, live_server, make_browser_user, django_user_model
):
    alice = make_browser_user("alice", "probe_reviewer")
    dave = make_browser_user("dave", "probe_reviewer")
    make_browser_user("carol", "adjudicator")
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    primary = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    review_all(primary, alice)
    target = Probe.objects.select_related("key").get(logical_probe_id=primary.blind_first_probe_id)
    probes = list(Probe.objects.select_related("key").filter(parent_id=primary.parent_id))
    public = "\n".join(f"{p.raw_messages['system']}\n{p.raw_messages['user']}" for p in probes)
    private: set[str] = set()
    for p in probes:
        if p.pk != target.pk:
            private |= redaction.private_strings(key=p.key.key, gold_view=p.gold_view, metadata=p.metadata)
    quoted = sorted(redaction.withheld(private, public_text=public), key=len)[-1]
    note = f"[ownership doubt] covers the {quoted}-adjacent label"
    secondary = services.review_claim(reviewer=dave, role=Role.SECONDARY, context="development")

    def decide(probe):
        if probe.pk != target.pk:
            return approve(probe)
        return services.DecisionIn(
            status="rejected", severity="serious", confirmations={}, packet_state="rejected", note=note
        )

    review_all(secondary, dave, decide=decide)
    page.set_viewport_size(FOLD)

    login(page, live_server, "carol", "/")
    page.get_by_role("link", name="Review queue").click()
    assert page.locator("[data-testid='blind-order-development']").text_content() == "strict blind order"
    page.get_by_role("button", name="Adjudicator (1 waiting)").click()
    page.wait_for_selector("#slot-probes")
    assert page.locator("#blind-order").inner_text().count("Strict blind order") == 1
    assert "Kit" not in page.locator("#blind-order").inner_text()
    page.get_by_role("link", name="Next blind answer").click()
    page.wait_for_selector("#blind-form")
    assert _probe_on(page).pk == target.pk  # only the disputed probe is the adjudicator's
    _answer_by_clicking(page, target)
    page.wait_for_selector("#decision-form")
    primary_card, secondary_card = page.locator("#review-primary"), page.locator("#review-secondary")
    assert "alice" in primary_card.inner_text() and "approved / none" in primary_card.inner_text()
    assert "dave" in secondary_card.inner_text() and "rejected / serious" in secondary_card.inner_text()
    assert note in secondary_card.inner_text()  # whole: nothing of a settled probe is withheld from them
    assert not page.locator("#withheld-note").count()
    assert redaction.WITHHELD not in page.content()
    left, right = primary_card.bounding_box(), secondary_card.bounding_box()
    summary = page.locator("#target-summary").bounding_box()
    assert left and right and summary
    assert abs(left["y"] - right["y"]) < 2 and left["x"] < right["x"]  # side by side
    assert left["y"] < summary["y"] and right["y"] + right["height"] <= FOLD["height"]  # at the top
    assert "Kit blind order" not in page.content()
    screenshot(page, "h28-9-adjudicator")
    page.locator("h1").click()
    page.keyboard.press("c")
    page.fill("#note", "confirmed: the owner is ambiguous")
    page.select_option("#severity", "serious")
    page.get_by_role("button", name="Reject").click()
    _wait_for_slot(page)
    target.refresh_from_db()
    assert target.state == "rejected"
    assert_no_csp_violations(page)
