"""The one run engine, as every run kind uses it: lease claims, bounded infrastructure retries, chunk retry
with Celery's backoff, and busy rows looked at again instead of failing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.drafting.services import DraftBusy, draft_execute, draft_run_create
from annotation.models import LLMDraft
from annotation.tasks import draft_execute_task
from evaluation.tasks import eval_chunk_task
from models_registry.models import ModelConfig
from run_engine.engine import CHUNK_TASK_OPTIONS, MAX_CLAIMS, chunk_ids
from solving import tasks as solving_tasks
from solving.models import SolveRun
from solving.runs import solve_run_create
from tests.factories import ParentProblemFactory, scripted

pytestmark = pytest.mark.django_db


def _draft(**claim):
    parent = ParentProblemFactory()
    config = ModelConfig.objects.create(
        name="drafter", provider="scripted", model="s", extra={"default": "{}"}
    )
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    draft = run.drafts.get()
    LLMDraft.objects.filter(pk=draft.pk).update(**claim)
    return run, draft


def test_every_chunk_task_retries_errors_with_celerys_backoff():
    for task in (eval_chunk_task, solving_tasks.solve_chunk_task, draft_execute_task):
        assert (
            task.autoretry_for == (Exception,) and task.max_retries == CHUNK_TASK_OPTIONS["max_retries"] == 10
        )
        assert task.retry_backoff == 5 and task.retry_backoff_max == 300 and task.retry_jitter is True
        assert task.acks_late and task.reject_on_worker_lost


def test_a_draft_under_a_live_lease_is_not_sent_twice():
    run, draft = _draft(claims=1, claim_token="other", claimed_at=timezone.now())
    with pytest.raises(DraftBusy):
        draft_execute(draft_id=draft.pk)
    draft.refresh_from_db()
    assert (draft.status, draft.claims, draft.claim_token, draft.raw_output) == ("pending", 1, "other", "")


def test_a_draft_whose_lease_ran_out_is_taken_over_and_counted_as_a_claim():
    run, draft = _draft(claims=1, claim_token="dead", claimed_at=timezone.now() - timedelta(hours=1))
    draft = draft_execute(draft_id=draft.pk)
    assert draft.status in ("ready", "invalid", "failed") and draft.status != "pending"
    assert draft.claims == 2 and draft.claim_token not in ("", "dead")


def test_a_draft_lost_three_times_fails_and_its_run_counts_it():
    run, draft = _draft(claims=MAX_CLAIMS, claim_token="dead", claimed_at=timezone.now() - timedelta(hours=1))
    draft = draft_execute(draft_id=draft.pk)
    assert (draft.status, draft.error, draft.raw_output) == (
        "failed",
        "worker lost the draft three times",
        "",
    )
    run.refresh_from_db()
    assert (run.done, run.failed, run.status) == (0, 1, "failed") and run.finished_at is not None


def test_a_solve_chunk_that_fails_is_retried_and_finishes(monkeypatch):
    from physalign_site.celery import app

    monkeypatch.setitem(
        app.conf, "task_eager_propagates", False
    )  # let apply() run the retry as a worker would
    ParentProblemFactory(problem_id="S1", stem="UNIQ-ONE", answer_type="fill", answer="3 m/s")
    model = scripted("solver", [{"match": "UNIQ-ONE", "outputs": [r"\boxed{3 m/s}"]}])
    real = solving_tasks.solve_chunk_process
    calls = []

    def flaky(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise ConnectionError("database went away")
        return real(**kwargs)

    monkeypatch.setattr(solving_tasks, "solve_chunk_process", flaky)
    run = solve_run_create(model=model, parent_ids=["S1"], enqueue=False)
    solving_tasks.solve_chunk_task.apply(args=(run.pk, list(run.responses.values_list("pk", flat=True))))
    run.refresh_from_db()
    assert len(calls) == 2 and run.status == SolveRun.Status.COMPLETED
    assert list(run.responses.values_list("status", "correct")) == [("completed", True)]


def test_busy_rows_are_queued_again_as_a_new_task_not_a_retry(monkeypatch):
    queued = []
    monkeypatch.setattr(solving_tasks, "solve_chunk_process", lambda **kwargs: [7, 9])
    monkeypatch.setattr(
        solving_tasks.solve_chunk_task,
        "apply_async",
        lambda args, countdown: queued.append((args, countdown)),
    )
    solving_tasks.solve_chunk_task.apply(args=(1, [7, 8, 9]))
    assert queued == [((1, [7, 9]), 5)]


def test_chunks_taper_only_when_asked():
    assert chunk_ids(list(range(10)), 4, taper=False) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(c) for c in chunk_ids(list(range(10)), 4)] == [3, 2, 2, 1, 1, 1]
