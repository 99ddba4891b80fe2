"""The annotation pages in a real browser: login, htmx filtering, images, keyboard, CSP, import polling."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import ImportJob, PassDocument
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

from .conftest import PASSWORD, assert_no_csp_violations, incline_diagram, screenshot, wait_for_js

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECRET_ANSWER = "SECRET-ANSWER-mg-cos-theta"


@pytest.fixture
def catalogue(role_groups):
    """A dozen problems across sources, languages, domains and pass states."""
    seephys = SourceFactory(name="SeePhys")
    physreason = SourceFactory(name="PhysReason")
    domains = ["mechanics", "optics", "electromagnetism", "thermodynamics"]
    problems = []
    for index in range(12):
        parent = ParentProblemFactory(
            problem_id=f"{'sp' if index % 2 == 0 else 'pr'}_{index:04d}",
            source=seephys if index % 2 == 0 else physreason,
            language="zh" if index % 5 == 0 else "en",
            domain=domains[index % len(domains)],
            status=["new", "in_annotation", "annotated"][index % 3],
            options=[
                {"id": "A", "text": "mg cos θ"},
                {"id": "B", "text": "mg sin θ"},
                {"id": "C", "text": "mg"},
            ],
        )
        ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1, data=incline_diagram())
        for pass_no in range(1, 1 + index % 5):
            document = PassDocumentFactory(
                parent=parent, pass_no=pass_no, status=PassDocument.Status.SUBMITTED
            )
            if pass_no < 3:
                PassDocument.objects.filter(pk=document.pk).update(
                    status=PassDocument.Status.APPROVED, approved_sha256=document.document_sha256
                )
        problems.append(parent)
    return problems


def expect_count(page, count: int) -> None:
    noun = "problem" if count == 1 else "problems"
    expect(page.locator("#results-heading")).to_have_text(re.compile(rf"^\s*{count} {noun}\b"))


def login(page, live_server, username: str, next_path: str = "/problems/") -> None:
    page.goto(f"{live_server.url}/accounts/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(re.escape(live_server.url + next_path) + r"$"))


def test_anonymous_visit_redirects_to_login(page, live_server):
    page.goto(live_server.url + "/problems/")
    assert page.url == f"{live_server.url}/accounts/login/?next=/problems/"
    assert page.get_by_role("heading", name="Log in").is_visible()
    assert_no_csp_violations(page)
    screenshot(page, "01-login")


def test_login_list_filter_with_htmx_and_open_problem(page, live_server, catalogue, make_browser_user):
    make_browser_user("ann", "annotator")
    login(page, live_server, "ann")
    table = page.locator("#results table")
    assert table.locator("tbody tr").count() == 12
    expect_count(page, 12)
    assert_no_csp_violations(page)
    screenshot(page, "02-problem-list")

    # A marker on window survives an htmx swap but not a full page load.
    page.evaluate("window.__noReload = true")
    page.get_by_label("Domain").select_option("optics")
    page.wait_for_url(f"{live_server.url}/problems/?domain=optics")
    expect_count(page, 3)
    assert page.evaluate("window.__noReload") is True
    assert sorted(table.locator("tbody th a").all_inner_texts()) == ["pr_0001", "pr_0005", "pr_0009"]

    page.get_by_label("Search").fill("0005")
    page.wait_for_url(f"{live_server.url}/problems/?q=0005&domain=optics")
    expect_count(page, 1)
    assert page.evaluate("window.__noReload") is True
    screenshot(page, "03-problem-list-filtered")

    # Back restores the previous filter state (htmx keeps no history cache: it reloads from the server,
    # so no page content, e.g. an admin's private panel, is ever written to localStorage).
    page.go_back()
    page.wait_for_url(f"{live_server.url}/problems/?domain=optics")
    expect_count(page, 3)

    page.get_by_role("link", name="pr_0005").click()
    page.wait_for_url(f"{live_server.url}/problems/pr_0005/")
    image = page.get_by_role("img", name="Diagram img_1 of problem pr_0005")
    image.wait_for()
    wait_for_js(page, "document.querySelector('.diagram img').complete")
    assert image.evaluate("img => img.naturalWidth") == 480
    assert SECRET_ANSWER not in page.content()
    assert page.get_by_text("Private (admin only)").count() == 0
    assert_no_csp_violations(page)
    screenshot(page, "04-problem-detail-annotator")


def test_filter_form_works_without_javascript(browser, live_server, catalogue, make_browser_user):
    make_browser_user("nojs", "source_reviewer")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/accounts/login/?next=/problems/")
        page.get_by_label("Username").fill("nojs")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.get_by_label("Language").select_option("zh")
        page.get_by_role("button", name="Apply").click()
        page.wait_for_url(re.compile(r"language=zh"))
        rows = page.locator("#results tbody th a").all_inner_texts()
        assert sorted(rows) == ["pr_0005", "sp_0000", "sp_0010"]
    finally:
        context.close()


def test_keyboard_reaches_skip_link_and_search(page, live_server, catalogue, make_browser_user):
    make_browser_user("kbd", "probe_reviewer")
    login(page, live_server, "kbd")
    page.goto(live_server.url + "/problems/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Skip to content"
    assert page.locator(".skip-link").is_visible()
    screenshot(page, "05-skip-link-focused")
    page.keyboard.press("Enter")
    assert page.url.endswith("#main")
    for _ in range(20):
        if page.evaluate("document.activeElement.id") == "id_q":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_q"
    page.keyboard.type("sp_0002")
    page.wait_for_url(re.compile(r"q=sp_0002"))
    expect_count(page, 1)
    assert_no_csp_violations(page)


def test_list_fits_a_phone_screen(browser, live_server, catalogue, make_browser_user):
    make_browser_user("phone", "annotator")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        login(page, live_server, "phone")
        # The page never scrolls sideways; only the table's own wrapper may.
        assert page.evaluate("[window.innerWidth, document.documentElement.scrollWidth]") == [390, 390]
        assert page.get_by_label("Search").is_visible()
        screenshot(page, "11-problem-list-phone")
    finally:
        context.close()


def test_a_key_holder_sees_private_panel(page, live_server, catalogue, make_browser_user):
    make_browser_user("boss", "admin", key_holder=True)  # answer and solution: key holders only
    login(page, live_server, "boss", next_path="/problems/sp_0002/")
    assert page.get_by_role("heading", name="Private (admin only)").is_visible()
    assert page.get_by_text(SECRET_ANSWER).is_visible()
    assert page.get_by_role("navigation", name="Main").locator("summary", has_text="Evaluation").is_visible()
    wait_for_js(page, "document.querySelector('.diagram img').naturalWidth > 0")
    assert_no_csp_violations(page)
    screenshot(page, "06-problem-detail-admin")


def test_import_page_polls_until_the_report_arrives(page, live_server, make_browser_user):
    user = make_browser_user("importer", "annotator")
    ImportJob.objects.create(
        kind="kit_workspace",
        status="succeeded",
        original_name="kit_ws_2024.zip",
        total=3,
        done=3,
        created_by=user,
        finished_at=timezone.now(),
    )
    job = ImportJob.objects.create(
        kind="problems",
        status="running",
        original_name="seephys_batch_07.zip",
        total=4,
        done=1,
        created_by=user,
    )
    login(page, live_server, "importer", next_path="/imports/")
    assert page.get_by_role("heading", name="New import").is_visible()
    assert_no_csp_violations(page)
    screenshot(page, "07-import-list")

    page.get_by_role("link", name=f"#{job.pk}").click()
    page.wait_for_url(f"{live_server.url}/imports/{job.pk}/")
    assert page.locator("#job-progress").get_attribute("value") == "1"
    screenshot(page, "08-import-running")
    ImportJob.objects.filter(pk=job.pk).update(
        status="succeeded",
        done=4,
        finished_at=timezone.now(),
        report={
            "status": "succeeded",
            "counts": {"created": 2, "updated": 1, "failed": 1},
            "rows": [
                {"row": 1, "problem_id": "sp_0100", "outcome": "created", "errors": [], "warnings": []},
                {
                    "row": 2,
                    "problem_id": "sp_0101",
                    "outcome": "created",
                    "errors": [],
                    "warnings": [
                        {"code": "image_large", "message": "Image is 3,840 px wide; consider resizing."}
                    ],
                },
                {"row": 3, "problem_id": "sp_0102", "outcome": "updated", "errors": [], "warnings": []},
                {
                    "row": 4,
                    "problem_id": "sp_0103",
                    "outcome": "failed",
                    "errors": [
                        {"code": "image_missing", "message": "images/fig_0103.png is not in the archive."}
                    ],
                    "warnings": [],
                },
            ],
        },
    )
    page.get_by_role("heading", name="Report").wait_for(timeout=5_000)
    assert page.get_by_text("images/fig_0103.png is not in the archive.").is_visible()
    assert page.locator("#job-progress").get_attribute("value") == "4"
    assert page.locator("#job[hx-trigger]").count() == 0  # polling stopped
    assert_no_csp_violations(page)
    screenshot(page, "09-import-report")


def test_role_less_user_sees_friendly_403(page, live_server, page_problems, make_browser_user):
    make_browser_user("nobody")
    page_problems.allowed = ("status of 403",)
    login_page = f"{live_server.url}/accounts/login/?next=/problems/"
    page.goto(login_page)
    page.get_by_label("Username").fill("nobody")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="You don't have access to this page").wait_for()
    # their home page says why there is nothing to do, and who can help
    page.goto(live_server.url + "/")
    assert page.get_by_text("Your account has no role yet").is_visible()
    assert_no_csp_violations(page)
    screenshot(page, "10-forbidden")


def test_an_annotator_uploading_a_forged_review_state_sees_it_was_not_imported(
    page, live_server, make_browser_user, tmp_path
):
    import io
    import json
    import zipfile

    from annotation.demo import generate_workspace
    from kit.canonical import write_json_bytes

    make_browser_user("importer", "annotator")
    make_browser_user("source_reviewer", "source_reviewer")
    ws = tmp_path / "ws"
    generate_workspace(ws, count=2, seed=2027)
    state = json.loads((ws / "reviews" / "state.json").read_text())
    for problem in state["problems"].values():
        for stage in problem["stages"].values():
            stage["reviewer"] = "source_reviewer"  # credits an existing account
    (ws / "reviews" / "state.json").write_bytes(write_json_bytes(state))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(ws.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(ws).as_posix())
    upload = tmp_path / "forged.zip"
    upload.write_bytes(buffer.getvalue())

    login(page, live_server, "importer", next_path="/")
    page.get_by_role("link", name="Import").first.click()
    page.get_by_label("Kit source workspace").check()
    page.set_input_files("input[type=file]", str(upload))
    page.get_by_role("button", name="Start import").click()
    page.wait_for_selector("text=SOURCE_REVIEW_NOT_IMPORTED")
    assert page.locator("code", has_text="SOURCE_REVIEW_NOT_IMPORTED").count() == 8
    screenshot(page, "h12-forged-import-report")
    assert set(PassDocument.objects.values_list("status", flat=True)) == {"submitted"}
    assert not PassDocument.objects.filter(approved_by__isnull=False).exists()
    assert_no_csp_violations(page)
