"""Browser: a source reviewer comments on single records while rejecting a pass, the annotator finds each
comment on its record, and the next review shows what changed since (issue 28 item 7)."""

from __future__ import annotations

import copy
import re

from annotation.models import PassDocument, RecordComment
from annotation.services import pass_document_save
from kit.canonical import digest
from tests.browser.conftest import assert_no_csp_violations, screenshot
from tests.browser.test_pages_browser import login
from tests.probes import kit_demo
from tests.probes.conftest import make_demo_parent

PID = "SYNTHETIC_TEST_ONLY"


def test_comments_on_records_reach_the_annotator_and_the_next_review_sees_the_change(
    page, live_server, make_browser_user, django_user_model
):
    anna = make_browser_user("anna", "annotator")
    make_browser_user("sam", "source_reviewer")
    make_demo_parent(django_user_model)
    # Pass 1 holds the demo's three regions, submitted by anna
    pass1 = {"problem_id": PID, "visual_nodes": kit_demo.pass4()["visual_nodes"], "ambiguities": []}
    doc = PassDocument.objects.get(parent__problem_id=PID, pass_no=1)
    PassDocument.objects.filter(pk=doc.pk).update(
        document=pass1, document_sha256=digest(pass1), status=PassDocument.Status.SUBMITTED, updated_by=anna
    )

    login(page, live_server, "sam", "/source-review/")
    page.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_url(re.compile(rf"/problems/{PID}/passes/1/review/$"))
    page.wait_for_selector("html[data-ws-ready]")
    # a click on a record card picks it for the comment row
    page.locator("[data-rec='visual_nodes:v001'] .rec__title").click()
    rows = page.locator(".rv-comment-row")
    assert rows.nth(0).locator("select").input_value() == "visual_nodes:v001"
    rows.nth(0).get_by_label("Comment").fill("The box takes in the floor line.")
    page.get_by_role("button", name="Comment on another record").click()
    assert rows.count() == 2
    rows.nth(1).locator("select").select_option("visual_nodes:v003")
    rows.nth(1).get_by_label("Comment").fill("The glyph reads m, not rn.")
    page.get_by_label("Note (required to reject)").fill("Two records need work; see the comments.")
    screenshot(page, "h28-7-review-comments")
    page.get_by_role("button", name="Reject with note").click()
    page.wait_for_selector("[data-testid='since-last-review']")
    assert sorted(RecordComment.objects.values_list("record_id", flat=True)) == ["v001", "v003"]
    page.get_by_role("button", name="Log out").click()

    login(page, live_server, "anna", f"/problems/{PID}/passes/1/")
    page.wait_for_selector("html[data-ws-ready]")
    listed = page.get_by_test_id("record-comments")
    assert "The box takes in the floor line." in listed.inner_text()
    listed.get_by_role("button", name=re.compile(r"^Region v001")).click()
    card = page.locator("[data-rec='visual_nodes:v001']")
    assert "is-selected" in card.get_attribute("class")
    assert card.get_by_test_id("record-comment").inner_text() == "sam: The box takes in the floor line."
    screenshot(page, "h28-7-annotator-comment")
    page.get_by_role("button", name="Log out").click()

    # the annotator moves the region and resubmits (through the service, as the workspace's save does)
    doc.refresh_from_db()
    document = copy.deepcopy(doc.document)
    document["visual_nodes"][0]["bbox_1000"] = [80, 400, 285, 705]
    saved = pass_document_save(
        parent=doc.parent, pass_no=1, document=document, actor=anna, expected_version=doc.version
    )
    PassDocument.objects.filter(pk=saved.pk).update(status=PassDocument.Status.SUBMITTED)

    login(page, live_server, "sam", "/source-review/")
    page.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_selector("[data-testid='since-last-review']")
    assert page.get_by_test_id("since-summary").inner_text() == "1 region moved"
    assert page.get_by_test_id("last-note").inner_text() == "Two records need work; see the comments."
    assert "v001 The box takes in the floor line." in page.get_by_test_id("last-comments").inner_text()
    assert page.get_by_test_id("since-changes").inner_text() == "Region v001 moved"
    screenshot(page, "h28-7-since-last-review")
    assert_no_csp_violations(page)
