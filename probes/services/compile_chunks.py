"""One chunk of a compile run, on any worker, under the run engine's lease (``run_engine``), and the finishing
step the last chunk to end runs (``compile_run_finish``: membership, splits, counts, ANALYZE)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import ParentProblem
from physalign_site.db import analyze_after_commit
from probes.compiler import CompileError, PromptSet, compile_parent
from run_engine.engine import Claim, RowTable, lease_release, leases_renew, rows_claim, rows_held

from ..models import CompileChunk, CompileIssue, CompileRun, Membership, Probe, ProbeKey, RenderedView
from ..selectors import parent_source_for
from .membership import membership_refresh
from .probe_writes import ParentOutput, probes_persist
from .prompt_sets import prompt_set_active

COMPILE_CHUNK_SIZE = 50  # parents per chunk task
CHUNK_LEASE_SECONDS = 120  # a claim lives this long after its last sign of life (renewed every quarter lease)
CHUNK_ROWS = RowTable(
    model=CompileChunk,
    terminal=(CompileChunk.Status.DONE, CompileChunk.Status.FAILED),
    running=CompileChunk.Status.RUNNING,
)
_TIMINGS = ("compile_s", "render_s", "db_s", "load_s", "store_s")


class ChunkTakenOver(Exception):
    """Another claim took the chunk over (this worker was presumed dead): its output wins, ours is dropped."""


def _lease(parameters: dict) -> int:
    return int(parameters.get("lease_seconds") or CHUNK_LEASE_SECONDS)


def compile_chunks_process(*, run_id: int, chunk_ids: list[int]) -> list[int]:
    """Compile the chunks (the engine queues one per task); return those another live claim holds (the task
    looks at them again later, ``busy_requeue``)."""
    return [pk for pk in chunk_ids if compile_chunk_execute(run_id=run_id, chunk_id=pk).busy]


def compile_chunk_execute(
    *, run_id: int, chunk_id: int, progress: Callable[[int], None] | None = None
) -> Claim:
    """Claim the chunk, compile its parents, then write their probes, views and issues in one transaction that
    replaces whatever an earlier claim of the chunk wrote; finish the run if every chunk is done.

    A worker killed mid-chunk leaves nothing but content-addressed view files (stored once, harmless): its
    lease runs out and the next claim does the chunk again. A claim found dead and taken over writes nothing.
    An unexpected error ends the claim's lease and is raised: the task's retry takes the chunk over at once, as
    a claim, so after ``MAX_CLAIMS`` failed claims the chunk fails the run.
    Returns the claim: ``busy`` when another live claim holds the chunk (the task looks again later)."""
    status, parameters, number = (
        CompileChunk.objects.filter(pk=chunk_id).values_list("run__status", "run__parameters", "number").get()
    )
    if status == CompileRun.Status.FAILED:  # another chunk failed the run: compiling this one is wasted
        return Claim()
    with transaction.atomic():
        claim = rows_claim(CHUNK_ROWS, [chunk_id], lease_seconds=_lease(parameters))
    if claim.exhausted:
        last = CompileRun.objects.filter(pk=run_id).values_list("error", flat=True).get()
        chunk_fail(
            chunk_id,
            f"chunk {number}: the workers compiling this chunk died or failed three times"
            + (f" (last error: {last})" if last else ""),
        )
    if not claim.claimed:
        compile_run_finish(run_id)  # an earlier delivery may have written the chunk but not finished the run
        return claim
    chunk = CompileChunk.objects.select_related("run", "run__prompt_set").get(pk=chunk_id)
    try:
        outputs, timings = _chunk_compile(chunk, claim.token, progress)
        _chunk_write(chunk, claim.token, outputs, timings)
    except ChunkTakenOver:
        return claim
    except Exception as error:  # the run shows the last error; the worker log keeps the traceback
        lease_release(CHUNK_ROWS, [chunk_id], token=claim.token)
        CompileRun.objects.filter(pk=run_id, status=CompileRun.Status.RUNNING).update(
            error=f"chunk {chunk.number}: {error}"[:2000]
        )
        raise
    compile_run_finish(run_id)
    return claim


def chunk_fail(chunk_id: int, error: str, *, token: str | None = None) -> None:
    """Fail the chunk and its run: under the claim ``token``, or whoever holds it (``None``: its claims are
    used up, or a compile in one process raised)."""
    with transaction.atomic():
        chunks = (
            rows_held(CHUNK_ROWS, [chunk_id], token=token)
            if token is not None
            else CompileChunk.objects.filter(pk=chunk_id)
        )
        run_ids = list(chunks.values_list("run_id", flat=True))
        chunks.update(status=CompileChunk.Status.FAILED, finished_at=timezone.now())
        CompileRun.objects.filter(pk__in=run_ids).exclude(status=CompileRun.Status.SUCCEEDED).update(
            status=CompileRun.Status.FAILED, error=error[:2000], finished_at=timezone.now()
        )


def _chunk_compile(
    chunk: CompileChunk, token: str, progress: Callable[[int], None] | None
) -> tuple[list[ParentOutput], dict[str, float]]:
    """Compile the chunk's parents. No writes but the lease's renewal, after a parent once a quarter of the
    lease went by since the last one (a claim that lost the chunk to another stops there)."""
    run = chunk.run
    lease = _lease(run.parameters)
    renewed_at = time.monotonic()
    prompt_set = (
        PromptSet(run.prompt_set.prompts, run.prompt_set.tasks) if run.prompt_set else prompt_set_active()[1]
    )
    timings = dict.fromkeys(_TIMINGS, 0.0)
    started = time.perf_counter()
    parents = {
        p.pk: p
        for p in ParentProblem.objects.filter(pk__in=chunk.parent_ids)
        .select_related("source")
        .prefetch_related("images", "passes__approved_by")
    }
    timings["load_s"] += time.perf_counter() - started
    outputs: list[ParentOutput] = []
    for n, pk in enumerate(chunk.parent_ids, 1):
        parent = parents[pk]
        started = time.perf_counter()
        try:
            source = parent_source_for(parent)
        except CompileError as error:
            outputs.append((parent, None, error))
            timings["load_s"] += time.perf_counter() - started
        else:
            loaded = time.perf_counter()
            result = compile_parent(source, prompt_set=prompt_set, seed=run.seed)
            timings["load_s"] += loaded - started
            timings["render_s"] += result.render_seconds
            timings["compile_s"] += time.perf_counter() - loaded - result.render_seconds
            outputs.append((parent, result, None))
        if time.monotonic() - renewed_at >= lease / 4:
            renewed = time.perf_counter()
            alive = leases_renew(CHUNK_ROWS, [chunk.pk], token=token)
            timings["db_s"] += time.perf_counter() - renewed
            renewed_at = time.monotonic()
            if not alive:
                raise ChunkTakenOver(chunk.pk)
        if progress is not None:
            progress(n)
    return outputs, timings


def _chunk_write(
    chunk: CompileChunk, token: str, outputs: list[ParentOutput], timings: dict[str, float]
) -> None:
    """Write the chunk's output in one transaction, if the chunk is still this claim's."""
    started = time.perf_counter()
    with transaction.atomic():
        if not rows_held(CHUNK_ROWS, [chunk.pk], token=token).select_for_update().exists():
            raise ChunkTakenOver(chunk.pk)
        CompileIssue.objects.filter(run=chunk.run, parent_id__in=chunk.parent_ids).delete()
        counts = probes_persist(run=chunk.run, outputs=outputs, timings=timings)
        timings["db_s"] += time.perf_counter() - started - timings["store_s"]
        CompileChunk.objects.filter(pk=chunk.pk).update(
            status=CompileChunk.Status.DONE,
            counts=counts,
            timings={k: round(v, 4) for k, v in timings.items()},
            finished_at=timezone.now(),
        )
        CompileRun.objects.filter(pk=chunk.run_id).update(
            done=F("done") + len(chunk.parent_ids), chunks_done=F("chunks_done") + 1
        )


def compile_run_finish(run_id: int) -> CompileRun:
    """Once every chunk is done (checked under the run's row lock, so exactly one caller does it): membership
    and splits over all live probes, the run's counts and timings, ANALYZE after the commit."""
    with transaction.atomic():
        run = CompileRun.objects.select_for_update().get(pk=run_id)
        if run.status != CompileRun.Status.RUNNING:
            return run
        chunks = list(run.chunks.values_list("status", "counts", "timings"))
        if any(status != CompileChunk.Status.DONE for status, _, _ in chunks):
            return run
        counts: dict[str, int] = {"parents": 0, "probes": 0, "blocked_groups": 0}
        timings = dict.fromkeys(_TIMINGS, 0.0)
        for _, chunk_counts, chunk_timings in chunks:
            for key, value in chunk_counts.items():
                counts[key] = counts.get(key, 0) + value
            for key, value in chunk_timings.items():
                timings[key] = timings.get(key, 0.0) + value
        started = time.perf_counter()
        counts.update(membership_refresh(seed=run.seed))
        timings["db_s"] += time.perf_counter() - started
        CompileRun.objects.filter(pk=run.pk).update(
            status=CompileRun.Status.SUCCEEDED,
            counts=counts,
            error="",  # an error a later claim of its chunk got past
            finished_at=timezone.now(),
            timings={k: round(v, 4) for k, v in timings.items()},
        )
        analyze_after_commit(Probe, ProbeKey, RenderedView, CompileIssue, Membership, rows=counts["probes"])
    run.refresh_from_db()
    return run
