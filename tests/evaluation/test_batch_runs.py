"""Provider batch APIs as a run's execution mode: a batch-mode run through each real SDK against a local server
(``tests/llm/batch_server.py``) scores exactly like a direct run of the same requests, at the batch price; items
that fail, expire or do not parse, and whole batches that fail, fall back to direct calls; a batch is polled
with its progress on the run page, cancelled at the provider with its run, and owns its rows until collected."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import call_command

from evaluation import tasks
from evaluation.models import EvalRequest, EvalRun, ItemScore, ProviderBatch
from evaluation.runs import eval_run_cancel, eval_run_create, eval_run_dispatch, eval_run_resume
from evaluation.runs.batch import batch_poll
from models_registry.models import ModelConfig
from tests.conftest import make_user
from tests.evaluation.test_runs import _good_answer
from tests.llm.batch_server import BatchServer, default_answer

pytestmark = pytest.mark.django_db

MODELS = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "google": "gemini-2.5-flash"}
CONDITIONS = ["raw", "gold", "no_image", "reordered"]


@pytest.fixture
def server(settings, monkeypatch, approved_probes):
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True
    monkeypatch.setenv("BATCHTEST_API_KEY", "sk-batch-test")
    answers = {}
    for n, probe in enumerate(approved_probes):  # a third answered right, a third not in JSON (raw and gold)
        if n % 3 < 2:
            answer = _good_answer(probe) if n % 3 == 0 else "I would say the first candidate."
            answers[probe.raw_messages["user"]] = answers[probe.gold_messages["user"]] = answer
    with BatchServer() as box:
        box.answer = lambda seen: answers.get(seen.user) or default_answer(seen)
        yield box


def _model(server: BatchServer, provider: str, name: str | None = None) -> ModelConfig:
    return ModelConfig.objects.create(
        name=name or f"{provider}-m",
        provider=provider,
        model=MODELS[provider],
        base_url=server.url(provider),
        api_key_env="BATCHTEST_API_KEY",
        max_output_tokens=256,
        price_in_per_mtok=Decimal(2),
        price_out_per_mtok=Decimal(8),
        max_retries=1,
        extra={"backoff_base_seconds": 0.01},
    )


def _run(models: list[str], *, batch: bool, capture, name: str = "", start: bool = True) -> EvalRun:
    options = {"resamples": 50, "batch_poll_seconds": 0, **({"execution": "batch"} if batch else {})}
    run = eval_run_create(model_names=models, conditions=CONDITIONS, start=False, options=options, name=name)
    if start:
        with capture(execute=True):  # polls and fallbacks are queued on commit (eager here)
            eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    return run


def _scores(run: EvalRun) -> dict[tuple, tuple]:
    return {
        (s.request.model.provider, s.request.probe_id, s.request.condition): (
            s.status,
            s.C,
            s.G,
            s.J,
            s.canonical,
        )
        for s in ItemScore.objects.filter(request__run=run).select_related("request__probe", "request__model")
    }


def _rows(run: EvalRun) -> dict[tuple, EvalRequest]:
    return {(r.model.provider, r.probe_id, r.condition): r for r in run.requests.select_related("model")}


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_batch_run_scores_exactly_like_a_direct_run_at_half_the_price(
    provider, server, eager, django_capture_on_commit_callbacks
):
    config = _model(server, provider)
    direct = _run([config.name], batch=False, capture=django_capture_on_commit_callbacks)
    assert direct.status == "completed" and server.direct_calls(provider) == direct.total
    assert server.batch_calls(provider) == 0
    server.reset()

    batched = _run([config.name], batch=True, capture=django_capture_on_commit_callbacks)
    assert batched.status == "completed"
    assert server.direct_calls(provider) == 0 and server.batch_calls(provider) > 0
    assert _scores(batched) == _scores(direct)
    assert {s[0] for s in _scores(batched).values()} >= {"completed", "unparseable"}
    assert batched.metrics["models"] == direct.metrics["models"]
    before = _rows(direct)
    for key, row in _rows(batched).items():
        assert (row.raw_output, row.input_tokens, row.output_tokens, row.finish_reason) == (
            before[key].raw_output,
            before[key].input_tokens,
            before[key].output_tokens,
            before[key].finish_reason,
        )
        assert row.request_hash == before[key].request_hash and row.settings_hash == before[key].settings_hash
        assert row.cost_usd == (before[key].cost_usd * Decimal("0.5")).quantize(Decimal("0.000001"))
        assert row.claims == 1
    assert batched.cost_usd < direct.cost_usd
    batch = ProviderBatch.objects.get(run=batched)
    assert (batch.state, batch.collected, batch.total, batch.answered, batch.fallback) == (
        "ended",
        True,
        batched.total,
        batched.total,
        0,
    )
    # the images went in order, exactly as a direct call sends them
    sent = sorted((s.system, s.user, tuple(s.images)) for s in server.seen_in("batch", provider))
    assert any(len(images) > 1 for *_, images in sent)
    server.reset()
    _run([config.name], batch=False, capture=django_capture_on_commit_callbacks, name="again")
    assert sorted((s.system, s.user, tuple(s.images)) for s in server.seen_in("direct", provider)) == sent


def test_failed_expired_and_unreadable_items_fall_back_to_direct_calls(
    server, eager, django_capture_on_commit_callbacks
):
    config = _model(server, "openai")
    direct = _run([config.name], batch=False, capture=django_capture_on_commit_callbacks)
    server.reset()
    run = eval_run_create(
        model_names=[config.name],
        conditions=CONDITIONS,
        start=False,
        options={"resamples": 50, "batch_poll_seconds": 0, "execution": "batch"},
    )
    ids = list(run.requests.order_by("pk").values_list("pk", flat=True))
    server.fail_ids, server.expire_ids, server.malformed_ids = {f"r{ids[0]}"}, {f"r{ids[1]}"}, {f"r{ids[2]}"}
    with django_capture_on_commit_callbacks(execute=True):
        eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    assert server.direct_calls("openai") == 3  # only the three items the batch did not answer
    assert _scores(run) == _scores(direct)
    batch = ProviderBatch.objects.get(run=run)
    assert (batch.answered, batch.fallback) == (run.total - 3, 3)
    fell_back = EvalRequest.objects.filter(pk__in=ids[:3])
    assert {r.claims for r in fell_back} == {2}  # the batch's claim and the direct one: within the budget
    assert {r.cost_usd for r in fell_back} == {
        r.cost_usd
        for r in direct.requests.filter(probe_id__in=[f.probe_id for f in fell_back])
        if (r.probe_id, r.condition) in {(f.probe_id, f.condition) for f in fell_back}
    }


@pytest.mark.parametrize("provider", ["openai", "google", "anthropic"])
def test_a_batch_that_fails_as_a_whole_is_called_directly(
    provider, server, eager, django_capture_on_commit_callbacks
):
    config = _model(server, provider)
    direct = _run([config.name], batch=False, capture=django_capture_on_commit_callbacks)
    server.reset()
    server.fail_batch = "the input file is invalid"
    run = _run([config.name], batch=True, capture=django_capture_on_commit_callbacks)
    assert run.status == "completed" and _scores(run) == _scores(direct)
    assert server.direct_calls(provider) == run.total
    batch = ProviderBatch.objects.get(run=run)
    assert batch.state == "failed" and batch.fallback == run.total and batch.answered == 0
    assert "the input file is invalid" in batch.error


def test_a_running_batch_is_polled_with_its_progress_on_the_run_page(
    client, server, eager, django_capture_on_commit_callbacks, django_user_model, monkeypatch
):
    config = _model(server, "anthropic")
    simulated = ModelConfig.objects.create(name="sim", provider="simulated", model="sim-1")
    server.polls_before_done = 2
    run = eval_run_create(
        model_names=[config.name, simulated.name],
        conditions=["raw"],
        start=False,
        options={"resamples": 50, "batch_poll_seconds": 60, "execution": "batch"},
    )
    # the worker path: the poll task is scheduled, not run, so the test polls by hand
    scheduled = []
    monkeypatch.setattr(
        tasks.eval_batch_poll_task, "apply_async", lambda args, countdown: scheduled.append((args, countdown))
    )
    with django_capture_on_commit_callbacks(execute=True):
        eval_run_dispatch(run_id=run.pk)
    batch = ProviderBatch.objects.get(run=run)
    # one chain per (re)queue; only the latest may poll: a requeue never doubles the polling
    assert {(args[0], countdown) for args, countdown in scheduled} == {(batch.pk, 60.0)}
    assert scheduled[-1][0][1] == batch.poll_token
    assert all(batch_poll(batch.pk, token) is None for (_, token), _ in scheduled[:-1])
    assert ProviderBatch.objects.get(pk=batch.pk).polls == 0
    run.refresh_from_db()
    # the simulated model has no batch API: its rows were called directly; the batch's rows wait for it
    assert run.status == "running"
    assert set(run.requests.filter(model=simulated).values_list("status", flat=True)) <= set(
        EvalRequest.TERMINAL
    )
    assert set(run.requests.filter(model=config).values_list("status", flat=True)) == {"running"}
    assert batch_poll(batch.pk) == 60.0 and batch_poll(batch.pk) == 60.0
    batch.refresh_from_db()
    assert (batch.polls, batch.collected, batch.state) == (2, False, "running")

    client.force_login(make_user(django_user_model, "boss", "admin"))
    page = client.get(f"/runs/{run.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-testid="batch-totals"' in page and "1 batch, 1 open" in page
    assert batch.external_id in page and "Running (open)" in page
    client.force_login(make_user(django_user_model, "rev", "probe_reviewer"))
    assert client.get(f"/runs/{run.pk}/progress/").status_code == 403

    with django_capture_on_commit_callbacks(execute=True):
        assert batch_poll(batch.pk) is None
    batch.refresh_from_db()
    run.refresh_from_db()
    assert batch.collected and batch.state == "ended" and batch.answered == batch.total
    assert run.status == "completed"
    assert batch_poll(batch.pk) is None  # a collected batch is never collected twice


def test_a_cancelled_run_cancels_its_batch_and_a_resume_submits_its_rows_again(
    server, eager, django_capture_on_commit_callbacks, monkeypatch
):
    config = _model(server, "openai")
    direct = _run([config.name], batch=False, capture=django_capture_on_commit_callbacks)
    server.reset()
    server.polls_before_done = 10**6  # it never ends by itself
    run = eval_run_create(
        model_names=[config.name],
        conditions=CONDITIONS,
        start=False,
        options={"resamples": 50, "batch_poll_seconds": 60, "execution": "batch"},
    )
    with monkeypatch.context() as patched:  # the worker path: polls are scheduled, not run; the test polls
        patched.setattr(tasks.eval_batch_poll_task, "apply_async", lambda args, countdown: None)
        with django_capture_on_commit_callbacks(execute=True):
            eval_run_dispatch(run_id=run.pk)
        batch = ProviderBatch.objects.get(run=run)
        assert batch_poll(batch.pk) == 60.0
        # a re-dispatch while the batch is open leaves its rows to it: nothing is called twice
        with django_capture_on_commit_callbacks(execute=True):
            eval_run_dispatch(run_id=run.pk)
        assert server.direct_calls("openai") == 0 and ProviderBatch.objects.filter(run=run).count() == 1
        run.refresh_from_db()
        eval_run_cancel(run=run)
        with django_capture_on_commit_callbacks(execute=True):
            while batch_poll(batch.pk) is not None:
                pass
    batch.refresh_from_db()
    assert batch.state == "cancelled" and batch.collected
    assert any(c.path.endswith("/cancel") for c in server.calls)
    assert set(run.requests.values_list("status", flat=True)) == {"pending"}  # nothing lost, nothing called
    assert server.direct_calls("openai") == 0
    run.refresh_from_db()
    server.polls_before_done = 0
    with django_capture_on_commit_callbacks(execute=True):
        eval_run_resume(run=run)
    run.refresh_from_db()
    assert run.status == "completed" and _scores(run) == _scores(direct)
    assert server.direct_calls("openai") == 0  # the resume sent the rows in a new batch
    assert list(ProviderBatch.objects.filter(run=run).values_list("state", flat=True)) == [
        "cancelled",
        "ended",
    ]


def test_the_launch_form_and_the_cli_start_a_batch_run(
    client, server, eager, django_capture_on_commit_callbacks, django_user_model
):
    config = _model(server, "google")
    client.force_login(make_user(django_user_model, "boss", "admin"))
    form = client.get("/runs/").content.decode()
    assert 'name="execution"' in form and "Provider batch API" in form
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/runs/",
            {"models": [config.name], "conditions": ["raw"], "resamples": 50, "execution": "batch"},
        )
    assert response.status_code == 302
    run = EvalRun.objects.get()
    assert run.options["execution"] == "batch"
    assert ProviderBatch.objects.filter(run=run).exists() and server.direct_calls("google") == 0
    out = io.StringIO()
    # --no-wait: in a test's transaction the polls run when the block ends (a real CLI commits as it goes)
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "evaluate",
            "--models",
            config.name,
            "--conditions",
            "raw",
            "--batch",
            "--inline",
            "--no-wait",
            stdout=out,
        )
    assert "at the batch price" in out.getvalue()
    cli_run = EvalRun.objects.exclude(pk=run.pk).get()
    assert cli_run.options["execution"] == "batch" and cli_run.status == "completed"
    assert server.direct_calls("google") == 0


def test_the_estimate_of_a_batch_launch_is_at_the_batch_price(server, client, django_user_model):
    openai = _model(server, "openai")
    simulated = ModelConfig.objects.create(
        name="sim", provider="simulated", model="sim-1", price_in_per_mtok=2, price_out_per_mtok=8
    )
    client.force_login(make_user(django_user_model, "boss", "admin"))
    query = {"models": [openai.name, simulated.name], "conditions": ["raw"], "resamples": 50}
    direct = client.get("/runs/preview/", query).context["preview"]
    batch = client.get("/runs/preview/", {**query, "execution": "batch"}).context["preview"]
    by_model = {e.model: e.cost_usd for e in direct.estimates}
    batched = {e.model: e.cost_usd for e in batch.estimates}
    assert by_model[openai.name] > 0 and batched[openai.name] == (by_model[openai.name] / 2).quantize(
        Decimal("0.000001")
    )
    assert batched[simulated.name] == by_model[simulated.name]  # no batch API: the direct price
    assert batch.batch and not direct.batch
