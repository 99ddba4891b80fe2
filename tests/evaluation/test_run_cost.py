"""Cost before and during a run: the launch estimate and a run's dollar budget."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.core.management import call_command

import llm
from evaluation.models import EvalRun
from evaluation.runs import (
    build_request,
    eval_run_budget_set,
    eval_run_create,
    eval_run_dispatch,
    eval_run_preview,
    eval_run_resume,
)
from llm.estimate import image_size
from probes.attachments import AttachmentIndex
from tests.factories import scripted

pytestmark = pytest.mark.django_db


def _priced(name: str, provider: str = "scripted", **fields):
    config = scripted(name, [], default="{}")
    config.price_in_per_mtok, config.price_out_per_mtok = Decimal("2.5"), Decimal("10")
    config.max_output_tokens = 500
    for key, value in fields.items():
        setattr(config, key, value)
    config.save()
    return config


def _openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail rule written out for the fixture: fit 2048, short side ≤ 768, 512 tiles."""
    s = min(1, 2048 / max(width, height))
    w, h = width * s, height * s
    s = min(1, 768 / min(w, h))
    w, h = w * s, h * s
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def test_the_launch_estimate_equals_a_hand_computation(approved_probes):
    _priced("m1")
    _priced("m2", price_in_per_mtok=Decimal("1"), price_out_per_mtok=Decimal("4"), max_output_tokens=None)
    preview = eval_run_preview(model_names=["m1", "m2"], conditions=["raw", "no_image"])
    index = AttachmentIndex(approved_probes)
    tokens = 0
    for probe in approved_probes:
        text = math.ceil(len(probe.raw_messages["system"]) / 4) + math.ceil(
            len(probe.raw_messages["user"]) / 4
        )
        images = sum(_openai_image_tokens(a.width, a.height) for a in index.of(probe))
        tokens += (text + images) + text  # raw with its images, no_image without
    requests = 2 * len(approved_probes)
    assert any(index.of(p) for p in approved_probes)
    by_model = {e.model: e for e in preview.estimates}
    assert by_model["m1"].requests == requests and by_model["m1"].input_tokens == tokens
    assert by_model["m1"].output_tokens == 500 * requests
    m1 = (Decimal(tokens) * Decimal("2.5") + Decimal(500 * requests) * 10) / 1_000_000
    assert by_model["m1"].cost_usd == m1.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
    # no cap on the config and none for the family: the documented default cap (4096)
    assert by_model["m2"].output_tokens == 4096 * requests
    m2 = (Decimal(tokens) + Decimal(4096 * requests) * 4) / 1_000_000
    assert by_model["m2"].cost_usd == m2.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
    assert preview.cost_usd == by_model["m1"].cost_usd + by_model["m2"].cost_usd
    # the executor's estimate of a built request (sizes read from the image bytes) agrees with the preview's
    run = eval_run_create(model_names=["m1"], conditions=["raw"], start=False)
    row = run.requests.exclude(probe__attachment_ids=[]).first()
    request = build_request(row, run.seed)
    assert [image_size(i.data) for i in request.images] == [(a.width, a.height) for a in index.of(row.probe)]


def test_a_run_stops_at_its_budget_with_rows_pending_and_resumes_when_raised(
    approved_probes, eager, monkeypatch
):
    _priced("m")
    preview = eval_run_preview(model_names=["m"], conditions=["raw", "no_image"])
    per_row = preview.cost_usd / preview.total
    calls = []
    real = llm.generate
    monkeypatch.setattr(llm, "generate", lambda *a, **k: calls.append(1) or real(*a, **k))
    budget = (per_row * Decimal("2.5")).quantize(Decimal("0.000001"))  # about two rows' worth
    run = eval_run_create(
        model_names=["m"],
        conditions=["raw", "no_image"],
        start=False,
        options={"resamples": 20, "budget_usd": str(budget)},
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "paused" and "budget" in run.error and "pending" in run.error
    assert 0 < len(calls) < run.total
    assert run.requests.filter(status="pending").count() == run.total - len(calls)
    assert not run.requests.filter(status="running").exists()
    assert run.cost_usd <= budget  # spent stays within the budget (actual ≤ estimate: the cap bounds it)
    eval_run_dispatch(run_id=run.pk)  # a watchdog's dispatch does not restart a paused run
    assert EvalRun.objects.get(pk=run.pk).status == "paused"

    eval_run_resume(run=run)  # the same budget: it pauses again without a call
    run.refresh_from_db()
    assert run.status == "paused" and len(calls) < run.total

    eval_run_budget_set(run=run, budget_usd="10")
    eval_run_resume(run=run)
    run.refresh_from_db()
    assert run.status == "completed" and run.error == "" and len(calls) == run.total
    assert run.requests.filter(status="pending").count() == 0


def test_the_cli_prints_the_estimate_and_takes_a_budget(approved_probes, eager, capsys):
    _priced("m")
    call_command("evaluate", "--models", "m", "--estimate", "--worker-timeout", "0")
    out = capsys.readouterr().out
    preview = eval_run_preview(model_names=["m"], conditions=["raw"])
    assert f"~${preview.cost_usd:.6f} in all" in out and not EvalRun.objects.exists()
    call_command(
        "evaluate",
        "--models",
        "m",
        "--inline",
        "--resamples",
        "20",
        "--budget-usd",
        "0",
        "--worker-timeout",
        "0",
    )
    run = EvalRun.objects.get()
    assert run.status == "paused" and run.requests.filter(status="pending").count() == run.total
    call_command(
        "evaluate", "--resume", str(run.pk), "--budget-usd", "5", "--inline", "--worker-timeout", "0"
    )
    run.refresh_from_db()
    assert run.status == "completed" and run.options["budget_usd"] == "5"


def test_the_pages_show_the_estimate_and_resume_a_paused_run_with_a_raised_budget(
    client, admin_user_role, approved_probes, eager, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    _priced("m")
    client.force_login(admin_user_role)
    params = {"models": ["m"], "conditions": ["raw"], "resamples": 20}
    preview = client.get(reverse("evaluation:run_preview"), params)
    expected = preview.context["preview"].cost_usd
    assert expected > 0 and f'data-testid="estimate-total">~${expected:.6f}<' in preview.content.decode()
    with django_capture_on_commit_callbacks(execute=True):  # the launch queues its chunks on commit
        launched = client.post(reverse("evaluation:run_list"), {**params, "name": "b", "budget_usd": "0"})
    assert launched.status_code == 302
    run = EvalRun.objects.get(name="b")
    assert run.options["budget_usd"] == "0"
    page = client.get(reverse("evaluation:run_detail", args=[run.pk])).content.decode()
    assert "Paused by its budget" in page and 'data-testid="resume-budget"' in page
    client.post(reverse("evaluation:run_action", args=[run.pk, "resume"]), {"budget_usd": "3"})
    run.refresh_from_db()
    assert run.status == "completed" and run.options["budget_usd"] == "3"


def test_a_cached_rerun_is_not_stopped_by_its_budget(approved_probes, eager, monkeypatch):
    _priced("m")
    first = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    eval_run_dispatch(run_id=first.pk)
    monkeypatch.setattr(llm, "generate", lambda *a, **k: pytest.fail("a model was called"))
    again = eval_run_create(
        model_names=["m"],
        conditions=["raw"],
        start=False,
        options={"resamples": 20, "budget_usd": "0", "reuse_responses": True},
    )
    eval_run_dispatch(run_id=again.pk)
    again.refresh_from_db()
    assert (
        again.status == "completed"
        and again.requests.filter(cached_from__isnull=False).count() == again.total
    )
