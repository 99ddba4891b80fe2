"""Browser: an admin takes the annotation work out as a Kit workspace by clicks — Import → Export the annotation
work as a Kit workspace → choose a source → Build → the progress ends Ready → Download the zip, whose files are
the ones ``manage.py export_kit_workspace`` writes."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from annotation.demo import generate_workspace
from annotation.exporters import export_kit_workspace
from annotation.importers import import_kit_workspace
from tests.browser.conftest import assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_builds_and_downloads_the_workspace_by_clicks(
    page, live_server, make_browser_user, tmp_path
):
    make_browser_user("boss", "admin")
    generate_workspace(tmp_path / "ws", count=3, seed=21)
    assert import_kit_workspace(workspace=tmp_path / "ws", actor=None).succeeded

    login(page, live_server, "boss")
    page.goto(f"{live_server.url}/imports/")
    page.get_by_role("link", name="Export the annotation work as a Kit workspace").click()
    page.get_by_label("Source").select_option("physalign_demo")
    page.get_by_label("Only problems whose Passes 1–4 are all approved").check()
    page.get_by_role("button", name="Build the export").click()
    page.get_by_role("status").filter(has_text="Ready").wait_for(timeout=30_000)
    assert "3 / 3 problems" in page.locator("#job").inner_text()
    screenshot(page, "i29-workspace-export-ready")
    with page.expect_download() as info:
        page.get_by_role("link", name="Download the zip").click()
    download = info.value
    assert download.suggested_filename.startswith("kit_workspace_") and download.suggested_filename.endswith(
        ".zip"
    )
    download.save_as(tmp_path / "got.zip")

    export_kit_workspace(output=tmp_path / "cli", source="physalign_demo", approved_only=True)
    expected = {
        p.relative_to(tmp_path / "cli").as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (tmp_path / "cli").rglob("*")
        if p.is_file()
    }
    with zipfile.ZipFile(tmp_path / "got.zip") as archive:
        got = {
            i.filename.split("/", 1)[1]: hashlib.sha256(archive.read(i)).hexdigest()
            for i in archive.infolist()
        }
    assert got == expected
    page.get_by_role("link", name="Export as a Kit workspace").click()
    assert page.locator("table tbody tr").first.get_by_role("link", name="Download").is_visible()
    screenshot(page, "i29-workspace-export-list")
    assert_no_csp_violations(page)
