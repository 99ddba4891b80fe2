"""Browser: a key holder takes our review decisions out for the Kit by clicks — Kit review decisions →
Download on the imported draft → a ``physalign_decisions_v1`` file the Kit's file rules accept."""

from __future__ import annotations

import json

import pytest

from probes.compiler import compile_parent
from probes.services import compile_run_create, compile_run_execute
from review.kit_decisions import load_draft, normalize_decisions
from review.services import kit_draft_import
from tests.browser.conftest import assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login
from tests.probes import kit_demo as demo
from tests.probes.conftest import make_demo_parent
from tests.review.kit_draft_fixture import write_kit_draft

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_key_holder_downloads_our_decisions_as_a_kit_file(
    page, live_server, make_browser_user, django_user_model, tmp_path
):
    make_browser_user("boss", "admin", key_holder=True)
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    catalog = write_kit_draft(tmp_path / "draft", compile_parent(demo.demo_source()).probes)
    record = kit_draft_import(root=tmp_path / "draft", actor=None)

    login(page, live_server, "boss")
    page.goto(f"{live_server.url}/review/kit-decisions/")
    row = page.locator("#kit-drafts tbody tr", has_text=record.catalog_root[:16])
    with page.expect_download() as info:
        row.get_by_role("link", name="Download").click()
    download = info.value
    assert download.suggested_filename == f"physalign_decisions_{record.catalog_root[:12]}.json"
    download.save_as(tmp_path / "got.json")
    data = (tmp_path / "got.json").read_bytes()
    assert data.endswith(b"}\n")  # canonical JSON and a newline
    document = json.loads(data)
    assert document["catalog_root"] == record.catalog_root
    assert {d["logical_probe_id"]: d["status"] for d in document["decisions"]} == {
        i["logical_probe_id"]: "pending" for i in catalog["probes"]
    }
    assert normalize_decisions(document, load_draft(tmp_path / "draft")).keys() == {
        i["logical_probe_id"] for i in catalog["probes"]
    }
    screenshot(page, "i29-kit-decisions-export")
    assert_no_csp_violations(page)
