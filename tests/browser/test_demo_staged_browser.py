"""Browser (issue 28 item 11): on the staged demo (``load_demo --stage``, what ``make run`` loads) each role logs in
by typing its demo password and finds its work on the home page, then opens it by clicks: the annotator a problem
with a diagram to start, the source reviewer a submitted pass, each probe reviewer and the adjudicator their
claimed slot, the admin the demo evaluation's results page with values and intervals."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun
from home.demo_stage import EVAL_MODELS, EVAL_RUN_NAME
from physalign_site.demo_users import DEMO_PASSWORD_SUFFIX
from review.models import BlindAnswer, ReviewSlot
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot


@pytest.fixture
def staged(role_groups, settings, tmp_path):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.VAR_DIR = tmp_path
    call_command("load_demo", "--count", "12", "--stage", stdout=StringIO())
    return {
        slot.reviewer.username: slot.parent.problem_id
        for slot in ReviewSlot.objects.filter(reviewer__isnull=False)
        .exclude(pk__in=BlindAnswer.objects.values("slot"))
        .select_related("reviewer", "parent")
    }


def sign_in(page, live_server, username: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(username + DEMO_PASSWORD_SUFFIX)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    page.get_by_role("heading", name=f"Welcome, {username}").wait_for()


def test_every_role_finds_its_work_on_first_login(page, live_server, staged):
    page.set_viewport_size({"width": 1280, "height": 900})

    sign_in(page, live_server, "annotator")
    section = page.get_by_test_id("home-annotator")
    assert (
        "The query target names the wrong quantity" in section.get_by_test_id("rejection-note").inner_text()
    )
    screenshot(page, "staged-annotator-home")
    section.get_by_role("link", name=re.compile(r"^26 To start")).click()
    page.wait_for_url(re.compile(r"/problems/\?work=to_start$"))
    first = page.locator("#results tbody tr").first
    problem_id = first.locator("th a").inner_text()
    assert problem_id.startswith("ostx_")  # a diagram; the text-only debate problems are not listed
    assert page.locator("#results tbody tr", has_text="debate_demo_").count() == 0
    first.locator("th a").click()
    page.wait_for_url(re.compile(rf"/problems/{problem_id}/$"))
    assert page.locator("main img").count() >= 1

    sign_in(page, live_server, "source_reviewer")
    section = page.get_by_test_id("home-source-reviewer")
    assert section.get_by_role("link", name=re.compile(r"^7 passes waiting for review")).is_visible()
    screenshot(page, "staged-source-reviewer-home")
    section.get_by_role("link", name="demo_2028_00000 · Pass 3").click()
    page.wait_for_url(re.compile(r"/problems/demo_2028_00000/passes/3/review/$"))

    for username, role in (
        ("probe_reviewer", "Primary"),
        ("probe_reviewer2", "Secondary"),
        ("adjudicator", "Adjudicator"),
    ):
        sign_in(page, live_server, username)
        section = page.get_by_test_id("home-reviewer")
        assert section.get_by_role("link", name=re.compile(r"^1 open slot of yours")).is_visible()
        screenshot(page, f"staged-{username}-home")
        section.get_by_role("link", name=f"{staged[username]} · {role}").click()
        page.wait_for_url(re.compile(r"/review/slots/\d+/$"))
        assert page.get_by_role("heading", name=staged[username], exact=True).is_visible()

    sign_in(page, live_server, "admin")
    board = page.get_by_test_id("pipeline-board")
    assert int(board.get_by_test_id("stage-evaluated-parents").locator(".board__value").inner_text()) > 0
    screenshot(page, "staged-admin-board")
    menu(page, "Evaluation", "Evaluation runs")
    page.wait_for_url(f"{live_server.url}/runs/")
    run = EvalRun.objects.get(name=EVAL_RUN_NAME)
    page.get_by_role("link", name=f"#{run.pk} {EVAL_RUN_NAME}").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/")
    table = page.locator("#table-main")
    for model in EVAL_MODELS:
        cells = (
            table.locator("tr", has=page.locator(f"th:text-is('{model}')")).locator("td").all_inner_texts()
        )
        assert len(cells) == 6 and all(re.match(r"\d\.\d{3}", c) for c in cells), (model, cells)
        assert all(re.fullmatch(r"\d\.\d{3}\s*\[\d\.\d{3}, \d\.\d{3}\]", c) for c in cells[:3]), (
            model,
            cells,
        )
    assert "bounds" not in page.locator("#table-quadrants").inner_text()
    page.locator("#chart-quadrants").scroll_into_view_if_needed()
    screenshot(page, "staged-admin-results")
    table.scroll_into_view_if_needed()
    screenshot(page, "staged-admin-results-table")
    assert_no_csp_violations(page)
