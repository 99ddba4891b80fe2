"""Results explain gaps (issue 28 item 12): which rows leave a cell bounds-only or a chart without a bar, why,
and the link to those rows (evaluation.result_gaps, shown on the run's results page)."""

from __future__ import annotations

import json

import pytest

from evaluation.models import EvalRequest
from evaluation.result_gaps import result_gaps
from evaluation.runs import eval_run_create, eval_run_dispatch
from tests.evaluation.conftest import compile_and_approve
from tests.factories import scripted
from tests.probes.conftest import make_demo_parent

pytestmark = pytest.mark.django_db

TESSERACT = "tesseract is not installed (apt-get install tesseract-ocr)."


def _good_answer(probe):
    key = probe.key.key
    answer = {key["response_contract"]["binding_key"]: probe.key.gold_aliases[0]}
    if key["read_targets"]:
        answer["read"] = key["read_targets"][0]["expected"]
    return json.dumps(answer)


def _match(probe):
    return probe.raw_messages["user"]  # the whole prompt: the demo parents share their last lines


@pytest.fixture
def gap_run(db, django_user_model, eager):
    """Two models over the probes of three parents: ``m-down`` answers nothing (HTTP 503 on every row),
    ``m-mixed`` misses one T02-single probe (503) and garbles one more (not JSON), answering the rest right."""
    for problem_id in ("GAPS_2", "GAPS_3"):
        make_demo_parent(django_user_model, problem_id=problem_id, sample=problem_id, stem_suffix=problem_id)
    probes = compile_and_approve(django_user_model)
    down = next(p for p in probes if p.interface == "T02-single")
    garbled = next(p for p in probes if p.interface == "T03-text")
    rest = [p for p in probes if p not in (down, garbled)]
    scripted("m-down", [{"outputs": [{"error": 503}]}])
    scripted(
        "m-mixed",
        [
            {"match": _match(down), "outputs": [{"error": 503}]},
            {"match": _match(garbled), "outputs": ["not json at all"]},
            *({"match": _match(p), "outputs": [_good_answer(p)]} for p in rest),
        ],
    )
    run = eval_run_create(
        model_names=["m-down", "m-mixed"], conditions=["raw"], start=False, options={"resamples": 20}
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    return run, probes


def test_k_infra_missing_rows_are_named_with_their_reason_and_link(gap_run):
    run, probes = gap_run
    n = len(probes)
    assert n >= 6
    gaps = result_gaps(run)
    items = f"/runs/{run.pk}/items/"
    assert [(g.model, g.status, g.count, g.total, g.url, g.text) for g in gaps.missing] == [
        (
            "m-down",
            "infra_missing",
            n,
            n,
            f"{items}?model=m-down&status=infra_missing",
            f"{n} of {n} requests ended infra_missing: HTTP 503: scripted",
        ),
        (
            "m-mixed",
            "infra_missing",
            1,
            n,
            f"{items}?model=m-mixed&status=infra_missing",
            f"1 of {n} requests ended infra_missing: HTTP 503: scripted",
        ),
    ]
    assert [(g.model, g.status, g.count, g.url, g.text) for g in gaps.scored_wrong] == [
        (
            "m-mixed",
            "unparseable",
            1,
            f"{items}?model=m-mixed&status=unparseable",
            f"1 of {n} requests was a parse failure: the output is not an answer the scorer can parse",
        )
    ]
    # both models have a bounds-only cell (GAcc on B holds a missing row); only m-down has no bar at all
    assert gaps.bounds_models == ["m-down", "m-mixed"]
    assert run.metrics["models"]["m-mixed"]["CAcc"]["value"] is not None
    assert gaps.chart_note.startswith(f"The chart has no bar for m-down ({n} infra_missing requests): ")
    assert "m-mixed" not in gaps.chart_note and "m-mixed" not in gaps.quadrants_note
    assert gaps.quadrants_note.startswith(
        f"The quadrant chart has no bar for m-down ({n} infra_missing requests)"
    )


def test_reasons_are_counted_most_frequent_first(gap_run):
    run, probes = gap_run
    n = len(probes)
    down = EvalRequest.objects.filter(run=run, model__name="m-down").order_by("pk")
    EvalRequest.objects.filter(pk__in=list(down.values_list("pk", flat=True)[:2])).update(error=TESSERACT)
    EvalRequest.objects.filter(pk=down.last().pk).update(
        error=f"{TESSERACT}\nTraceback (most recent call last)"
    )
    line = result_gaps(run).missing[0]
    assert n - 3 > 3  # 503 stays the most frequent
    assert line.reasons == [("HTTP 503: scripted", n - 3), (TESSERACT, 3)]  # the traceback's first line only
    assert (
        line.text == f"{n} of {n} requests ended infra_missing: HTTP 503: scripted ({n - 3}); {TESSERACT} (3)"
    )


def test_a_run_not_scored_yet_has_no_gaps(db, django_user_model):
    compile_and_approve(django_user_model)
    scripted("m-later", [])
    run = eval_run_create(model_names=["m-later"], conditions=["raw"], start=False)
    gaps = result_gaps(run)
    assert not gaps and gaps.missing == [] and gaps.chart_note == ""


def test_the_results_page_shows_the_explanation_and_the_link_lists_those_rows(gap_run, client, role_users):
    run, probes = gap_run
    n = len(probes)
    client.force_login(role_users["annotator"])
    assert client.get(f"/runs/{run.pk}/").status_code == 403
    client.force_login(role_users["admin"])
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"{n} of {n} requests ended infra_missing: HTTP 503: scripted" in html
    assert (
        f'href="/runs/{run.pk}/items/?model=m-down&amp;status=infra_missing">Show the {n} requests</a>'
        in html
    )
    assert (
        'href="/runs/1/items/?model=m-mixed&amp;status=infra_missing">Show the 1 request</a>'.replace(
            "/runs/1/", f"/runs/{run.pk}/"
        )
        in html
    )
    assert 'id="gaps-m-down"' in html and 'href="#gaps-m-down"' in html  # a bounds-only cell links to why
    assert 'id="chart-main-note"' in html
    listed = client.get(f"/runs/{run.pk}/items/", {"model": "m-down", "status": "infra_missing"})
    body = listed.content.decode()
    rows = EvalRequest.objects.filter(run=run, model__name="m-down")
    assert all(f">#{pk}</a>" in body for pk in rows.values_list("pk", flat=True))
    other = EvalRequest.objects.filter(run=run, model__name="m-mixed").values_list("pk", flat=True)
    assert not any(f">#{pk}</a>" in body for pk in other)
    assert "HTTP 503: scripted" in body  # the reason column
