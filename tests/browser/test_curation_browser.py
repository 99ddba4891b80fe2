"""Browser: a source reviewer curates Pass 1 of a double-annotated problem — both annotations drawn side by side,
a row's regions lit on both diagrams, j/k and 1/2 on the table, "Take second" for the battery's box, Apply — and
sees the curated version submitted; another source reviewer then approves it on the review page."""

from __future__ import annotations

import pytest

from annotation.models import Curation, PassDocument
from tests.annotation.curation.conftest import build
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOT = "[...document.querySelectorAll('.cur-diagram[data-side={side}] .cur-region.is-hot')].map(e => e.dataset.region)"


def _hot(page, side: str) -> list[str]:
    return page.evaluate(HOT.replace("{side}", side))


def test_a_source_reviewer_curates_pass_1_and_another_approves_it(page, live_server, make_browser_user):
    first = make_browser_user("ann_first", "annotator")
    second = make_browser_user("ann_second", "annotator")
    make_browser_user("rev_curator", "source_reviewer")
    make_browser_user("rev_approver", "source_reviewer")
    world = build(first=first, second=second)
    pid = world["parent"].problem_id
    curate = f"/problems/{pid}/passes/1/curate/"

    login(page, live_server, "rev_curator", next_path=curate)
    assert page.get_by_role("heading", name="Curate Pass 1", level=1).is_visible()
    wait_for_js(
        page,
        "document.querySelectorAll('.cur-diagram[data-side=first] img').length === 1 && document.querySelector('.cur-diagram[data-side=first] img').complete",
    )
    assert page.evaluate("document.querySelectorAll('.cur-region--first').length") == 10
    assert page.evaluate("document.querySelectorAll('.cur-region--second').length") == 10
    assert page.get_by_test_id("curation-counts").inner_text() == (
        "9 matched (1 differs), 1 only in the first, 1 only in the second"
    )
    rows = page.get_by_test_id("curation-row")
    assert rows.count() == 11

    rows.nth(9).hover()  # the wire: v010 in the first, v009 in the second
    assert (_hot(page, "first"), _hot(page, "second")) == (["v010"], ["v009"])
    rows.nth(0).hover()
    assert (_hot(page, "first"), _hot(page, "second")) == (["v001"], ["v001"])
    assert "differs: bbox_1000" in rows.nth(0).inner_text()
    screenshot(page, "i31-curation-hover-battery")

    # keys: j to the second row, 2 takes the second's, 1 goes back to the first's
    page.get_by_role("heading", name="Records").click()
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.dataset.row") == "1"
    page.keyboard.press("2")
    assert rows.nth(1).get_by_label("Take second").is_checked()
    page.keyboard.press("1")
    assert rows.nth(1).get_by_label("Keep first").is_checked()
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.dataset.row") == "0"
    assert (_hot(page, "first"), _hot(page, "second")) == (["v001"], ["v001"])

    rows.nth(0).get_by_label("Take second").check()
    assert page.locator("#cur-changed").inner_text() == "1 choice changed from the defaults"
    assert rows.nth(10).get_by_label("Drop").is_checked()  # the second's own region stays out by default
    screenshot(page, "i31-curation-take-second")

    page.get_by_role("button", name="Apply and submit for review").click()
    curation = Curation.objects.get()
    page.wait_for_url(f"{live_server.url}/problems/{pid}/passes/1/curations/{curation.pk}/")
    assert (
        "Curated: saved as version 2 and submitted for source review."
        in page.locator("#messages").inner_text()
    )
    assert page.get_by_test_id("curated-status").inner_text() == "Submitted"
    wait_for_js(page, "document.querySelectorAll('.cur-region--curated').length === 10")
    box = page.evaluate(
        "(() => { const r = document.querySelector('.cur-region--curated[data-region=v001]'); return [r.getAttribute('x'), r.getAttribute('width')]; })()"
    )
    image = world["parent"].images.get()
    assert float(box[0]) == pytest.approx(135 * image.width / 1000)
    assert float(box[1]) == pytest.approx(65 * image.width / 1000)
    screenshot(page, "i31-curation-result")
    assert_no_csp_violations(page)

    page.get_by_role("button", name="Log out").click()
    review = f"/problems/{pid}/passes/1/review/"
    login(page, live_server, "rev_approver", next_path=review)
    assert page.get_by_test_id("review-status").inner_text() == "Submitted"
    page.get_by_role("button", name="Approve this version").click()
    page.wait_for_url(f"{live_server.url}{review}")
    assert page.get_by_test_id("review-status").inner_text() == "Approved"
    screenshot(page, "i31-curation-approved")
    doc = PassDocument.objects.get(parent=world["parent"], pass_no=1)
    assert (doc.status, doc.approved_sha256) == ("approved", curation.result_sha256)
