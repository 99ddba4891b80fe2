"""Browser: an admin brings a Kit team's review decisions in by clicks — Signoff → Import Kit review decisions →
upload the Kit draft zip → upload the decision file → the probe is approved and the table says by whom."""

from __future__ import annotations

import json
import zipfile

import pytest

from probes.compiler import compile_parent
from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot
from tests.browser.test_pages_browser import login
from tests.probes import kit_demo as demo
from tests.probes.conftest import make_demo_parent
from tests.review.kit_draft_fixture import decision, legacy_file, write_kit_draft

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_imports_kit_decisions_by_clicking(
    page, live_server, make_browser_user, django_user_model, tmp_path
):
    make_browser_user("boss", "admin", key_holder=True)
    make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    catalog = write_kit_draft(tmp_path / "draft", compile_parent(demo.demo_source()).probes)
    archive = tmp_path / "kit_draft.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted((tmp_path / "draft").rglob("*")):
            if path.is_file():
                z.write(path, f"kit_draft/{path.relative_to(tmp_path / 'draft').as_posix()}")
    items = {i["logical_probe_id"]: i for i in catalog["probes"]}
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps(legacy_file(catalog, [decision(items[demo.T03_IMAGE])])), "utf-8")

    login(page, live_server, "boss")
    menu(page, "Review", "Signoff")
    page.get_by_role("link", name="Import Kit review decisions").click()
    page.wait_for_selector("#kit-draft-form")
    assert page.locator("#upload-decisions").is_disabled()  # decisions need a draft to bind to
    page.set_input_files("#draft-file", str(archive))
    page.click("#upload-draft")
    page.wait_for_selector("#messages .alert")
    assert "3 probe(s) bound to ours, 0 not bound" in page.content()
    page.set_input_files("#decisions-file", str(decisions))
    page.click("#upload-decisions")
    page.wait_for_selector("#kit-decisions td:has-text('Kit Reviewer A')")
    screenshot(page, "h13-kit-decisions")
    assert Probe.objects.get(logical_probe_id=demo.T03_IMAGE).state == Probe.State.APPROVED
    assert page.locator("#kit-drafts tbody tr").count() == 1
    assert_no_csp_violations(page)
