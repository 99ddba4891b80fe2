"""Browser: from login, by clicks only, an admin opens the assignments page from their home, filters to one
source's unassigned problems, ticks three, chooses two annotators and a due date and spreads the three evenly;
then one of the annotators logs in and finds them first on their home, the overdue one marked."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment
from tests.browser.conftest import PASSWORD, assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login
from tests.factories import ParentProblemFactory, SourceFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_spreads_three_problems_over_two_annotators_who_see_them_first(
    page, live_server, make_browser_user
):
    make_browser_user("boss", "admin")
    make_browser_user("ann1", "annotator")
    make_browser_user("ann2", "annotator")
    make_browser_user("rev", "source_reviewer")
    seephys, other = SourceFactory(name="SeePhys"), SourceFactory(name="PhysReason")
    for n in range(1, 6):
        ParentProblemFactory(problem_id=f"seephys_{n:02d}", source=seephys, domain="mechanics")
    ParentProblemFactory(problem_id="physreason_01", source=other, domain="optics")
    due = timezone.localdate() + timedelta(days=7)

    login(page, live_server, "boss", next_path="/")
    home = page.get_by_test_id("home-assignments")
    assert home.get_by_role("link", name="6 problems without an annotator").is_visible()
    home.get_by_role("link", name="Assign problems").click()
    page.get_by_role("heading", name="Assignments", level=1).wait_for()
    page.get_by_label("Source", exact=True).select_option(label="SeePhys")
    page.get_by_label("Unassigned only").select_option(label="No annotator yet")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"/assignments/\?.*unassigned=annotator"))
    rows = page.get_by_test_id("assignment-row")
    assert rows.count() == 5
    assert page.get_by_role("heading", name=re.compile(r"^5 problems")).is_visible()

    for pid in ("seephys_01", "seephys_02", "seephys_03"):
        page.get_by_label(f"Tick {pid}").check()
    assert page.get_by_role("group", name="Annotators").is_visible()
    assert page.get_by_role("group", name="Source reviewers").is_hidden()  # only the chosen role's users
    page.get_by_label("ann1", exact=True).check()
    page.get_by_label("ann2", exact=True).check()
    page.get_by_label(re.compile(r"^Due date")).fill(due.isoformat())
    spread = page.get_by_role("button", name="Spread 3 selected evenly across 2 users")
    assert page.get_by_test_id("assign-summary").inner_text() == "3 ticked · chosen: ann1, ann2"
    screenshot(page, "i31-assignments-before")
    spread.click()

    page.wait_for_url(re.compile(r"/assignments/\?.*unassigned=annotator"))
    assert page.locator("#messages").inner_text().strip() == (
        f"Assigned 3 problems as annotator: ann1 2, ann2 1, due {due.isoformat()}."
    )
    assert [r.get_attribute("data-problem") for r in page.get_by_test_id("assignment-row").all()] == [
        "seephys_04",
        "seephys_05",
    ]  # the filter still says "no annotator yet"
    page.get_by_label("Unassigned only").select_option(label="No")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r"/assignments/\?.*source=\d+.*&unassigned=&"))
    cells = {
        r.get_attribute("data-problem"): r.get_by_test_id("cell-annotator").inner_text()
        for r in page.get_by_test_id("assignment-row").all()
    }
    assert cells == {
        "seephys_01": f"ann1 due {due.isoformat()}",
        "seephys_02": f"ann2 due {due.isoformat()}",
        "seephys_03": f"ann1 due {due.isoformat()}",
        "seephys_04": "—",
        "seephys_05": "—",
    }
    screenshot(page, "i31-assignments-after")
    assert_no_csp_violations(page)
    # one of ann1's problems is overdue by now (as if a week had passed for it)
    Assignment.objects.filter(parent__problem_id="seephys_03").update(
        due_date=timezone.localdate() - timedelta(days=1)
    )

    page.get_by_role("button", name="Log out").click()
    page.get_by_label("Username").fill("ann1")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Welcome, ann1").wait_for()
    section = page.get_by_test_id("home-annotator")
    assigned = section.get_by_test_id("assigned-row")
    assert [r.get_attribute("data-problem") for r in assigned.all()] == ["seephys_03", "seephys_01"]
    assert assigned.nth(0).get_attribute("data-overdue") == "1" and "overdue" in assigned.nth(0).inner_text()
    assert assigned.nth(1).inner_text().split("\t")[:3] == ["seephys_01", "Pass 1: start", due.isoformat()]
    assert section.get_by_test_id("assigned-overdue").inner_text() == "1 assigned problem overdue."
    box = section.get_by_test_id("assigned-table").bounding_box()
    figures = section.locator(".home-figures").bounding_box()
    assert box["y"] < figures["y"]  # assigned work first, then every problem's counts
    screenshot(page, "i31-annotator-home-assigned")
    assigned.nth(1).get_by_role("link", name="Open Pass 1").click()
    page.wait_for_url(f"{live_server.url}/problems/seephys_01/passes/1/")
    assert_no_csp_violations(page)
