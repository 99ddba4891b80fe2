"""Browser: an admin grades short-answer/calculation solutions: adds and removes rubric rows, sees the normalized
credit update live, is stopped client-side when awarded > maximum, saves with the keyboard and lands on the next
ungraded response; then the run is complete and SolveAcc is shown."""

from __future__ import annotations

from models_registry.models import ModelConfig
from solving.models import SolveResponse, SolveRun
from solving.runs import solve_run_create, solve_run_dispatch
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login
from tests.factories import ParentProblemFactory


def _graded_run():
    ParentProblemFactory(
        problem_id="GRADE_B1",
        stem="GRADE-ONE A spring is compressed.",
        query="Energy stored?",
        answer_type="calc",
        answer="SECRET-5J",
        solution="SECRET-SOLUTION",
    )
    ParentProblemFactory(
        problem_id="GRADE_B2",
        stem="GRADE-TWO A lever balances.",
        query="Explain why.",
        answer_type="short",
        answer="SECRET-TORQUES",
    )
    model = ModelConfig.objects.create(
        name="grader-script",
        provider="scripted",
        model="s",
        extra={
            "responses": [
                {"match": "GRADE-ONE", "outputs": ["E = k x^2 / 2 = \\boxed{5 J}"]},
                {"match": "GRADE-TWO", "outputs": ["Torques balance: \\boxed{F_1 d_1 = F_2 d_2}"]},
            ],
            "backoff_base_seconds": 0,
        },
    )
    run = solve_run_create(
        model=model, parent_ids=["GRADE_B1", "GRADE_B2"], name="browser grading", enqueue=False
    )
    solve_run_dispatch(run_id=run.pk)
    return run


def _credit(page) -> str:
    return page.locator("#live-credit").inner_text()


def test_admin_grades_with_rubric_and_moves_on(page, live_server, make_browser_user, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("grader", "admin", key_holder=True)
    run = _graded_run()
    first, second = run.responses.order_by("pk")
    assert first.grading == second.grading == "pending"

    login(page, live_server, "grader", f"/solve-runs/{run.pk}/")
    page.locator("#grade-next").click()
    page.wait_for_url(f"{live_server.url}/solve-runs/responses/{first.pk}/grade/")
    wait_for_js(page, "document.getElementById('live-credit').textContent !== ''")
    assert "5 J" in page.get_by_test_id("final-answer").inner_text()

    rows = page.locator("#component-rows .component-row")
    assert rows.count() == 1
    rows.nth(0).locator(".component-description").fill("energy of a spring")
    rows.nth(0).locator(".component-awarded").fill("2")
    rows.nth(0).locator(".component-maximum").fill("2")
    assert _credit(page) == "1.000"
    page.locator("#add-component").click()
    assert rows.count() == 2
    rows.nth(1).locator(".component-description").fill("numerical value")
    rows.nth(1).locator(".component-maximum").fill("3")
    rows.nth(1).locator(".component-awarded").fill("4")  # more than the maximum
    assert _credit(page) == "—"
    page.locator("#save-next").click()
    assert page.locator("#client-error").is_visible()
    assert "between 0 and the maximum" in page.locator("#client-error").inner_text()
    assert SolveResponse.objects.get(pk=first.pk).grading == "pending"  # nothing was sent
    rows.nth(1).locator(".component-awarded").fill("1")
    assert _credit(page) == "0.600"  # (2 + 1) / (2 + 3)
    page.keyboard.press("Alt+a")  # add a third row from the keyboard, then remove it
    assert rows.count() == 3
    rows.nth(2).locator(".component-remove").click()
    assert rows.count() == 2 and _credit(page) == "0.600"
    page.keyboard.press("Alt+c")
    assert page.locator("#correct").is_checked()
    screenshot(page, "solve-grading")
    rows.nth(1).locator(".component-awarded").press("Enter")  # Enter = save and next ungraded
    page.wait_for_url(f"{live_server.url}/solve-runs/responses/{second.pk}/grade/")

    first.refresh_from_db()
    assert first.grading == "graded" and abs(first.credit - 0.6) < 1e-9 and first.correct is True
    assert list(first.components.values_list("description", flat=True)) == [
        "energy of a spring",
        "numerical value",
    ]

    rows = page.locator("#component-rows .component-row")
    rows.nth(0).locator(".component-description").fill("names the balance of torques")
    rows.nth(0).locator(".component-maximum").fill("1")
    rows.nth(0).locator(".component-awarded").fill("0")
    assert _credit(page) == "0.000"
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{live_server.url}/solve-runs/{run.pk}/")
    assert SolveRun.objects.get(pk=run.pk).status == "completed"
    # (0.6 + 0) / 2, with its parent bootstrap CI
    assert page.get_by_test_id("solve-acc").inner_text() == "0.300 95% CI [0.000, 0.600], 2 parents"
    assert_no_csp_violations(page)
