"""Evaluation runs through the database: planned rows, conditions, scoring, retries, cancel/resume, rescore."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluation.models import EvalRequest, EvalRun, ItemScore, MetricSnapshot
from evaluation.runs import (
    build_request,
    eval_chunk_process,
    eval_run_cancel,
    eval_run_create,
    eval_run_dispatch,
    eval_run_resume,
    run_items,
)
from physalign_site.errors import ApplicationError
from tests.factories import scripted

pytestmark = pytest.mark.django_db


def _good_answer(probe):
    key = probe.key.key
    alias = probe.key.gold_aliases[0]
    answer = {key["response_contract"]["binding_key"]: alias}
    if key["read_targets"]:
        answer["read"] = key["read_targets"][0]["expected"]
    import json

    return json.dumps(answer)


def test_rows_are_planned_up_front_and_gold_only_on_p(approved_probes, eager):
    scripted("m-good", [])
    run = eval_run_create(
        model_names=["m-good"], conditions=["raw", "gold", "no_image", "reordered"], start=False
    )
    in_p = sum(1 for p in approved_probes if p.in_p)
    assert run.total == 3 * len(approved_probes) + in_p
    assert run.requests.count() == run.total
    assert set(run.requests.values_list("status", flat=True)) == {"pending"}
    assert run.manifest["models"]["m-good"]["provider"] == "scripted"
    assert run.manifest["probe_ids_sha256"]


def test_conditions_change_only_what_they_should(approved_probes):
    scripted("m", [])
    run = eval_run_create(model_names=["m"], conditions=["raw", "no_image", "reordered"], start=False)
    probe = next(p for p in approved_probes if p.interface == "T03-image")
    rows = {r.condition: r for r in run.requests.filter(probe=probe)}
    raw, no_image, reordered = (build_request(rows[c], run.seed) for c in ("raw", "no_image", "reordered"))
    assert raw.images and not no_image.images
    assert no_image.user == raw.user  # coordinates and candidate geometry kept
    assert sorted(reordered.user.splitlines()) == sorted(raw.user.splitlines())
    assert build_request(rows["reordered"], run.seed).user == reordered.user  # fixed seed


def test_run_scores_every_row_and_stores_snapshots(approved_probes, eager):
    responses = [
        {"match": p.raw_messages["user"][-400:], "outputs": [_good_answer(p)]} for p in approved_probes
    ]
    scripted("m-good", responses, default="not json")
    run = eval_run_create(
        model_names=["m-good"], conditions=["raw", "gold"], start=False, options={"resamples": 50}
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    assert run.requests.exclude(status__in=EvalRequest.TERMINAL).count() == 0
    assert ItemScore.objects.filter(request__run=run).count() == run.total
    raw_scores = ItemScore.objects.filter(request__run=run, request__condition="raw")
    assert {s.G for s in raw_scores} == {1}
    assert run.metrics["models"]["m-good"]["GAcc"]["value"] == 1.0
    snapshot = MetricSnapshot.objects.get(run=run, subject="m-good", metric="GAcc")
    assert (snapshot.value, snapshot.pool) == (1.0, "B")
    assert MetricSnapshot.objects.filter(run=run, subject="baseline", metric="random").exists()
    kit_paired = MetricSnapshot.objects.filter(run=run, subject="m-good", metric__startswith="kit_paired.")
    assert kit_paired.exists() and set(kit_paired.values_list("pool", flat=True)) == {"P"}
    items = list(run_items(run))
    assert len(items) == run.total and {i["condition"] for i in items} == {"raw", "gold"}
    # The nearest-region control reads the compiler's Kit-shaped prediction: the T03-image probe's box
    # baseline is scored, not silently "not_applicable".
    outcome = {p.logical_probe_id: p.metadata["nearest_region"]["outcome"] for p in approved_probes}
    assert "correct" in outcome.values() or "wrong" in outcome.values()
    assert {i["probe_id"]: i["nearest"] for i in items} == outcome


def test_infra_failures_retry_at_most_twice_then_infra_missing(approved_probes, eager):
    config = scripted("m-down", [{"outputs": [{"error": 503}]}])
    run = eval_run_create(model_names=["m-down"], conditions=["raw"], start=False, options={"resamples": 20})
    eval_run_dispatch(run_id=run.pk)
    row = run.requests.first()
    assert row.status == "infra_missing" and row.raw_output is None
    assert len(row.attempts) == 3
    assert row.score.G is None and row.score.C is None
    gacc = EvalRun.objects.get(pk=run.pk).metrics["models"][config.name]["GAcc"]
    assert gacc["value"] is None and (gacc["lower"], gacc["upper"]) == (0.0, 1.0)


def test_truncated_and_refusal_outputs_are_kept_and_scored_zero(approved_probes, eager):
    probe = approved_probes[0]
    scripted("m-trunc", [{"outputs": [{"text": _good_answer(probe), "finish_reason": "length"}]}])
    run = eval_run_create(
        model_names=["m-trunc"],
        conditions=["raw"],
        start=False,
        options={"resamples": 20},
        probe_filter={"probe_ids": [probe.logical_probe_id]},
    )
    eval_run_dispatch(run_id=run.pk)
    row = run.requests.get()
    assert row.status == "truncated" and row.raw_output == _good_answer(probe)
    assert row.score.G == 0 and len(row.attempts) == 1


def test_a_finished_row_is_never_written_again(approved_probes, eager):
    scripted("m", [], default="{}")
    run = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    eval_run_dispatch(run_id=run.pk)
    row = run.requests.first()
    before = (row.raw_output, row.completed_at, row.claims)
    eval_chunk_process(run_id=run.pk, request_ids=[row.pk])  # a duplicated / redelivered task
    row.refresh_from_db()
    assert (row.raw_output, row.completed_at, row.claims) == before
    assert run.requests.count() == run.total


def test_dead_claim_is_taken_over_after_the_lease_and_counts_as_a_retry(approved_probes, eager):
    from datetime import timedelta

    from django.utils import timezone

    scripted("m", [], default="{}")
    run = eval_run_create(
        model_names=["m"],
        conditions=["raw"],
        start=False,
        options={"resamples": 20, "claim_lease_seconds": 60},
    )
    row = run.requests.first()
    EvalRequest.objects.filter(pk=row.pk).update(
        status="running", claims=1, claim_token="dead", claimed_at=timezone.now()
    )
    assert eval_chunk_process(run_id=run.pk, request_ids=[row.pk]) == [row.pk]  # still leased: busy
    EvalRequest.objects.filter(pk=row.pk).update(claimed_at=timezone.now() - timedelta(seconds=61))
    assert eval_chunk_process(run_id=run.pk, request_ids=[row.pk]) == []
    row.refresh_from_db()
    assert row.status == "completed" and row.claims == 2
    EvalRequest.objects.filter(pk=row.pk).update(
        status="running", claims=3, claim_token="dead", claimed_at=timezone.now() - timedelta(seconds=61)
    )
    eval_chunk_process(run_id=run.pk, request_ids=[row.pk])
    row.refresh_from_db()
    assert row.status == "infra_missing" and row.raw_output is None  # three lost claims: not an answer


def test_cancel_and_resume(approved_probes, eager):
    scripted("m", [], default="{}")
    run = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    EvalRun.objects.filter(pk=run.pk).update(status="running")
    run.refresh_from_db()
    eval_run_cancel(run=run)
    eval_chunk_process(run_id=run.pk, request_ids=list(run.requests.values_list("pk", flat=True)))
    assert run.requests.filter(status="pending").count() == run.total
    with pytest.raises(ApplicationError):
        eval_run_cancel(run=run)
    eval_run_resume(run=run)
    run.refresh_from_db()
    assert run.status == "completed" and run.requests.filter(status="completed").count() == run.total


def test_rescore_recomputes_from_stored_outputs_without_calling_models(approved_probes, eager, monkeypatch):
    scripted("m", [], default="{}")
    run = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    eval_run_dispatch(run_id=run.pk)
    row = run.requests.first()
    EvalRequest.objects.filter(pk=row.pk).update(raw_output=_good_answer(row.probe))
    import llm

    monkeypatch.setattr(llm, "generate", lambda *a, **k: pytest.fail("a model was called"))
    call_command("rescore", str(run.pk))
    row.refresh_from_db()
    assert row.status == "completed" and row.score.G == 1
    assert MetricSnapshot.objects.filter(run=run).count() > 0


def test_unknown_condition_or_model_is_refused(approved_probes):
    scripted("m", [])
    with pytest.raises(ApplicationError):
        eval_run_create(model_names=["m"], conditions=["base"], start=False)
    with pytest.raises(ApplicationError):
        eval_run_create(model_names=["nope"], conditions=["raw"], start=False)
    assert EvalRun.objects.count() == 0


def test_chunks_keep_their_size_and_shrink_only_at_the_end():
    from run_engine.engine import chunk_ids

    chunks = chunk_ids(list(range(5000)), 200)
    assert [len(c) for c in chunks] == [200] * 22 + [150, 113, 85, 63, 50, 50, 50, 39]
    assert [i for c in chunks for i in c] == list(range(5000))  # every id once, in order
    assert chunk_ids(list(range(20)), 10_000) == [list(range(20))]
    assert chunk_ids([], 10) == []


def _peak_overlap(rows) -> int:
    events = []
    for row in rows:
        for attempt in row.attempts:
            start = float(attempt["started_at"])
            events += [(start, 1), (start + (attempt["latency_ms"] - 5) / 1000.0, -1)]
    live = peak = 0
    for _, step in sorted(events):
        live += step
        peak = max(peak, live)
    return peak


def test_a_chunk_runs_calls_concurrently_within_the_models_max_concurrency(approved_probes, settings):
    from models_registry.models import ModelConfig

    settings.EVAL_CHUNK_THREADS = 8
    ModelConfig.objects.create(
        name="sim",
        provider="simulated",
        model="s",
        max_retries=2,
        max_concurrency=3,
        extra={"seed": 1, "latency_ms": 60},
    )
    run = eval_run_create(
        model_names=["sim"],
        conditions=["raw", "no_image", "reordered"],
        start=False,
        options={"resamples": 20},
    )
    ids = list(run.requests.values_list("pk", flat=True))
    assert len(ids) >= 9
    assert eval_chunk_process(run_id=run.pk, request_ids=ids) == []
    rows = list(run.requests.all())
    assert {r.status for r in rows} == {"completed"} and {r.claims for r in rows} == {1}
    assert ItemScore.objects.filter(request__run=run).count() == len(ids)
    assert _peak_overlap(rows) == 3  # concurrent, and never above the model's max_concurrency
    assert EvalRun.objects.get(pk=run.pk).status == "completed"


def test_a_failing_call_leaves_its_row_claimed_and_every_other_answer_stored(
    approved_probes, settings, monkeypatch
):
    from datetime import timedelta

    from django.utils import timezone

    import llm

    settings.EVAL_CHUNK_THREADS = 2
    scripted("m", [], default="{}")
    run = eval_run_create(
        model_names=["m"], conditions=["raw", "no_image", "reordered"], start=False, options={"resamples": 20}
    )
    ids = list(run.requests.order_by("pk").values_list("pk", flat=True))
    real, calls = llm.generate, []

    def generate(request, config, **kwargs):
        calls.append(request.request_id)
        if len(calls) == 3:
            raise RuntimeError("worker bug")
        return real(request, config, **kwargs)

    monkeypatch.setattr(llm, "generate", generate)
    with pytest.raises(RuntimeError, match="worker bug"):  # the task fails and is retried later
        eval_chunk_process(run_id=run.pk, request_ids=ids)
    assert len(calls) == len(ids)
    failed = run.requests.get(status="running")
    assert failed.claims == 1 and not ItemScore.objects.filter(request=failed).exists()
    assert run.requests.filter(status="completed", claims=1).count() == len(ids) - 1
    assert ItemScore.objects.filter(request__run=run).count() == len(ids) - 1
    assert EvalRun.objects.get(pk=run.pk).status != "completed"

    monkeypatch.setattr(llm, "generate", real)
    assert eval_chunk_process(run_id=run.pk, request_ids=ids) == [failed.pk]  # its lease is still live
    EvalRequest.objects.filter(pk=failed.pk).update(claimed_at=timezone.now() - timedelta(seconds=301))
    assert eval_chunk_process(run_id=run.pk, request_ids=ids) == []
    failed.refresh_from_db()
    assert (failed.status, failed.claims) == ("completed", 2)
    assert EvalRun.objects.get(pk=run.pk).status == "completed"


@pytest.mark.parametrize("path", ["one_statement", "orm"])
def test_a_result_is_stored_only_under_the_claim_that_holds_the_row(approved_probes, path, monkeypatch):
    from django.db import connection

    from evaluation.runs.execution import _store_results
    from evaluation.runs.scores import score_of as _score_of

    if path == "orm":  # the portable path (SQLite in development) must guard and write the same
        monkeypatch.setattr(connection, "vendor", "portable")

    scripted("m", [], default="{}")
    run = eval_run_create(model_names=["m"], conditions=["raw"], start=False, options={"resamples": 20})
    row = run.requests.select_related("probe__key").first()
    EvalRequest.objects.filter(pk=row.pk).update(status="running", claims=1, claim_token="mine")
    row.refresh_from_db()
    row.status, row.raw_output, row.provider_status, row.attempts = "completed", "{}", "completed", [{"n": 1}]
    assert _store_results([(row, _score_of(row))], token="someone-else") == 0
    stored = EvalRequest.objects.get(pk=row.pk)
    assert (stored.status, stored.raw_output, stored.attempts) == ("running", None, [])
    assert not ItemScore.objects.filter(request=row).exists()
    assert _store_results([(row, _score_of(row))], token="mine") == 1
    stored = EvalRequest.objects.get(pk=row.pk)
    assert (stored.status, stored.raw_output, stored.attempts) == ("completed", "{}", [{"n": 1}])
    assert stored.completed_at is not None and stored.score.G == 0
    assert _store_results([(row, _score_of(row))], token="mine") == 0  # terminal now: never written twice


def test_an_unreadable_attachment_fails_its_rows_as_infra_missing_and_the_run_still_completes(
    approved_probes, eager
):
    from annotation.models import ProblemImage
    from evaluation import runs

    config = scripted("m-files", [], default="{}")
    broken = [p for p in approved_probes if any(not a.startswith("V") for a in p.attachment_ids)]
    assert broken, "the demo probes attach the original diagram"
    for image in ProblemImage.objects.filter(parent__in={p.parent for p in broken}):
        image.file.storage.delete(image.file.name)  # lost from storage after import
    runs.attachments._image_cache.clear()
    run = eval_run_create(
        model_names=[config.name], conditions=["raw", "no_image"], start=False, options={"resamples": 20}
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed", list(run.requests.values_list("condition", "status", "error"))
    raw = run.requests.filter(condition="raw", probe__in=broken)
    assert raw.count() == len(broken)
    for row in raw:
        assert row.status == "infra_missing" and row.raw_output is None and row.attempts == []
        assert "unreadable" in row.error and row.score.G is None
    # without attachments nothing has to be read: those requests were sent and answered
    for row in run.requests.filter(condition="no_image"):
        assert row.status != "infra_missing" and len(row.attempts) == 1, (row.error, row.attempts)
