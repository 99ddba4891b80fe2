"""Browser: an admin logs in, opens Releases from the menu, opens the small release of the datasheet tests and
reads its Datasheet: the tables with their hand-checked figures, the radar of Figure 3 and the bars of Figure 6
drawn by Chart.js, and the CSV download."""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    CUT_HEADERS,
    SCROLLING_TABLES,
    assert_no_csp_violations,
    menu,
    screenshot,
    wait_for_js,
)
from tests.browser.test_pages_browser import login
from tests.probes.datasheet.world import RELEASE_ID, build_release

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARTS = ("chart-datasheet-radar", "chart-datasheet-families", "chart-datasheet-terms")
# whether a canvas has a Chart.js chart with data and any pixel drawn on it
DRAWN = """(id) => {
  const canvas = document.getElementById(id);
  const chart = canvas && window.Chart && Chart.getChart(canvas);
  if (!chart || !chart.data.datasets.length) { return false; }
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 3; i < pixels.length; i += 4) { if (pixels[i] !== 0) { return true; } }
  return false;
}"""


def _cells(page, slug: str) -> list[list[str]]:
    rows = page.locator(f'[data-testid="ds-{slug}"] tbody tr, [data-testid="ds-{slug}"] tfoot tr')
    return [rows.nth(i).locator("th, td").all_inner_texts() for i in range(rows.count())]


def test_an_admin_reads_a_releases_datasheet(
    page, live_server, make_browser_user, django_user_model, tmp_path
):
    make_browser_user("boss", "admin")
    build_release(tmp_path, annotator=django_user_model.objects.create_user(username="second_annotator"))
    login(page, live_server, "boss", next_path="/")
    menu(page, "Probes & releases", "Releases")
    page.get_by_role("heading", name="Releases", level=1).wait_for()
    page.get_by_role("link", name=f"{RELEASE_ID[:21]}…").click()
    page.wait_for_url(f"{live_server.url}/releases/{RELEASE_ID}/")
    heading = page.get_by_role("heading", name="Datasheet", level=2)
    heading.scroll_into_view_if_needed()
    assert heading.is_visible()
    assert "6 parent problems, 13 localized probes and 5 paired +GT inputs from 4 parents" in (
        page.get_by_test_id("datasheet-lead").inner_text()
    )
    for chart in CHARTS:
        wait_for_js(page, f"({DRAWN})({chart!r})")
    assert page.evaluate(
        "Chart.getChart(document.getElementById('chart-datasheet-radar')).data.datasets.map(d => d.data[0])"
    ) == [50, 46.15, 60]  # mechanics: 3 of 6 parents, 6 of 13 probes, 3 of 5 paired inputs
    assert _cells(page, "table1a_sources") == [
        ["SeePhys-mini", "4", "2"],
        ["OpenStax-mini", "2", "2"],
        ["Full release", "6", "4"],
    ]
    assert _cells(page, "table7a_density") == [
        ["Development", "2.50", "60.00"],
        ["Test", "2.00", "25.00"],
        ["Full release", "2.17", "38.46"],
    ]
    assert _cells(page, "table6_domains")[0] == ["Mechanics", "3", "50.00", "2", "1", "66.67"]
    page.locator("#fig3-heading").scroll_into_view_if_needed()
    screenshot(page, "i31-datasheet")
    # at 1,280 px every datasheet table fits its card: long headers wrap, none is cut, none scrolls
    assert page.evaluate(CUT_HEADERS) == []
    assert page.evaluate(SCROLLING_TABLES) == []
    screenshot(page, "i31-datasheet-radar-table", page.locator("#ds-figure3_radar"))

    with page.expect_download() as info:
        page.get_by_test_id("datasheet-csv").click()
    download = info.value
    assert download.suggested_filename == f"{RELEASE_ID[:21]}-datasheet.csv"
    download.save_as(tmp_path / "datasheet.csv")
    lines = (tmp_path / "datasheet.csv").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == [
        "table,row,column,value",
        "table1a_sources,SeePhys-mini,parents,4",
        "table1a_sources,SeePhys-mini,parents_paired,2",
    ]
    assert_no_csp_violations(page)
