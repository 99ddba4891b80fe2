"""The one run engine beyond its contract (``test_contract``): a chunk task's error retried with Celery's
backoff, a claim that fails handing its row over at once, and how ids are chunked."""

from __future__ import annotations

import pytest

from annotation import tasks as annotation_tasks
from annotation.drafting import services as drafting
from models_registry.models import ModelConfig
from run_engine.engine import chunk_ids
from solving import tasks as solving_tasks
from solving.models import SolveRun
from solving.runs import solve_run_create
from tests.factories import ParentProblemFactory, scripted
from tests.probes.conftest import make_demo_parent

pytestmark = pytest.mark.django_db


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


def test_chunks_taper_only_when_asked():
    assert chunk_ids(list(range(10)), 4, taper=False) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(c) for c in chunk_ids(list(range(10)), 4)] == [3, 2, 2, 1, 1, 1]


def test_a_draft_whose_call_raised_is_taken_over_at_once_by_the_retry(monkeypatch):
    from physalign_site.celery import app

    monkeypatch.setitem(
        app.conf, "task_eager_propagates", False
    )  # let apply() run the retry as a worker would
    config = ModelConfig.objects.create(
        name="drafter", provider="scripted", model="s", extra={"default": "{}"}
    )
    run = drafting.draft_run_create(
        pass_no=1, model_config=config, parents=[ParentProblemFactory()], actor=None, dispatch=False
    )
    real, calls = drafting.draft_request_build, []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("storage went away")
        return real(**kwargs)

    monkeypatch.setattr(drafting, "draft_request_build", flaky)
    draft = run.drafts.get()
    annotation_tasks.draft_chunk_task.apply(args=(run.pk, [draft.pk]))
    draft.refresh_from_db()
    run.refresh_from_db()
    # the failed claim ended its lease: the retry claimed the draft at once (no wait for the lease), counted
    assert len(calls) == 2 and draft.claims == 2 and draft.status in ("ready", "invalid")
    assert (run.status, run.done, run.failed) == ("succeeded", 1, 0)


def test_a_compile_chunk_that_raised_is_retried_and_fails_the_run_only_after_max_claims(
    django_user_model, monkeypatch
):
    from physalign_site.celery import app
    from probes import tasks as probes_tasks
    from probes.services import compile_chunks, compile_run_create, compile_run_plan

    monkeypatch.setitem(app.conf, "task_eager_propagates", False)
    make_demo_parent(django_user_model)
    run = compile_run_plan(compile_run_create(actor=None, enqueue=False).pk)
    (chunk,) = run.chunks.all()
    real, calls = compile_chunks.compile_parent, []

    def flaky(source, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("database went away")
        return real(source, **kwargs)

    monkeypatch.setattr(compile_chunks, "compile_parent", flaky)
    probes_tasks.compile_chunk_task.apply(args=(run.pk, [chunk.pk]))
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert (run.status, run.error, chunk.status, chunk.claims) == ("succeeded", "", "done", 2)

    # an error every time: each retry takes the chunk over at once, the claims run out, the run fails
    def broken(source, **kwargs):
        raise RuntimeError("a compiler bug")

    monkeypatch.setattr(compile_chunks, "compile_parent", broken)
    again = compile_run_plan(compile_run_create(actor=None, enqueue=False).pk)
    (chunk,) = again.chunks.all()
    probes_tasks.compile_chunk_task.apply(args=(again.pk, [chunk.pk]))
    again.refresh_from_db()
    chunk.refresh_from_db()
    assert (again.status, chunk.status, chunk.claims) == ("failed", "failed", 3)
    assert (
        again.error
        == "chunk 1: the workers compiling this chunk died or failed three times (last error: chunk 1: a compiler bug)"
    )
