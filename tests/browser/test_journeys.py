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
    to_start = ParentProblem.objects.filter(passes__isnull=True, images__isnull=False).distinct().count()
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
    section.get_by_role("link", name=re.compile(r"^1 pass waiting")).click()
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
        "link", name=re.compile(rf"^{parents} parents? waiting for a primary")
    ).is_visible()
    screenshot(page, "j-probe-reviewer-home")
    section.get_by_role("link", name="Go to the review queue").click()
    page.get_by_role("button", name=re.compile(r"^Primary")).click()
    page.wait_for_selector("#slot-probes")
    go_home(page)
    section = page.get_by_test_id("home-reviewer")
    assert section.get_by_role("link", name=re.compile(r"^1 open slot of yours")).is_visible()
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


def test_a_change_to_pass_1_makes_the_later_approvals_stale_and_the_reviewer_renews_one(
    page, live_server, demo
):
    """Approvals follow what they build on: Pass 1 changes after Passes 2–4 were approved; the source reviewer
    finds the three stale approvals from home, reads which pass changed, and approves Pass 2 again."""
    from django.contrib.auth import get_user_model

    from annotation.selectors import parent_passes_approved
    from annotation.services import pass_document_save

    parent = next(p for p in ParentProblem.objects.order_by("problem_id") if parent_passes_approved(parent=p))
    one = PassDocument.objects.get(parent=parent, pass_no=1)
    changed = {**one.document, "visual_nodes": [{**one.document["visual_nodes"][0], "confidence": "medium"}]}
    changed["visual_nodes"] += one.document["visual_nodes"][1:]
    pass_document_save(
        parent=parent,
        pass_no=1,
        document=changed,
        actor=get_user_model().objects.get(username="annotator"),
        expected_version=one.version,
    )
    sign_in(page, live_server, "source_reviewer")
    page.get_by_test_id("home-source-reviewer").get_by_role(
        "link", name=re.compile(r"^\d+ stale approvals")
    ).click()
    page.wait_for_url(re.compile(r"/source-review/#stale-heading$"))
    rows = page.locator("#stale-heading ~ .table-wrap tbody tr", has_text=parent.problem_id)
    assert rows.count() == 3
    assert rows.first.get_by_test_id("stale-why").inner_text() == "Pass 1, which it builds on, changed"
    screenshot(page, "j-stale-upstream-queue")
    rows.filter(has_text="Pass 2").get_by_role("link", name="Review again").click()
    page.wait_for_url(re.compile(rf"/problems/{parent.problem_id}/passes/2/review/$"))
    assert page.get_by_test_id("approval-state").inner_text() == (
        "Approval is stale: Pass 1, which it builds on, changed after it was approved. Review it again."
    )
    current_tab = page.locator(".ws-tab[aria-current=page] .ws-tab__state")
    assert current_tab.inner_text() == "approval stale"
    screenshot(page, "j-stale-upstream-review")
    page.get_by_role("button", name="Approve this version").click()
    page.wait_for_selector("[data-testid=approval-state].rv-fresh")
    assert current_tab.inner_text() == "approved"
    two = PassDocument.objects.select_related("parent").get(parent=parent, pass_no=2)
    assert two.approval_is_fresh
    three = PassDocument.objects.select_related("parent").get(parent=parent, pass_no=3)
    assert not three.approval_is_fresh and three.approval_stale_reasons == ["upstream"]


def test_source_reviewer_approves_and_takes_the_next_pass_by_clicks(page, live_server, demo):
    docs = list(PassDocument.objects.filter(pass_no=1).order_by("parent__problem_id")[:2])
    for doc in docs:
        PassDocument.objects.filter(pk=doc.pk).update(
            status=PassDocument.Status.SUBMITTED, approved_sha256=""
        )
    sign_in(page, live_server, "source_reviewer")
    page.get_by_test_id("home-source-reviewer").get_by_role(
        "link", name=re.compile(r"^2 passes waiting")
    ).click()
    page.wait_for_url(re.compile(r"/source-review/$"))
    reached = PassDocument.objects.filter(
        pass_no__lte=4, status__in=["submitted", "approved", "rejected"]
    ).count()
    assert page.get_by_test_id("queue-progress").inner_text() == (
        f"{reached - 2} of {reached} submitted passes reviewed."
    )
    first, second = (page.locator("tbody tr", has_text=d.parent.problem_id) for d in docs)
    queue_order = [
        page.locator("#queue-heading ~ .table-wrap tbody th").nth(i).inner_text() for i in range(2)
    ]
    first_id, second_id = queue_order
    page.locator("#queue-heading ~ .table-wrap tbody tr").first.get_by_role("link", name="Review").click()
    page.wait_for_url(re.compile(rf"/problems/{first_id}/passes/1/review/$"))
    page.get_by_role("button", name="Approve and next").click()
    page.wait_for_url(re.compile(rf"/problems/{second_id}/passes/1/review/$"))
    screenshot(page, "j-approve-and-next")
    page.get_by_label("Note (required to reject)").fill("The arrow v003 points the wrong way.")
    page.get_by_role("button", name="Reject and next").click()
    page.wait_for_url(re.compile(r"/source-review/$"))
    page.get_by_text("That was the last pass waiting in this queue.").wait_for()
    assert page.get_by_test_id("queue-count").inner_text() == "0"
    assert (
        page.get_by_test_id("queue-progress").inner_text()
        == f"{reached} of {reached} submitted passes reviewed."
    )
    assert first.count() == 0 and second.count() == 0
    stored = {d.parent.problem_id: PassDocument.objects.get(pk=d.pk).status for d in docs}
    assert stored == {first_id: "approved", second_id: "rejected"}
