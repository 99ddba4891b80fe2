"""Browser: an admin opens Annotation analytics from the menu, picks a period, sees the four charts drawn and
the tables, switches to all time and downloads a table as CSV."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.annotation.analytics.world import build
from tests.browser.conftest import assert_no_csp_violations, menu, screenshot, wait_for_js
from tests.browser.test_pages_browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARTS = ("chart-active", "chart-reviews", "chart-rates", "chart-findings")
# whether a canvas has a Chart.js chart with data and any pixel drawn on it
DRAWN = """(id) => {
  const canvas = document.getElementById(id);
  const chart = canvas && window.Chart && Chart.getChart(canvas);
  if (!chart || !chart.data.datasets.length) { return false; }
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 3; i < pixels.length; i += 4) { if (pixels[i] !== 0) { return true; } }
  return false;
}"""


def test_an_admin_reads_the_analytics_and_downloads_a_csv(
    page, page_problems, live_server, make_browser_user, django_user_model, tmp_path
):
    make_browser_user("boss", "admin")
    build(django_user_model)
    login(page, live_server, "boss")
    menu(page, "Admin", "Annotation analytics")
    assert page.get_by_role("heading", name="Annotation analytics", level=1).is_visible()
    today = timezone.localdate()
    assert page.get_by_label("From", exact=True).input_value() == (today - timedelta(days=29)).isoformat()
    assert page.get_by_label("To", exact=True).input_value() == today.isoformat()

    page.get_by_label("From", exact=True).fill("2026-11-10")
    page.get_by_label("To", exact=True).fill("2026-11-10")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(f"{live_server.url}/analytics/annotation/?from=2026-11-10&to=2026-11-10")
    assert page.get_by_test_id("period-label").inner_text() == "2026-11-10 to 2026-11-10"
    for chart in CHARTS:
        wait_for_js(page, f"({DRAWN})({chart!r})")
    rows = page.locator("#table-annotators tbody tr")
    assert rows.count() == 3
    assert rows.nth(0).locator("th, td").all_inner_texts()[:5] == ["alice0", "1", "1", "5", "0:07:30"]
    rejection = page.locator("#table-rejections tbody tr").first.inner_text()
    assert "-ve sign on the normal force" in rejection and "quantities:q001: 5 m is a length" in rejection
    screenshot(page, "i30-analytics-day")

    page.get_by_role("link", name="All time").click()
    assert page.get_by_test_id("period-label").inner_text() == "all time"
    assert page.locator("#table-annotators tbody tr").nth(0).locator("td").nth(3).inner_text() == "0:11:30"
    for chart in CHARTS:
        wait_for_js(page, f"({DRAWN})({chart!r})")
    screenshot(page, "i30-analytics-all-time")

    with page.expect_download() as info:
        page.get_by_test_id("csv-sources").click()
    download = info.value
    assert download.suggested_filename == "annotation-sources-all-time.csv"
    download.save_as(tmp_path / "sources.csv")
    lines = (tmp_path / "sources.csv").read_text().splitlines()
    assert lines[0].startswith("source,documents,saves,active_seconds,")
    assert [line.split(",")[:4] for line in lines[1:]] == [
        ["Generated-0", "1", "3", "300"],
        ["OpenStax-0", "2", "8", "870"],
    ]

    page_problems.allowed = ("status of 400",)  # a refused period answers 400, like every form error
    page.get_by_label("From", exact=True).fill("2026-11-12")
    page.get_by_label("To", exact=True).fill("2026-11-10")
    page.get_by_role("button", name="Show").click()
    assert "first day comes after its last day" in page.get_by_test_id("period-error").inner_text()
    screenshot(page, "i30-analytics-bad-period")
    assert_no_csp_violations(page)
