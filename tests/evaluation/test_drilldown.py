"""The evaluation drill-down explains the score, and the launch form counts the requests before launch
(issue 15 item 11): the expected target beside the parsed answer, candidates by their labels, C/G/J with the
scorer's own reasons, a link to the probe; the preview's count equals the rows the launch creates."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from evaluation.models import EvalRequest, EvalRun
from evaluation.runs import eval_run_create, eval_run_dispatch
from tests.factories import scripted

pytestmark = pytest.mark.django_db


def _answer(probe, *, owner: str | None = None, read: str | None = None) -> str:
    key = probe.key.view
    answer = {key.binding_key: owner or key.gold_aliases[0]}
    if key.read_targets:
        answer["read"] = read if read is not None else key.read_targets[0]["expected"]
    return json.dumps(answer)


def _text(response) -> str:
    return html.unescape(re.sub(r"\s+", " ", response.content.decode()))


@pytest.fixture
def image_probe(approved_probes):
    return next(p for p in approved_probes if p.interface == "T03-image" and p.in_p)


@pytest.fixture
def explained_run(image_probe, eager):
    """Four scripted models answer the T03-image probe: right, wrong owner, wrong reading, not JSON."""
    probe = image_probe
    key = probe.key.view
    gold = key.gold_aliases[0]
    wrong = next(a for a in key.aliases if a != gold)
    answers = {
        "m-right": _answer(probe),
        "m-wrong-owner": _answer(probe, owner=wrong),
        "m-wrong-read": _answer(probe, read="M"),
        "m-prose": f"The owner is {gold}.",
    }
    for name, output in answers.items():
        scripted(name, [], default=output)
    run = eval_run_create(
        model_names=list(answers),
        conditions=["raw", "gold"],
        probe_filter={"probe_ids": [probe.logical_probe_id]},
        start=False,
        options={"resamples": 20},
    )
    eval_run_dispatch(run_id=run.pk)
    return run


def _row(run: EvalRun, model: str, condition: str = "raw") -> EvalRequest:
    return run.requests.select_related("probe__key").get(model__name=model, condition=condition)


def _entity(probe, alias: str) -> str:
    return probe.key.view.alias_to_entity[alias][:11]


def test_the_drill_down_shows_the_expected_target_beside_the_parsed_answer(
    client, key_holder, explained_run, image_probe
):
    key = image_probe.key.view
    gold = key.gold_aliases[0]
    wrong = next(a for a in key.aliases if a != gold)
    expected_reading = key.read_targets[0]["expected"]
    client.force_login(key_holder)
    row = _row(explained_run, "m-wrong-owner")
    response = client.get(reverse("evaluation:request_detail", args=[row.pk]))
    assert response.status_code == 200
    drill = response.context["drill"]
    assert [c.label for c in drill.expected] == [gold]
    assert [c.label for c in drill.chosen] == [wrong]
    assert [(r.anchor, r.expected, r.parsed, r.correct) for r in drill.reads] == [
        (key.read_targets[0]["anchor_alias"], expected_reading, expected_reading, True)
    ]
    text = _text(response)
    assert (
        f"G = 0: chose {wrong} (entity {_entity(image_probe, wrong)}), expected {gold} (entity {_entity(image_probe, gold)})"
        in text
    )
    assert "J = 0: C × G = 1 × 0; the reading is correct but the grounding is wrong" in text
    assert reverse("probes:probe_detail", args=[image_probe.logical_probe_id]) in text
    assert "data-tex>" + expected_reading in re.sub(r"\s+", " ", response.content.decode())
    # candidates are named by their labels; no entity id is shown whole (only shortened, with the full id on hover)
    full = key.alias_to_entity[gold]
    assert f">{full}<" not in text and f'title="{full}"' in text


@pytest.mark.parametrize(
    ("model", "scores", "reasons"),
    [
        (
            "m-right",
            (1, 1, 1),
            (
                'C = 1: the parsed reading "{read}" matches the expected "{read}" under the label normalizer '
                "(ocr_label_v2_1)",
                "G = 1: chose {gold} (entity {gold_entity}), the expected target",
                "J = 1: C × G = 1 × 1; the reading and the grounding are both correct",
            ),
        ),
        (
            "m-wrong-owner",
            (1, 0, 0),
            (
                'C = 1: the parsed reading "{read}" matches the expected "{read}" under the label normalizer '
                "(ocr_label_v2_1)",
                "G = 0: chose {wrong} (entity {wrong_entity}), expected {gold} (entity {gold_entity})",
                "J = 0: C × G = 1 × 0; the reading is correct but the grounding is wrong",
            ),
        ),
        (
            "m-wrong-read",
            (0, 1, 0),
            (
                'C = 0: the parsed reading "M" does not match the expected "{read}" under the label normalizer '
                "(ocr_label_v2_1)",
                "G = 1: chose {gold} (entity {gold_entity}), the expected target",
                "J = 0: C × G = 0 × 1; the grounding is correct but the reading is wrong",
            ),
        ),
        (
            "m-prose",
            (0, 0, 0),
            (
                "C = 0: the output did not parse: it is not a JSON object (it begins “The owner is {gold}.”); "
                "such an output fails every field",
                "G = 0: the output did not parse: it is not a JSON object (it begins “The owner is {gold}.”); "
                "such an output fails every field",
                "J = 0: C × G = 0 × 0; neither the reading nor the grounding is correct",
            ),
        ),
    ],
)
def test_each_score_is_shown_with_the_rule_that_decided_it(
    client, key_holder, explained_run, image_probe, model, scores, reasons
):
    key = image_probe.key.view
    gold = key.gold_aliases[0]
    wrong = next(a for a in key.aliases if a != gold)
    names = {
        "read": key.read_targets[0]["expected"],
        "gold": gold,
        "wrong": wrong,
        "gold_entity": _entity(image_probe, gold),
        "wrong_entity": _entity(image_probe, wrong),
    }
    row = _row(explained_run, model)
    assert (row.score.C, row.score.G, row.score.J) == scores  # what the run stored
    client.force_login(key_holder)
    response = client.get(reverse("evaluation:request_detail", args=[row.pk]))
    drill = response.context["drill"]
    expected = tuple(r.format(**names) for r in reasons)
    assert (drill.reasons.C, drill.reasons.G, drill.reasons.J) == expected
    assert drill.matches_stored
    text = _text(response)
    for reason in expected:
        assert reason in text


def test_the_gold_condition_says_why_c_is_not_scored_and_shows_the_supplied_reading(
    client, key_holder, explained_run, image_probe
):
    client.force_login(key_holder)
    row = _row(explained_run, "m-right", "gold")
    response = client.get(reverse("evaluation:request_detail", args=[row.pk]))
    drill = response.context["drill"]
    assert drill.reasons.C == (
        "not scored: C is scored only under the raw (Base) condition; this request is gold (+GT)"
    )
    assert drill.reasons.J == "not scored: J = C × G exists only where C does"
    assert drill.supplied == image_probe.gold_view["recognition_packet"]
    assert [r.correct for r in drill.reads] == [None]


def test_the_drill_down_stays_admin_only(client, role_users, explained_run, image_probe):
    row = _row(explained_run, "m-right")
    url = reverse("evaluation:request_detail", args=[row.pk])
    gold_entity = image_probe.key.view.gold_entity_ids[0]
    for role, user in role_users.items():
        client.force_login(user)
        response = client.get(url)
        # an admin without the key-holder permission sees the scores and the parsed answer, never the target
        assert response.status_code == (200 if role == "admin" else 403), role
        assert gold_entity[:11] not in response.content.decode()


# The launch form's request count ---------------------------------------------------------------------------
LAUNCHES = [
    {"conditions": ["raw", "gold", "no_image", "reordered"], "models": ["m-a"]},
    {"conditions": ["raw", "gold", "no_image", "reordered"], "models": ["m-a", "m-b"]},
    {"conditions": ["gold"], "models": ["m-a", "m-b"]},
    {"conditions": ["raw", "gold"], "models": ["m-b"], "interface": "T03-image"},
    {"conditions": ["gold", "no_image"], "models": ["m-a"], "limit": 2},
]


@pytest.mark.parametrize("choice", LAUNCHES)
def test_the_preview_counts_exactly_the_rows_the_launch_creates(
    client, admin_user_role, approved_probes, choice
):
    scripted("m-a", [])
    scripted("m-b", [])
    client.force_login(admin_user_role)
    params = {"resamples": 20, **choice}
    preview = client.get(reverse("evaluation:run_preview"), params)
    assert preview.status_code == 200
    shown = int(re.search(r'data-testid="preview-total-count">(\d+)<', preview.content.decode()).group(1))
    # the per-condition probe counts: +GT only on paired probes
    planned = [p for p in approved_probes if choice.get("interface") in (None, p.interface)][
        : choice.get("limit")
    ]
    counts = {c.condition: c.probes for c in preview.context["preview"].conditions}
    assert counts == {
        "raw": len(planned),
        "gold": sum(p.in_p for p in planned),
        "no_image": len(planned),
        "reordered": len(planned),
    }

    assert sum(c.requests for c in preview.context["preview"].conditions) == shown

    launched = client.post(
        reverse("evaluation:run_list"), {**params, "name": f"launch {choice}"}, follow=False
    )
    assert launched.status_code == 302
    run = EvalRun.objects.get(name=f"launch {choice}")
    assert shown == run.total == EvalRequest.objects.filter(run=run).count() > 0


def test_the_launch_form_shows_the_preview_and_says_gold_runs_on_paired_probes(
    client, admin_user_role, approved_probes
):
    client.force_login(admin_user_role)
    page = client.get(reverse("evaluation:run_list"))
    text = _text(page)
    paired = sum(p.in_p for p in approved_probes)
    assert "paired probes only (pool P" in text
    assert f'data-testid="preview-probes-gold">{paired} of {len(approved_probes)}<' in text
    assert "Choose at least one model" in text
    assert 'hx-get="/runs/preview/"' in text


def test_the_preview_is_admin_only(client, role_users):
    for role, user in role_users.items():
        client.force_login(user)
        response = client.get(reverse("evaluation:run_preview"), {"conditions": ["raw"]})
        assert response.status_code == (200 if role == "admin" else 403), role
