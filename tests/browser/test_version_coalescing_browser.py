"""Ten edits in the workspace are one history version, not ten (issue 28 item 5), from login by clicks and
typing: the annotator edits a region's label ten times, autosave stores each edit (the If-Match save counter
moves ten times), and the history page lists one new version by the annotator holding the ten saves. With
coalescing off (the behaviour before) the same ten edits make ten versions."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from annotation.history import pass_version_record
from annotation.models import PassDocument
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

from .conftest import assert_no_csp_violations, incline_diagram, screenshot
from .test_workspace_journey_browser import glyph, login_and_open_pass

pytestmark = pytest.mark.django_db(transaction=True)
EDITS = 10


def _wait_for_save_counter(doc_pk: int, expected: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while PassDocument.objects.get(pk=doc_pk).version != expected:
        if time.monotonic() > deadline:
            raise AssertionError(
                f"save counter {PassDocument.objects.get(pk=doc_pk).version}, expected {expected}"
            )
        time.sleep(0.1)


@pytest.mark.parametrize(("window", "new_versions"), [(5, 1), (0, EDITS)])
def test_ten_edits_with_autosave_are_one_version_by_the_annotator(
    page, live_server, make_browser_user, settings, window, new_versions
):
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = window
    make_browser_user("ann", "annotator")
    importer = make_browser_user("imp", "admin")
    parent = ParentProblemFactory(problem_id="ws_coalesce", stem="A block on an incline.", query="Find F.")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=incline_diagram(480, 300))
    document = {"problem_id": parent.problem_id, "visual_nodes": [glyph("v001", "F", 100)], "ambiguities": []}
    doc = PassDocumentFactory(parent=parent, pass_no=1, document=document, version=1)
    pass_version_record(doc=doc, actor=importer)  # v1, as an import by the admin left it

    login_and_open_pass(page, live_server, parent, 1)
    page.locator("[data-rec='visual_nodes:v001'] .rec__title").click()
    text_field = page.locator("[data-rec='visual_nodes:v001'] [data-field=text]")
    for n in range(1, EDITS + 1):
        text_field.fill(f"F_{n}")
        _wait_for_save_counter(doc.pk, n + 1)  # each edit autosaved on its own (If-Match n → n + 1)
    save_state = page.get_by_test_id("save-state")
    expect(save_state).to_have_text(f"Saved · v{1 + new_versions}")
    stored = PassDocument.objects.get(pk=doc.pk)
    assert stored.version == EDITS + 1
    assert stored.document["visual_nodes"][0]["text"] == f"F_{EDITS}"
    assert stored.history_version == 1 + new_versions

    page.get_by_role("link", name="History", exact=True).click()
    rows = page.get_by_test_id("version-row")
    expect(rows).to_have_count(1 + new_versions)
    expect(page.get_by_role("heading", name=f"Versions ({1 + new_versions})")).to_be_visible()
    authors = page.get_by_test_id("version-author")
    expect(authors).to_have_text(["ann"] * new_versions + ["imp"])
    if new_versions == 1:
        expect(rows.first).to_contain_text("v2")
        expect(rows.first).to_contain_text("current")
        expect(rows.first.get_by_test_id("version-saved")).to_contain_text(f"{EDITS} saves")
        # the diff of v1 → v2 is the whole run of edits: one record changed, its text F → F_10
        expect(page.get_by_test_id("diff-title")).to_have_text("v1 → v2: 0 added, 0 removed, 1 changed")
        expect(page.get_by_test_id("diff")).to_contain_text("F_10")
        screenshot(page, "history-ten-edits-one-version")
    else:
        expect(rows.first).to_contain_text(f"v{1 + EDITS}")
        screenshot(page, "history-ten-edits-without-coalescing")
    assert_no_csp_violations(page)
