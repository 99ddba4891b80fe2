"""Browser: an admin loads the scripted debate demo (Celery eager), opens the comparison page (table and
painted chart: the debate beats the best single solver with early stops), then a transcript round by round."""

from __future__ import annotations

from solving.management.commands.load_debate_demo import debate_demo_load
from solving.models import DebateTurn, SolveResponse
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_eval_browser import _canvas_painted
from tests.browser.test_pages_browser import login


def test_debate_comparison_and_transcript(page, live_server, make_browser_user, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("boss", "admin", key_holder=True)  # the transcript shows the reference answer
    result = debate_demo_load(count=20, launch=True)  # transactional test: on-commit dispatch runs eagerly

    login(page, live_server, "boss", "/debate/compare/")
    table = page.locator("#table-compare")
    assert table.locator("tbody tr").count() == 4
    debate_row = table.locator("tbody tr[data-kind=debate]")
    assert debate_row.locator("[data-col=accuracy]").inner_text() == "0.750"
    assert debate_row.locator("[data-col=calls]").inner_text() == "105"
    assert "16 (80%)" in debate_row.locator("[data-col=early]").inner_text()
    assert "215 calls saved" in debate_row.locator("[data-col=early]").inner_text()
    best_single = table.locator("tbody tr[data-kind=single]", has_text="scripted-solver-a")
    assert best_single.locator("[data-col=accuracy]").inner_text() == "0.700"
    wait_for_js(page, "document.getElementById('chart-compare').dataset.ready === '1'")
    assert _canvas_painted(page, "#chart-compare")
    screenshot(page, "debate-compare")

    # a problem that needed re-solving and selection: its transcript shows every round, masks and the decision
    hard = (
        SolveResponse.objects.filter(
            run_id=result.debate_run_id, turns__stage="selection", turns__parsed__decided_by="default_solver"
        )
        .order_by("pk")
        .first()
    )
    assert hard is not None
    page.goto(f"{live_server.url}/debate/runs/{result.debate_run_id}/")
    assert page.get_by_test_id("early").inner_text().startswith("16 of 20")
    page.locator(f"a[href='/debate/responses/{hard.pk}/']").click()
    page.wait_for_url(f"{live_server.url}/debate/responses/{hard.pk}/")
    assert page.locator("section.transcript-round").count() == 3
    assert page.get_by_role("heading", name="Round 2").is_visible()
    assert page.locator("tr[data-stage=mask]").count() == 2
    assert page.locator("tr[data-stage=prune]").count() == 6
    assert "default_solver" in page.locator("tr[data-stage=selection]").inner_text()
    assert page.get_by_test_id("reference").inner_text() == hard.parent.answer
    assert page.get_by_test_id("correct").inner_text().startswith("no")
    calls = DebateTurn.objects.filter(response=hard, model__isnull=False).count()
    assert calls == hard.calls == 16
    page.locator("tr[data-stage=solve] summary", has_text="Prompt").first.click()
    assert "[Stage] solve round 1" in page.locator("tr[data-stage=solve] pre").nth(1).inner_text()
    screenshot(page, "debate-transcript")
    assert_no_csp_violations(page)
