"""Browser (issue 28 item 12): an admin logs in, opens an evaluation run with missing responses by clicks, reads
why its cells show only bounds (the rows, the reason, a link to them), sees no header cut at 1,280 px, follows
the link to the filtered requests, then opens a release and reads its probes per interface."""

from __future__ import annotations

import json
import re

from django.utils.text import slugify

from annotation.models import Source
from evaluation.models import EvalRun
from evaluation.runs import eval_run_create, eval_run_dispatch
from probes.releases import release_export
from tests.browser.conftest import (
    CUT_HEADERS,
    PASSWORD,
    SCROLLING_TABLES,
    assert_no_csp_violations,
    menu,
    screenshot,
)
from tests.evaluation.conftest import compile_and_approve
from tests.factories import scripted
from tests.probes.conftest import make_demo_parent

MIXED = "qwen3.5-27b-instruct-awq-demo-endpoint"  # a long name, as real model names are: the tables must fit


def _good_answer(probe):
    key = probe.key.key
    answer = {key["response_contract"]["binding_key"]: probe.key.gold_aliases[0]}
    if key["read_targets"]:
        answer["read"] = key["read_targets"][0]["expected"]
    return json.dumps(answer)


def _gap_run(probes) -> EvalRun:
    """``m-down`` gets no answer at all (its provider fails on every row); ``m-mixed`` answers all but one."""
    down = next(p for p in probes if p.interface == "T02-single")
    scripted("m-down", [{"outputs": [{"error": 503}]}])
    scripted(
        MIXED,
        [
            {"match": down.raw_messages["user"], "outputs": [{"error": 503}]},
            *({"match": p.raw_messages["user"], "outputs": [_good_answer(p)]} for p in probes if p != down),
        ],
    )
    run = eval_run_create(
        model_names=["m-down", MIXED],
        conditions=["raw", "gold"],
        name="gaps run",
        start=False,
        options={"resamples": 50},
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    return run


def test_a_run_with_gaps_says_why_and_a_release_counts_interfaces(
    page, live_server, make_browser_user, django_user_model, settings, tmp_path
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from physalign_site.celery import app

    app.conf.task_always_eager = True
    make_browser_user("boss", "admin")
    for problem_id in ("GAPS_B2", "GAPS_B3"):
        make_demo_parent(django_user_model, problem_id=problem_id, sample=problem_id, stem_suffix=problem_id)
    probes = compile_and_approve(django_user_model)
    Source.objects.update(license="CC BY 4.0", url="https://example.org/source")
    release = release_export(split="development", output=tmp_path / "release", actor=None)
    run = _gap_run(probes)
    down_total = run.requests.filter(model__name="m-down").count()
    mixed_total = run.requests.filter(model__name=MIXED).count()

    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/")  # the login page, by the redirect
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    menu(page, "Evaluation", "Evaluation runs")
    page.get_by_role("link", name=f"#{run.pk} gaps run").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/")

    gaps = page.locator("#result-gaps")
    assert gaps.get_by_role("heading", name="Missing responses").is_visible()
    assert page.locator("#gaps-m-down").inner_text() == (
        f"m-down: {down_total} of {down_total} requests ended infra_missing: HTTP 503: scripted. "
        f"Show the {down_total} requests"
    )
    assert page.locator(f"#gaps-{slugify(MIXED)}").inner_text() == (
        f"{MIXED}: 1 of {mixed_total} requests ended infra_missing: HTTP 503: scripted. Show the 1 request"
    )
    # the empty chart says why: m-down has no bar
    assert (
        page.locator("#chart-main-note")
        .inner_text()
        .startswith(f"The chart has no bar for m-down ({down_total} infra_missing requests): ")
    )
    # a bounds-only cell links to its model's explanation
    down_row = page.locator("#table-main tbody tr", has_text="m-down")
    why = down_row.locator("td").first.get_by_role("link", name="— why?")
    assert why.get_attribute("href") == "#gaps-m-down"
    why.click()
    assert page.url.endswith("#gaps-m-down")
    # no header is cut at 1,280 px, and no results table hides columns off to the side
    assert page.evaluate(CUT_HEADERS) == []
    assert page.evaluate(SCROLLING_TABLES) == []
    page.locator("#main-heading").scroll_into_view_if_needed()
    screenshot(page, "results-gaps-run")
    assert_no_csp_violations(page)

    page.locator("#gaps-m-down").get_by_role("link", name=f"Show the {down_total} requests").click()
    page.wait_for_url(re.compile(rf"/runs/{run.pk}/items/\?model=m-down&status=infra_missing$"))
    rows = page.locator("table tbody tr")
    assert rows.count() == min(down_total, 50)
    assert page.get_by_label("Status").input_value() == "infra_missing"
    assert "HTTP 503: scripted" in rows.first.inner_text()
    screenshot(page, "results-gaps-items")

    menu(page, "Probes & releases", "Releases")
    page.get_by_role("link", name=release.release_id[:21] + "…").click()
    page.wait_for_url(f"{live_server.url}/releases/{release.release_id}/")
    table = page.get_by_test_id("release-interfaces")
    counts = {
        name: (
            int(table.locator(f'tr[data-interface="{name}"] td').nth(0).inner_text()),
            int(table.locator(f'tr[data-interface="{name}"] td').nth(1).inner_text()),
        )
        for name in ("T02-single", "T03-image", "T03-text")
    }
    expected = {
        name: (
            sum(1 for p in probes if p.interface == name),
            len({p.parent_id for p in probes if p.interface == name}),
        )
        for name in counts
    }
    assert counts == expected and all(n == 3 for n, _ in counts.values())
    assert page.get_by_role("heading", name="Probes per evaluation pool").is_visible()
    assert page.evaluate(CUT_HEADERS) == []
    assert page.evaluate(SCROLLING_TABLES) == []  # every column in view, none scrolled off the card
    screenshot(page, "results-gaps-release")
    assert_no_csp_violations(page)
