"""The response cache: an opted-in run reuses earlier completed answers to the same request and settings."""

from __future__ import annotations

import pytest

import llm
from evaluation.models import EvalRequest, ItemScore
from evaluation.runs import eval_run_create, eval_run_dispatch
from tests.evaluation.test_runs import _good_answer
from tests.factories import scripted

pytestmark = pytest.mark.django_db


@pytest.fixture
def calls(monkeypatch):
    """Every provider call the executor makes, by request user text."""
    real, made = llm.generate, []

    def generate(request, config, **kwargs):
        made.append(request.fingerprint())
        return real(request, config, **kwargs)

    monkeypatch.setattr(llm, "generate", generate)
    return made


def _run(model: str, *, reuse: bool = False):
    run = eval_run_create(
        model_names=[model],
        conditions=["raw", "gold", "no_image"],
        start=False,
        options={"resamples": 50, **({"reuse_responses": True} if reuse else {})},
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    return run


def _scores(run) -> dict[tuple[str, str], tuple]:
    return {
        (s.request.probe.logical_probe_id, s.request.condition): (s.status, s.C, s.G, s.J, s.canonical)
        for s in ItemScore.objects.filter(request__run=run).select_related("request__probe")
    }


def test_a_cached_rerun_makes_no_call_and_scores_the_same(approved_probes, eager, calls):
    responses = [
        {"match": p.raw_messages["user"][-400:], "outputs": [_good_answer(p)]} for p in approved_probes[::2]
    ]
    config = scripted("m", responses, default="not json")
    config.price_in_per_mtok, config.price_out_per_mtok = 3, 15
    config.save()
    first = _run("m")
    assert first.status == "completed" and len(calls) == first.total
    assert set(first.requests.values_list("status", flat=True)) >= {"completed", "unparseable"}
    calls.clear()

    again = _run("m", reuse=True)
    assert again.status == "completed" and calls == []
    assert _scores(again) == _scores(first)
    assert again.metrics["models"] == first.metrics["models"]
    assert again.cost_usd == 0 and first.cost_usd > 0
    originals = {(r.probe_id, r.condition): r for r in first.requests.all()}
    for row in again.requests.all():
        source = originals[(row.probe_id, row.condition)]
        assert row.cached_from_id == source.pk and row.attempts == [] and row.cost_usd == 0
        assert (row.raw_output, row.input_tokens, row.output_tokens, row.finish_reason) == (
            source.raw_output,
            source.input_tokens,
            source.output_tokens,
            source.finish_reason,
        )
        assert row.request_hash == source.request_hash
    assert first.requests.filter(cost_usd__gt=0).count() == first.total  # the source keeps its cost

    calls.clear()
    third = _run("m", reuse=True)  # a reuse of a reuse points to the original call
    assert calls == [] and {r.cached_from.run_id for r in third.requests.select_related("cached_from")} == {
        first.pk
    }


def test_errors_refusals_and_truncations_are_asked_again(approved_probes, eager, calls):
    trunc, refused, down = approved_probes[0], approved_probes[1], approved_probes[2]
    scripted(
        "m",
        [
            {
                "match": trunc.raw_messages["user"][-400:],
                "outputs": [{"text": "{}", "finish_reason": "length"}],
            },
            {
                "match": refused.raw_messages["user"][-400:],
                "outputs": [{"text": "", "finish_reason": "refusal"}],
            },
            {"match": down.raw_messages["user"][-400:], "outputs": [{"error": 503}]},
        ],
        default="{}",
    )
    first = _run("m")
    statuses = set(first.requests.values_list("status", flat=True))
    assert {"truncated", "refusal", "infra_missing", "completed"} <= statuses
    again_expected = first.requests.exclude(provider_status="completed").count()
    assert again_expected > 0
    calls.clear()
    again = _run("m", reuse=True)
    assert len(calls) == again_expected
    assert not again.requests.filter(
        cached_from__isnull=False, cached_from__provider_status__in=["truncated", "refusal", "failed"]
    ).exists()
    assert again.requests.filter(cached_from__isnull=True).count() == again_expected


def test_without_the_option_or_with_other_settings_nothing_is_reused(approved_probes, eager, calls):
    config = scripted("m", [], default="{}")
    first = _run("m")
    calls.clear()
    plain = _run("m")
    assert len(calls) == plain.total == first.total
    assert not plain.requests.filter(cached_from__isnull=False).exists()
    calls.clear()
    config.temperature = 0.5  # settings as sent change: another request
    config.save()
    changed = _run("m", reuse=True)
    assert len(calls) == changed.total
    assert not EvalRequest.objects.filter(run=changed, cached_from__isnull=False).exists()


def test_the_launch_form_and_the_cli_opt_in(approved_probes, eager, client, django_user_model):
    from django.core.management import call_command

    from evaluation.forms import RunLaunchForm

    scripted("m", [], default="{}")
    data = {"models": ["m"], "conditions": ["raw"], "resamples": 20}
    form = RunLaunchForm(data | {"reuse_responses": "on"})
    assert form.is_valid(), form.errors
    assert form.run_options() == {"resamples": 20, "reuse_responses": True}
    plain = RunLaunchForm(data)
    assert plain.is_valid() and plain.run_options() == {"resamples": 20}
    call_command("evaluate", "--models", "m", "--inline", "--resamples", "20", "--worker-timeout", "0")
    call_command(
        "evaluate",
        "--models",
        "m",
        "--inline",
        "--resamples",
        "20",
        "--reuse-responses",
        "--worker-timeout",
        "0",
    )
    from evaluation.models import EvalRun

    first, second = EvalRun.objects.order_by("pk")
    assert "reuse_responses" not in first.options and second.options["reuse_responses"] is True
    assert second.requests.filter(cached_from__run=first).count() == second.total
