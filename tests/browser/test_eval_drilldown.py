"""Browser (issue 15 item 11): an admin, from login by clicks only, reads on the launch form how many requests
the chosen models × conditions will make (+GT only on paired probes; it updates live), launches a run, opens
an item's drill-down and sees why it scored what it did: the expected target beside the parsed answer,
candidates by their labels, C/G/J each with its rule, the expected reading typeset, and a link to the probe."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from evaluation.models import EvalRequest, EvalRun
from tests.browser.conftest import assert_no_csp_violations, screenshot, wait_for_js
from tests.browser.test_pages_browser import login
from tests.evaluation.conftest import compile_and_approve
from tests.factories import scripted
from tests.probes.conftest import make_demo_parent

PARENTS = ("EVAL_DRILL_2", "EVAL_DRILL_3")
MODEL = "scripted-wrong-owner"


def _answers(probes) -> tuple[list[dict], object]:
    """Right answers everywhere but the T03-image probe, where the reading is right and the owner wrong."""
    target = next(p for p in probes if p.interface == "T03-image" and p.in_l)
    responses = []
    for probe in probes:
        key = probe.key.view
        gold = key.gold_aliases[0]
        owner = next(a for a in key.aliases if a != gold) if probe.pk == target.pk else gold
        answer = {key.binding_key: owner}
        if key.read_targets:
            answer["read"] = key.read_targets[0]["expected"]
        responses.append({"match": probe.raw_messages["user"][-400:], "outputs": [json.dumps(answer)]})
    return responses, target


def _open_menu_item(page, menu: str, item: str) -> None:
    """Open a main-menu group (a <details> menu) and follow one of its links."""
    nav = page.get_by_role("navigation", name="Main")
    link = nav.get_by_role("link", name=item, exact=True)
    if not link.is_visible():
        nav.locator("summary", has_text=menu).click()
    link.click()


def test_admin_reads_the_request_count_then_the_drill_down_explains_the_score(
    page, live_server, make_browser_user, django_user_model, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("boss", "admin", key_holder=True)
    for problem_id in PARENTS:
        make_demo_parent(django_user_model, problem_id=problem_id, sample=problem_id)
    probes = compile_and_approve(django_user_model)
    responses, target = _answers(probes)
    scripted(MODEL, responses, default="not json")
    scripted("scripted-second", [], default="not json")
    n, paired = len(probes), sum(p.in_p for p in probes)
    assert 0 < paired < n  # +GT applies to some probes, not all

    login(page, live_server, "boss", "/")
    _open_menu_item(page, "Evaluation", "Evaluation runs")
    page.wait_for_url(f"{live_server.url}/runs/")
    preview = page.get_by_test_id("run-preview")
    expect(page.get_by_test_id("preview-total")).to_contain_text("Choose at least one model")
    expect(page.get_by_test_id("preview-probes-gold")).to_have_text(f"{paired} of {n}")
    expect(preview.locator("tr[data-condition=gold]")).to_contain_text("paired probes only")

    page.fill("#id_name", "drill-down run")
    page.check(f"input[name=models][value={MODEL}]")
    total = page.get_by_test_id("preview-total-count")
    expect(total).to_have_text(str(n))  # raw only, one model
    for condition in ("gold", "no_image", "reordered"):
        page.check(f"input[name=conditions][value={condition}]")
    expect(total).to_have_text(str(3 * n + paired))  # "all four conditions": +GT only on paired probes
    page.check("input[name=models][value=scripted-second]")
    expect(total).to_have_text(str(2 * (3 * n + paired)))
    expect(page.get_by_test_id("preview-total")).to_contain_text(f"2 models × {3 * n + paired}")
    expect(page.get_by_test_id("preview-requests-gold")).to_have_text(str(2 * paired))
    expect(page.get_by_test_id("preview-requests-raw")).to_have_text(str(2 * n))
    screenshot(page, "item11-launch-preview")
    # the run launched: one model, raw and +GT
    page.uncheck("input[name=models][value=scripted-second]")
    page.uncheck("input[name=conditions][value=no_image]")
    page.uncheck("input[name=conditions][value=reordered]")
    expect(total).to_have_text(str(n + paired))
    page.fill("#id_resamples", "50")
    page.get_by_role("button", name="Launch").click()

    page.wait_for_url(re.compile(rf"{re.escape(live_server.url)}/runs/\d+/$"))
    run = EvalRun.objects.get(name="drill-down run")
    assert run.total == EvalRequest.objects.filter(run=run).count() == n + paired  # the number shown
    page.wait_for_selector("#progress-heading:has-text('Completed')")

    page.get_by_role("link", name="Items").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/items/")
    page.select_option("select[name=condition]", "raw")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r".*condition=raw.*"))
    row = page.locator("tbody tr", has_text="T03-image").first
    row.locator("td").first.get_by_role("link").click()
    page.wait_for_selector("#why-heading")

    item = EvalRequest.objects.select_related("probe__key").get(pk=int(page.url.rstrip("/").split("/")[-1]))
    assert (item.probe_id, item.condition) == (target.pk, "raw")
    key = target.key.view
    gold = key.gold_aliases[0]
    wrong = next(a for a in key.aliases if a != gold)
    reading = key.read_targets[0]["expected"]
    gold_entity, wrong_entity = key.alias_to_entity[gold], key.alias_to_entity[wrong]

    # the expected target beside the parsed answer, by label, with its entity
    expected = page.get_by_test_id("expected-target")
    expect(expected).to_contain_text(gold)
    expect(expected).to_contain_text(f"entity {gold_entity[:11]}…")
    expect(page.get_by_test_id("parsed-binding")).to_contain_text(wrong)
    candidates = page.get_by_test_id("candidates")
    expect(candidates.locator("tr.drill-expected td").first).to_have_text(gold)
    # C, G, J with the rule that decided each
    expect(page.get_by_test_id("reason-C")).to_have_text(
        f'C = 1: the parsed reading "{reading}" matches the expected "{reading}" under the label normalizer '
        "(ocr_label_v2_1)"
    )
    expect(page.get_by_test_id("reason-G")).to_have_text(
        f"G = 0: chose {wrong} (entity {wrong_entity[:11]}), expected {gold} (entity {gold_entity[:11]})"
    )
    expect(page.get_by_test_id("reason-J")).to_have_text(
        "J = 0: C × G = 1 × 0; the reading is correct but the grounding is wrong"
    )
    assert page.get_by_test_id("cgj").inner_text() == "1 / 0 / 0"
    # the expected and the parsed reading are typeset by KaTeX; no entity id is spelled out whole
    wait_for_js(page, "document.querySelector('[data-testid=expected-reading] .katex') !== null")
    assert page.locator("[data-testid=parsed-reading] .katex").count() == 1
    main_text = page.locator("main").inner_text()
    assert gold_entity not in main_text and wrong_entity not in main_text
    assert_no_csp_violations(page)
    screenshot(page, "item11-drilldown")

    # the probe link opens the probe's page
    link = page.get_by_test_id("probe-link")
    assert link.get_attribute("href") == f"/probes/{target.logical_probe_id}/"
    link.click()
    page.wait_for_url(f"{live_server.url}/probes/{target.logical_probe_id}/")
    expect(page.locator("main")).to_contain_text(target.logical_probe_id[:20])
    assert_no_csp_violations(page)


def test_an_admin_without_the_key_reads_scores_not_targets_and_is_not_handed_the_parent(
    page, live_server, make_browser_user, django_user_model, settings
):
    """From login by clicks only: the run's item page opens the request, which shows C/G/J and the parsed answer
    but no expected target, no entity ids, and no item-file link; the review queue then finds nothing for them."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    make_browser_user("plainadmin", "admin", "probe_reviewer")
    make_demo_parent(django_user_model, problem_id=PARENTS[0], sample=PARENTS[0])
    probes = compile_and_approve(django_user_model)
    responses, target = _answers(probes)
    scripted(MODEL, responses, default="not json")
    login(page, live_server, "plainadmin", "/")
    _open_menu_item(page, "Evaluation", "Evaluation runs")
    page.wait_for_url(f"{live_server.url}/runs/")
    page.fill("#id_name", "no-key run")
    page.check(f"input[name=models][value={MODEL}]")
    page.fill("#id_resamples", "20")
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(re.compile(rf"{re.escape(live_server.url)}/runs/\d+/$"))
    page.wait_for_selector("#progress-heading:has-text('Completed')")
    expect(page.locator("#items-withheld")).to_contain_text("key holders only")
    page.get_by_role("link", name="Items").click()
    page.locator("tbody tr", has_text="T03-image").first.locator("td").first.get_by_role("link").click()
    page.wait_for_selector("#why-heading")
    expect(page.get_by_test_id("targets-withheld")).to_contain_text("key holders only")
    expect(page.get_by_test_id("parsed-answer")).to_be_visible()
    expect(page.get_by_test_id("cgj")).to_be_visible()
    html = page.content()
    key = target.key.view
    assert not [e for e in key.alias_to_entity.values() if e[:11] in html]
    assert 'data-testid="expected-target"' not in html
    screenshot(page, "issue25-request-without-key")
    # the parent whose scores were read is never handed to this admin for blind review
    _open_menu_item(page, "Review", "Probe review queue")
    page.get_by_role("button", name=re.compile("primary", re.I)).first.click()
    expect(page.locator(".alert, [role=alert], [role=status]").first).to_contain_text("shown targets")
    screenshot(page, "issue25-queue-refuses-seen-parent")
    assert_no_csp_violations(page)
