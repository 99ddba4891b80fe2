"""Browser: an admin opens Annotation agreement from the menu (clicks only), reads the summary, narrows it to one
sample and threshold, opens a pair of annotators' page with one row per parent and its curation links, and
downloads a table as CSV."""

from __future__ import annotations

import pytest

from tests.annotation.agreement.world import build
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot
from tests.browser.test_pages_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ENTRY = "Annotation agreement"


def test_an_admin_reads_the_agreement_and_a_pairs_parents(
    page, live_server, make_browser_user, django_user_model, tmp_path
):
    make_browser_user("boss", "admin")
    world = build(django_user_model, parents=3)
    other = build(django_user_model, parents=1, prefix="other")
    login(page, live_server, "boss")
    menu(page, "Admin", ENTRY)
    assert page.get_by_role("heading", name="Annotation agreement", level=1).is_visible()
    rows = page.locator("#table-pass1 tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).locator("th, td").all_inner_texts()[:4] == [
        "alice",
        "bob",
        "3",
        "3",
    ]  # agr_0, agr_2, other_0
    screenshot(page, "i31-agreement-summary")

    page.get_by_label("Sample", exact=True).select_option(str(world.sample.pk))
    page.get_by_label("IoU threshold", exact=True).fill("0.5")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(f"{live_server.url}/agreement/?sample={world.sample.pk}&threshold=0.5")
    assert rows.nth(0).locator("th, td").all_inner_texts()[:4] == ["alice", "bob", "2", "2"]
    assert str(other.sample.pk) != str(world.sample.pk)

    page.get_by_role("link", name="2 parents of alice and bob, Pass 1").click()
    assert page.get_by_role("heading", name="Agreement of alice and bob, Pass 1", level=1).is_visible()
    parents = page.locator("#table-pass1-parents tbody tr")
    assert [parents.nth(i).locator("th").inner_text() for i in range(parents.count())] == ["agr_0", "agr_2"]
    n = len(world.first_docs["agr_0"][1]["visual_nodes"])
    cells = parents.nth(0).locator("th, td").all_inner_texts()
    assert cells[3:6] == [str(n), str(n - 1), str(n - 1)]  # one label dropped, every other region matched
    assert cells[7] == f"{(n - 1) / n:.3f}"
    curate = page.get_by_role("link", name="Curate agr_0, Pass 1")
    assert curate.get_attribute("href") == "/problems/agr_0/passes/1/curate/"
    screenshot(page, "i31-agreement-pair")

    with page.expect_download() as info:
        page.get_by_test_id("csv-pass1-parents").click()
    download = info.value
    assert download.suggested_filename == (
        f"agreement-{world.alice.pk}-{world.bob.pk}-pass1-sample{world.sample.pk}.csv"
    )
    download.save_as(tmp_path / "parents.csv")
    lines = (tmp_path / "parents.csv").read_text().splitlines()
    assert lines[0].startswith("problem_id,source,second_status,regions_first,")
    assert [line.split(",")[0] for line in lines[1:]] == ["agr_0", "agr_2"]
    assert_no_csp_violations(page)
