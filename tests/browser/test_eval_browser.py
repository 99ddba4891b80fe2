"""Browser: an admin launches an evaluation run from /runs/ (simulated model, raw + no_image, Celery eager),
sees the progress complete, reads Table 2 with CIs and the rendered charts, and opens an item drill-down."""

from __future__ import annotations

from evaluation.models import EvalRequest, EvalRun
from models_registry.demo import demo_models_ensure
from probes.models import Probe
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login
from tests.evaluation.conftest import compile_and_approve
from tests.probes.conftest import make_demo_parent

PARENTS = ("SYNTHETIC_TEST_ONLY", "EVAL_BROWSER_2", "EVAL_BROWSER_3")


def _canvas_painted(page, selector: str) -> bool:
    """True when the canvas has a size and some non-transparent pixels (Chart.js drew on it)."""
    return page.evaluate(
        """sel => { const c = document.querySelector(sel);
                    if (!c || !c.width || !c.height) return false;
                    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                    for (let i = 3; i < d.length; i += 4) { if (d[i] > 0) return true; }
                    return false; }""",
        selector,
    )


def test_admin_launches_run_and_reads_results(
    page, live_server, make_browser_user, django_user_model, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("boss", "admin")
    for problem_id in PARENTS[
        1:
    ]:  # several parents, so the parent-cluster bootstrap has something to resample
        make_demo_parent(django_user_model, problem_id=problem_id, sample=problem_id)
    probes = compile_and_approve(django_user_model)  # adds the kit demo parent, compiles and approves all
    parents = {p.parent.problem_id for p in probes}
    assert len(parents) == len(PARENTS)
    demo_models_ensure()

    login(page, live_server, "boss", "/runs/")
    assert page.get_by_role("heading", name="Launch a run").is_visible()
    page.fill("#id_name", "browser run")
    page.check("input[name=models][value=simulated]")
    page.check("input[name=conditions][value=raw]")
    page.check("input[name=conditions][value=no_image]")
    page.fill("#id_resamples", "500")
    screenshot(page, "h14-launch")
    page.get_by_role("button", name="Launch").click()

    page.wait_for_url(f"{live_server.url}/runs/*/")
    run = EvalRun.objects.get(name="browser run")
    expected_rows = 2 * len(probes)
    assert run.total == expected_rows
    assert EvalRequest.objects.filter(run=run).count() == expected_rows
    # the run executed eagerly inside the launch request; the page shows it complete (no polling left)
    page.wait_for_selector("#progress-heading:has-text('Completed')")
    assert page.get_by_test_id("done-total").inner_text() == f"{expected_rows} / {expected_rows}"
    assert page.locator("#progress[hx-get]").count() == 0

    table = page.locator("#table-main")
    assert table.is_visible()
    row = table.locator("tbody tr", has_text="simulated")
    assert row.count() == 1
    cells = row.locator("td")
    assert cells.count() == 6
    gacc = cells.nth(0).inner_text()
    assert "[" in gacc and "]" in gacc, f"GAcc should show a 95% CI, got {gacc!r}"
    # charts: Chart.js is loaded from the vendored file and painted both canvases
    wait_for_js(page, "typeof Chart !== 'undefined' && Chart.getChart('chart-main') !== undefined")
    assert _canvas_painted(page, "#chart-main")
    assert _canvas_painted(page, "#chart-quadrants")
    assert page.evaluate("Chart.getChart('chart-main').data.datasets.length") == 4
    assert_no_csp_violations(page)
    screenshot(page, "h14-run")

    page.get_by_role("link", name="Items").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/items/")
    page.select_option("select[name=condition]", "no_image")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/items/?*condition=no_image*")
    first = page.locator("tbody tr td a").first
    first.click()
    page.wait_for_selector("[data-testid=raw-output]")
    row_pk = int(page.url.rstrip("/").split("/")[-1])
    item = EvalRequest.objects.select_related("probe").get(pk=row_pk)
    assert item.condition == "no_image"
    assert page.get_by_test_id("status").inner_text() == item.status
    # the main menu marks the evaluation runs page as the current section
    assert (
        page.get_by_role("navigation", name="Main").locator('a[href="/runs/"][aria-current=page]').count()
        == 1
    )
    assert "[Candidates]" in page.locator("#user-message").inner_text()
    assert page.get_by_test_id("raw-output").inner_text().strip() == item.raw_output.strip()
    assert "0 images" in page.locator("#prompt-heading").inner_text()
    assert page.locator("ol.attachments").count() == 0
    assert_no_csp_violations(page)
    screenshot(page, "h14-item")

    # the same probe under raw: its attachments are shown as sent, and they load
    page.get_by_role("link", name="raw", exact=True).click()
    page.wait_for_selector("[data-testid=raw-output]")
    raw = EvalRequest.objects.select_related("probe").get(pk=int(page.url.rstrip("/").split("/")[-1]))
    assert (raw.condition, raw.probe_id) == ("raw", item.probe_id)
    expected_images = len(Probe.objects.get(pk=raw.probe_id).attachment_ids)
    assert page.locator("ol.attachments img").count() == expected_images > 0
    wait_for_js(
        page,
        "Array.from(document.querySelectorAll('ol.attachments img')).every(i => i.complete && i.naturalWidth > 0)",
    )
    assert page.get_by_test_id("cgj").inner_text().count("/") == 2
    assert_no_csp_violations(page)
    screenshot(page, "h14-item-raw")
