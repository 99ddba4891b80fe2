"""The run engine's contract, written once and checked on every run kind that uses it: evaluation requests,
solving responses, drafts and compile chunks. Each kind is driven through its own chunk processing (what its
chunk task calls), so what is checked is the kind's real behaviour, not the engine alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from annotation import tasks as annotation_tasks
from annotation.drafting import services as drafting
from evaluation import tasks as evaluation_tasks
from evaluation.models import EvalRequest
from evaluation.runs import eval_chunk_process, eval_run_cancel, eval_run_create, eval_run_resume
from evaluation.runs.control import RUNS as EVAL_RUNS
from models_registry.models import ModelConfig
from probes import tasks as probes_tasks
from probes.models import CompileChunk
from probes.services import (
    COMPILE_RUNS,
    compile_chunks_process,
    compile_run_create,
    compile_run_plan,
)
from run_engine.engine import BUSY_RETRY_SECONDS, CHUNK_TASK_OPTIONS, MAX_CLAIMS, RunTable, run_dispatch
from solving import tasks as solving_tasks
from solving.models import SolveResponse
from solving.runs import solve_chunk_process, solve_run_cancel, solve_run_create, solve_run_resume
from solving.runs.control import RUNS as SOLVE_RUNS
from tests.evaluation.conftest import compile_and_approve
from tests.factories import ParentProblemFactory, scripted
from tests.probes.conftest import make_demo_parent

pytestmark = pytest.mark.django_db


@dataclass
class Case:
    """One run of a kind with a single row, nothing dispatched."""

    run: Any
    row: Any  # the row model instance
    process: Callable[
        [int, list[int]], list[int]
    ]  # the kind's chunk processing: (run id, row ids) → busy ids
    runs: RunTable
    running: str | None  # the status a claimed row takes (None: it keeps its status)
    lost: str  # the status of a row whose claims all died
    cancel: Callable[..., Any] | None = None
    resume: Callable[..., Any] | None = None

    def state(self) -> tuple[str, int, str]:
        self.row.refresh_from_db()
        return self.row.status, self.row.claims, self.row.claim_token

    def claimed_by(self, token: str, *, ago: timedelta, claims: int) -> None:
        fields: dict[str, Any] = {"claim_token": token, "claimed_at": timezone.now() - ago, "claims": claims}
        if self.running is not None:
            fields["status"] = self.running
        type(self.row).objects.filter(pk=self.row.pk).update(**fields)

    def work(self) -> list[int]:
        return self.process(self.run.pk, [self.row.pk])


def _evaluation(django_user_model, failing: bool = False) -> Case:
    probe = compile_and_approve(django_user_model)[0]
    scripted("m", [{"outputs": [{"error": 503}]}] if failing else [])
    run = eval_run_create(
        model_names=["m"],
        conditions=["raw"],
        start=False,
        options={"resamples": 20},
        probe_filter={"probe_ids": [probe.logical_probe_id]},
    )
    return Case(
        run,
        run.requests.get(),
        lambda run_id, ids: eval_chunk_process(run_id=run_id, request_ids=ids),
        EVAL_RUNS,
        EvalRequest.Status.RUNNING,
        EvalRequest.Status.INFRA_MISSING,
        eval_run_cancel,
        eval_run_resume,
    )


def _solving(django_user_model, failing: bool = False) -> Case:
    ParentProblemFactory(problem_id="S1", stem="UNIQ-ONE", answer_type="fill", answer="3 m/s")
    outputs = [{"error": 503}] if failing else [r"\boxed{3 m/s}"]
    model = scripted("solver", [{"match": "UNIQ-ONE", "outputs": outputs}])
    run = solve_run_create(model=model, parent_ids=["S1"], enqueue=False)
    return Case(
        run,
        run.responses.get(),
        lambda run_id, ids: solve_chunk_process(run_id=run_id, response_ids=ids),
        SOLVE_RUNS,
        SolveResponse.Status.RUNNING,
        SolveResponse.Status.INFRA_MISSING,
        solve_run_cancel,
        solve_run_resume,
    )


def _draft(django_user_model, failing: bool = False) -> Case:
    extra: dict[str, Any] = {"default": "{}", "backoff_base_seconds": 0}
    if failing:
        extra["responses"] = [{"outputs": [{"error": 503}]}]
    config = ModelConfig.objects.create(
        name="drafter", provider="scripted", model="s", max_retries=2, extra=extra
    )
    run = drafting.draft_run_create(
        pass_no=1, model_config=config, parents=[ParentProblemFactory()], actor=None, dispatch=False
    )
    return Case(
        run,
        run.drafts.get(),
        lambda run_id, ids: drafting.draft_chunk_process(run_id=run_id, draft_ids=ids),
        drafting.DRAFT_RUNS,
        None,
        "failed",
        drafting.draft_run_cancel,
        drafting.draft_run_resume,
    )


def _compile(django_user_model, failing: bool = False) -> Case:
    make_demo_parent(django_user_model)
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False).pk)
    return Case(
        run,
        run.chunks.get(),
        lambda run_id, ids: compile_chunks_process(run_id=run_id, chunk_ids=ids),
        COMPILE_RUNS,
        CompileChunk.Status.RUNNING,
        CompileChunk.Status.FAILED,
    )


KINDS = {"evaluation": _evaluation, "solving": _solving, "draft": _draft, "compile": _compile}
PAID = ["evaluation", "solving", "draft"]  # the kinds whose rows call a model provider


@pytest.fixture(params=list(KINDS))
def case(request, django_user_model) -> Case:
    return KINDS[request.param](django_user_model)


def test_a_row_is_claimed_once_and_answered(case):
    assert case.work() == []
    status, claims, token = case.state()
    assert status in case.runs.row_table.terminal and claims == 1 and token
    case.run.refresh_from_db()
    assert case.run.status in case.runs.done


def test_a_row_under_a_live_lease_is_busy_and_left_alone(case):
    case.claimed_by("other", ago=timedelta(0), claims=1)
    before = case.state()
    assert case.work() == [case.row.pk]
    assert case.state() == before and before[1:] == (1, "other")


def test_a_dead_lease_is_taken_over_and_counts_a_claim(case):
    case.claimed_by("dead", ago=timedelta(hours=1), claims=1)
    assert case.work() == []
    status, claims, token = case.state()
    assert status in case.runs.row_table.terminal and claims == 2 and token not in ("", "dead")


def test_a_row_whose_claims_all_died_is_exhausted_not_claimed(case):
    case.claimed_by("dead", ago=timedelta(hours=1), claims=MAX_CLAIMS)
    assert case.work() == []
    assert case.state() == (case.lost, MAX_CLAIMS, "dead")


def test_a_terminal_row_is_never_claimed_again(case):
    case.work()
    answered = case.state()
    assert answered[0] in case.runs.row_table.terminal
    # even with its lease run out
    type(case.row).objects.filter(pk=case.row.pk).update(claimed_at=timezone.now() - timedelta(hours=1))
    assert case.work() == []
    assert case.state() == answered
    assert run_dispatch(case.runs, run_id=case.run.pk) == 0  # a finished run queues nothing


@pytest.mark.parametrize("kind", ["evaluation", "solving", "draft"])  # a compile run cannot be cancelled
def test_a_cancelled_run_claims_nothing_and_a_resume_finishes_it(kind, django_user_model, eager):
    case = KINDS[kind](django_user_model)
    planned = case.state()
    assert planned[0] not in case.runs.row_table.terminal and planned[1:] == (0, "")
    case.run = case.cancel(run=case.run)
    assert case.run.status == "cancelled"
    assert case.work() == []
    assert case.state() == planned
    case.run = case.resume(run=case.run)  # dispatches the run's rows again (eager: they run here)
    status, claims, _ = case.state()
    assert status in case.runs.row_table.terminal and claims == 1
    assert case.run.status in case.runs.done


@pytest.mark.parametrize("kind", PAID)
def test_provider_calls_over_all_claims_stay_within_max_claims(kind, django_user_model):
    """A row taken over on its second claim may spend only what is left of the one retry budget
    (``retries_left``): one attempt per claim in all, never a claim's full configured retries again."""
    case = KINDS[kind](django_user_model, failing=True)
    case.claimed_by("dead", ago=timedelta(hours=1), claims=1)
    case.work()
    case.row.refresh_from_db()
    assert case.row.claims == 2 and len(case.row.attempts) == MAX_CLAIMS - 1


CHUNK_TASKS = {
    "evaluation": (evaluation_tasks, "eval_chunk_task", "eval_chunk_process"),
    "evaluation-direct": (evaluation_tasks, "eval_direct_chunk_task", "eval_chunk_process"),
    "solving": (solving_tasks, "solve_chunk_task", "solve_chunk_process"),
    "draft": (annotation_tasks, "draft_chunk_task", "draft_chunk_process"),
    "compile": (probes_tasks, "compile_chunk_task", "compile_chunks_process"),
}


@pytest.mark.parametrize("kind", list(CHUNK_TASKS))
def test_every_chunk_task_retries_errors_with_celerys_backoff(kind):
    module, task_name, _ = CHUNK_TASKS[kind]
    task = getattr(module, task_name)
    assert task.autoretry_for == (Exception,) and task.max_retries == CHUNK_TASK_OPTIONS["max_retries"] == 10
    assert task.retry_backoff == 5 and task.retry_backoff_max == 300 and task.retry_jitter is True
    assert task.acks_late and task.reject_on_worker_lost


@pytest.mark.parametrize("kind", list(CHUNK_TASKS))
def test_every_chunk_task_queues_busy_rows_again_as_a_new_task_not_a_retry(kind, monkeypatch):
    module, task_name, process = CHUNK_TASKS[kind]
    task = getattr(module, task_name)
    queued = []
    monkeypatch.setattr(module, process, lambda **kwargs: [7, 9])
    monkeypatch.setattr(task, "apply_async", lambda args, countdown: queued.append((args, countdown)))
    task.apply(args=(1, [7, 8, 9]))
    assert queued == [((1, [7, 9]), BUSY_RETRY_SECONDS)]
