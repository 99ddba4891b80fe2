"""Compile runs: created, planned into chunks and dispatched to the workers through the one run engine
(``run_engine``), or compiled in one process.

A run's parents are split into chunks (``compile_run_plan``); each chunk is compiled by one task, on any worker
(``compile_chunks.compile_chunk_execute``), and the last chunk to finish runs the global step
(``compile_run_finish``: membership, splits, counts, ANALYZE). Compiling in one process (``compile_run_execute``:
the command line, benchmarks) runs the very same chunks and finishing step, so both give the same rows, views
and issues."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.db import transaction

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from probes.compiler.chunks import plan_chunks
from run_engine.engine import RunTable, run_dispatch

from ..models import CompileChunk, CompileIssue, CompileRun
from ..selectors import compilable_parents
from .compile_chunks import (
    CHUNK_ROWS,
    COMPILE_CHUNK_SIZE,
    chunk_fail,
    compile_chunk_execute,
    compile_run_finish,
)
from .prompt_sets import prompt_set_active

ProgressCallback = Callable[[int, int], None]


def _chunk_task() -> Any:
    from ..tasks import compile_chunk_task  # the tasks module imports this package

    return compile_chunk_task


# A compile run's rows are its chunks, one per task (``chunk_size`` in its parameters is parents per chunk).
COMPILE_RUNS = RunTable(
    CompileRun,
    rows="chunks",
    row_table=CHUNK_ROWS,
    verb="compile_run",
    idle=(CompileRun.Status.SUCCEEDED, CompileRun.Status.FAILED),
    done=(CompileRun.Status.SUCCEEDED,),
    done_message="The compile run is finished.",
    chunk_task=_chunk_task,
    finalize=compile_run_finish,
    default_chunk_size=1,
    taper=False,
    options=None,
    started=None,
)


@transaction.atomic
def compile_run_create(
    *,
    actor: Any,
    parent_ids: list[str] | None = None,
    seed: int = 2027,
    enqueue: bool = True,
    chunk_size: int | None = None,
    lease_seconds: int | None = None,
) -> CompileRun:
    """Record a compile run for some parents (or all compilable ones) and queue it on a worker.

    ``chunk_size``: parents per chunk task (default ``COMPILE_CHUNK_SIZE``); ``lease_seconds``: how long a
    silent claim on a chunk holds it (default ``CHUNK_LEASE_SECONDS``; tests of dead workers shorten it)."""
    if parent_ids:
        known = set(
            ParentProblem.objects.filter(problem_id__in=parent_ids).values_list("problem_id", flat=True)
        )
        missing = sorted(set(parent_ids) - known)
        if missing:
            raise ApplicationError(
                "Unknown parent problems.", code="unknown_parent", extra={"missing": missing}
            )
    if chunk_size is not None and chunk_size < 1:
        raise ApplicationError("A chunk holds at least one parent.", code="invalid_chunk_size")
    stored, _ = prompt_set_active()
    parameters: dict[str, Any] = {"parent_ids": sorted(parent_ids)} if parent_ids else {"all": True}
    if chunk_size is not None:
        parameters["chunk_size"] = chunk_size
    if lease_seconds is not None:
        parameters["lease_seconds"] = lease_seconds
    run = CompileRun.objects.create(
        seed=seed,
        prompt_set=stored,
        created_by=actor if getattr(actor, "pk", None) else None,
        parameters=parameters,
    )
    event_record(actor=actor, verb="compile_run.create", obj=run, after={"parameters": run.parameters})
    if enqueue:
        from ..tasks import compile_run_task  # the tasks module imports this package

        transaction.on_commit(partial(compile_run_task.delay, run_id=run.pk))
    return run


def _run_parents(run: CompileRun) -> list[tuple[int, str, str]]:
    """(pk, problem_id, source identity) of the run's parents, in problem_id order."""
    ids = run.parameters.get("parent_ids")
    parents = (
        ParentProblem.objects.filter(problem_id__in=ids).order_by("problem_id")
        if ids
        else compilable_parents()
    )
    return [
        (pk, problem_id, digest([name, split, sample]))
        for pk, problem_id, name, split, sample in parents.values_list(
            "pk", "problem_id", "source__name", "source_split", "source_sample_id"
        )
    ]


def compile_run_plan(run_id: int) -> CompileRun:
    """Split a queued run's parents into chunks, once (a planned or finished run is returned as it is).

    Parents that share a source identity, hence logical probe ids, go to one chunk, where they are compiled in
    problem_id order as in a single pass: which of them holds a probe (DUPLICATE_LOGICAL_ID) never depends on
    which worker is faster."""
    with transaction.atomic():
        run = CompileRun.objects.select_for_update().get(pk=run_id)
        if run.status != CompileRun.Status.QUEUED:
            return run
        parents = _run_parents(run)
        size = int(run.parameters.get("chunk_size") or COMPILE_CHUNK_SIZE)
        chunks = plan_chunks([(pk, identity) for pk, _, identity in parents], size)
        CompileChunk.objects.bulk_create(
            [CompileChunk(run=run, number=n, parent_ids=ids) for n, ids in enumerate(chunks, 1)]
        )
        CompileIssue.objects.filter(run=run).delete()
        CompileRun.objects.filter(pk=run.pk).update(
            status=CompileRun.Status.RUNNING,
            total=len(parents),
            done=0,
            chunks_total=len(chunks),
            chunks_done=0,
        )
    if not chunks:
        return compile_run_finish(run_id)
    run.refresh_from_db()
    return run


def compile_run_dispatch(*, run_id: int) -> int:
    """Plan the run and queue a task per chunk not yet done (safe to call again: a done chunk is skipped, a
    finished run queues nothing)."""
    compile_run_plan(run_id)
    return run_dispatch(COMPILE_RUNS, run_id=run_id)


def compile_run_execute(*, run_id: int, progress: ProgressCallback | None = None) -> CompileRun:
    """Compile the whole run in this process, chunk after chunk, then finish it (the same steps as the workers).

    ``progress(done, total)`` is called after each parent. Idempotent: probes are upserted by
    ``logical_probe_id`` and each chunk replaces its own issues."""
    run = compile_run_plan(run_id)
    offset = 0
    for chunk_id, number, parent_ids in run.chunks.order_by("number").values_list(
        "pk", "number", "parent_ids"
    ):
        step = None
        if progress is not None:
            step = partial(lambda base, n: progress(base + n, run.total), offset)
        try:
            compile_chunk_execute(run_id=run_id, chunk_id=chunk_id, progress=step)
        except Exception as error:  # no task to retry it here: the run fails at once, as the command shows
            chunk_fail(chunk_id, f"chunk {number}: {error}")
            raise
        offset += len(parent_ids)
    return compile_run_finish(run_id)
