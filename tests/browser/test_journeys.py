"""Journeys (issue 15): each role starts at login on a database prepared like ``make run``'s and finds, does
and checks its work by clicking only. The page fixture fails a test on any console error or CSP violation."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from annotation.models import ParentProblem, PassDocument
from physalign_site.demo_users import DEMO_PASSWORD_SUFFIX
from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from tests.browser.conftest import menu, screenshot, wait_for_js

WIDTH = 1280  # the narrowest desktop the menus must fit on one row


@pytest.fixture
def demo(role_groups, settings):
    """``make run``'s data (fewer generated problems, to stay quick): demo logins, models and problems."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    call_command("load_demo", count=3, seed=2027, verbosity=0)
    return ParentProblem.objects.count()


def sign_in(page, live_server, username: str) -> None:
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(f"{live_server.url}/")  # anonymous: to the login form
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(username + DEMO_PASSWORD_SUFFIX)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    page.get_by_role("heading", name=f"Welcome, {username}").wait_for()


def go_home(page) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Home", exact=True).click()
    page.wait_for_selector("h1:has-text('Welcome')")


def board_value(page, testid: str) -> int:
    return int(page.get_by_test_id(testid).locator(".board__value").inner_text())


def test_admin_follows_the_pipeline_board_from_import_to_review(page, live_server, demo):
    sign_in(page, live_server, "admin")
    nav = page.get_by_role("navigation", name="Main")
    # the grouped menu fits on one row at 1,280 px
    assert nav.bounding_box()["height"] < 60
    assert board_value(page, "stage-imported-parents") == demo
    approved = board_value(page, "stage-annotated-parents")
    assert approved == 3  # the generated problems come with Passes 1–4 approved
    assert board_value(page, "stage-compiled-probes") == 0
    screenshot(page, "j-admin-home-board")

    page.get_by_role("link", name="3 approved, not compiled yet").click()
    page.wait_for_url(re.compile(r"/compile/$"))
    page.get_by_role("button", name="Start compile run").click()
    page.wait_for_selector("text=Blocked groups by code")

    go_home(page)
    probes = Probe.objects.exclude(state=Probe.State.SUPERSEDED).count()
    assert probes > 0 and board_value(page, "stage-compiled-probes") == probes
    assert "Every approved parent is compiled." in page.get_by_test_id("pipeline-board").inner_text()
    page.get_by_role("link", name=f"{probes} probes awaiting review").click()
    page.wait_for_url(re.compile(r"/probes/\?state=pending_review$"))
    assert page.locator("tbody tr").count() == min(probes, 50)

    # every menu group opens and each item leads to a page (no 403)
    for group in ("Annotation", "Review", "Probes & releases", "Evaluation"):
        nav.locator("summary", has_text=group).click()
        assert nav.locator("details[open] .navmenu__list a").count() >= 1
    page.keyboard.press("Escape")
    menu(page, "Probes & releases", "Releases")
    page.get_by_role("heading", name="Releases").wait_for()
    menu(page, "Review", "Signoff")
    page.get_by_role("heading", name="Signoff").first.wait_for()


def test_annotator_finds_a_rejected_pass_with_the_reviewers_note_and_problems_to_start(
    page, live_server, demo
):
    doc = PassDocument.objects.filter(pass_no=2).order_by("parent__problem_id").first()
    PassDocument.objects.filter(pk=doc.pk).update(
        status=PassDocument.Status.REJECTED, review_note="The spring S1 is missing its constant."
    )
    sign_in(page, live_server, "annotator")
    section = page.get_by_test_id("home-annotator")
    assert section.get_by_test_id("rejection-note").inner_text() == "The spring S1 is missing its constant."
    screenshot(page, "j-annotator-home")
    section.get_by_role("link", name="Open").click()
    page.wait_for_url(re.compile(rf"/problems/{doc.parent.problem_id}/passes/2/$"))
    page.wait_for_selector("html[data-ws-ready]")

    go_home(page)
    to_start = ParentProblem.objects.filter(passes__isnull=True).count()
    page.get_by_role("link", name=re.compile(rf"^{to_start} To start")).click()
    page.wait_for_url(re.compile(r"/problems/\?work=to_start$"))
    assert page.get_by_role("status").first.inner_text().startswith(f"{to_start} problem")
    before = PassDocument.objects.count()
    first = page.locator("#results tbody tr").first
    problem_id = first.locator("th a").inner_text()
    first.locator("a.pass--link").first.click()
    page.wait_for_url(re.compile(rf"/problems/{problem_id}/passes/1/$"))
    page.wait_for_selector("html[data-ws-ready]")
    assert PassDocument.objects.count() == before  # opening a pass never writes


def test_source_reviewer_takes_the_oldest_submitted_pass_and_rejects_it_with_a_note(page, live_server, demo):
    doc = PassDocument.objects.filter(pass_no=1).order_by("parent__problem_id").first()
    PassDocument.objects.filter(pk=doc.pk).update(status=PassDocument.Status.SUBMITTED, approved_sha256="")
    sign_in(page, live_server, "source_reviewer")
    section = page.get_by_test_id("home-source-reviewer")
    screenshot(page, "j-source-reviewer-home")
    section.get_by_role("link", name=re.compile(r"^1 passes waiting")).click()
    page.wait_for_url(re.compile(r"/source-review/$"))
    assert page.get_by_test_id("queue-count").inner_text() == "1"
    page.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_url(re.compile(rf"/problems/{doc.parent.problem_id}/passes/1/review/$"))
    # the review page's tabs stay on review pages
    assert page.locator(".ws-tabs a[aria-current=page]").get_attribute("href").endswith("/passes/1/review/")
    page.get_by_label("Note (required to reject)").fill("R2 is not the resistor the text names.")
    page.get_by_role("button", name="Reject with note").click()
    page.wait_for_selector("text=R2 is not the resistor the text names.")
    go_home(page)
    assert (
        page.get_by_test_id("home-source-reviewer")
        .get_by_role("link", name=re.compile(r"^0 passes waiting"))
        .is_visible()
    )
    doc.refresh_from_db()
    assert (doc.status, doc.review_note) == ("rejected", "R2 is not the resistor the text names.")


def test_probe_reviewer_and_adjudicator_see_their_queue_and_open_slots(page, live_server, demo):
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    parents = Probe.objects.filter(split=Probe.Split.DEVELOPMENT).values("parent").distinct().count()
    sign_in(page, live_server, "probe_reviewer")
    section = page.get_by_test_id("home-reviewer")
    assert section.get_by_role(
        "link", name=re.compile(rf"^{parents} parents waiting for a primary")
    ).is_visible()
    screenshot(page, "j-probe-reviewer-home")
    section.get_by_role("link", name="Go to the review queue").click()
    page.get_by_role("button", name=re.compile(r"^Primary")).click()
    page.wait_for_selector("#slot-probes")
    go_home(page)
    section = page.get_by_test_id("home-reviewer")
    assert section.get_by_role("link", name=re.compile(r"^1 open slots")).is_visible()
    section.locator(".home-list a").first.click()
    page.wait_for_selector("#slot-probes")
    page.get_by_role("button", name="Log out").click()

    sign_in(page, live_server, "adjudicator")
    section = page.get_by_test_id("home-reviewer")
    assert section.get_by_role("link", name=re.compile(r"waiting for an adjudicator")).is_visible()
    screenshot(page, "j-adjudicator-home")
    menu(page, "Review", "Agreement")
    page.get_by_role("heading", name=re.compile("agreement", re.I)).first.wait_for()
    wait_for_js(page, "document.readyState === 'complete'")
