"""Every write for probes: prompt sets, compile runs, probe persistence, membership and splits."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from physalign_site.db import analyze_after_commit
from physalign_site.errors import ApplicationError
from probes.compiler import (
    BlockedGroup,
    CompileError,
    ParentResult,
    PromptSet,
    compile_parent,
    validate_prompt_files,
)
from probes.compiler.chunks import plan_chunks
from probes.compiler.membership import MemberInput, assign_splits
from probes.compiler.prompts import DEFAULT_PROMPT_SET
from run_engine.engine import Claim, RowTable, rows_claim

from .attachments import view_store
from .models import (
    CompileChunk,
    CompileIssue,
    CompileRun,
    Membership,
    Probe,
    ProbeKey,
    PromptTemplateSet,
    Release,
    RenderedView,
)
from .selectors import compilable_parents, parent_source_for

ProgressCallback = Callable[[int, int], None]


# Prompt templates -----------------------------------------------------------------------------------
def prompt_set_active() -> tuple[PromptTemplateSet, PromptSet]:
    """The active template set; the product's default wording is created on first use."""
    active = PromptTemplateSet.objects.filter(is_active=True).first()
    if active is None:
        active = _prompt_set_store(name="default", prompt_set=DEFAULT_PROMPT_SET, activate=True)
    return active, PromptSet(active.prompts, active.tasks)


@transaction.atomic
def prompt_set_import(
    *,
    prompts: Any,
    tasks: Any,
    name: str = "imported",
    normalizers: Any = None,
    protocol: Any = None,
    activate: bool = True,
) -> PromptTemplateSet:
    """Load kit-format ``prompts_v2.json`` + ``task_registry_v2.json`` (Kit §11) as a new version."""
    try:
        prompt_set = validate_prompt_files(prompts, tasks)
    except CompileError as error:
        raise ApplicationError(
            f"The prompt files do not have the kit's shape: {error}", code=error.code
        ) from error
    return _prompt_set_store(
        name=name, prompt_set=prompt_set, activate=activate, normalizers=normalizers, protocol=protocol
    )


def _prompt_set_store(
    *, name: str, prompt_set: PromptSet, activate: bool, normalizers: Any = None, protocol: Any = None
) -> PromptTemplateSet:
    stored, _ = PromptTemplateSet.objects.get_or_create(
        sha256=prompt_set.sha256,
        defaults={
            "name": name,
            "template_version": prompt_set.version,
            "prompts": prompt_set.prompts,
            "tasks": prompt_set.tasks,
            "normalizers": normalizers,
            "protocol": protocol,
        },
    )
    if activate and not stored.is_active:
        PromptTemplateSet.objects.filter(is_active=True).update(is_active=False)
        stored.is_active = True
        stored.save(update_fields=["is_active"])
    return stored


# Compile runs ---------------------------------------------------------------------------------------
# A run's parents are split into chunks (``compile_run_plan``); each chunk is compiled by one task, on any
# worker (``compile_chunk_execute``), and the last chunk to finish runs the global step (``compile_run_finish``:
# membership, splits, counts, ANALYZE). Compiling in one process (``compile_run_execute``: the command line,
# benchmarks) runs the very same chunks and finishing step, so both give the same rows, views and issues.
COMPILE_CHUNK_SIZE = 50  # parents per chunk task
CHUNK_LEASE_SECONDS = 120  # a claim lives this long after its last sign of life (renewed every quarter lease)
CHUNK_ROWS = RowTable(
    model=CompileChunk,
    terminal=(CompileChunk.Status.DONE, CompileChunk.Status.FAILED),
    running=CompileChunk.Status.RUNNING,
)


class ChunkTakenOver(Exception):
    """Another claim took the chunk over (this worker was presumed dead): its output wins, ours is dropped."""


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
        from .tasks import compile_run_task  # the tasks module imports this one

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
    """Plan the run and queue a task per chunk not yet done (safe to call again: a done chunk is skipped)."""
    from .tasks import compile_chunk_task  # the tasks module imports this one

    run = compile_run_plan(run_id)
    pending = list(
        run.chunks.exclude(status__in=CHUNK_ROWS.terminal).order_by("number").values_list("pk", flat=True)
    )
    for chunk_id in pending:
        compile_chunk_task.delay(run_id, chunk_id)
    if not pending:
        compile_run_finish(run_id)
    return len(pending)


def compile_run_execute(*, run_id: int, progress: ProgressCallback | None = None) -> CompileRun:
    """Compile the whole run in this process, chunk after chunk, then finish it (the same steps as the workers).

    ``progress(done, total)`` is called after each parent. Idempotent: probes are upserted by
    ``logical_probe_id`` and each chunk replaces its own issues."""
    run = compile_run_plan(run_id)
    offset = 0
    for chunk_id, parent_ids in run.chunks.order_by("number").values_list("pk", "parent_ids"):
        step = None
        if progress is not None:
            step = partial(lambda base, n: progress(base + n, run.total), offset)
        compile_chunk_execute(run_id=run_id, chunk_id=chunk_id, progress=step)
        offset += len(parent_ids)
    return compile_run_finish(run_id)


def compile_chunk_execute(
    *, run_id: int, chunk_id: int, progress: Callable[[int], None] | None = None
) -> Claim:
    """Claim the chunk, compile its parents, then write their probes, views and issues in one transaction that
    replaces whatever an earlier claim of the chunk wrote; finish the run if every chunk is done.

    A worker killed mid-chunk leaves nothing but content-addressed view files (stored once, harmless): its
    lease runs out and the next claim does the chunk again. A claim found dead and taken over writes nothing.
    Returns the claim: ``busy`` when another live claim holds the chunk (the task looks again later)."""
    status, parameters = (
        CompileChunk.objects.filter(pk=chunk_id).values_list("run__status", "run__parameters").get()
    )
    if status == CompileRun.Status.FAILED:  # another chunk failed the run: compiling this one is wasted
        return Claim()
    lease = int(parameters.get("lease_seconds") or CHUNK_LEASE_SECONDS)
    with transaction.atomic():
        claim = rows_claim(CHUNK_ROWS, [chunk_id], lease_seconds=lease)
    if claim.exhausted:
        _chunk_fail(chunk_id, None, "the workers compiling this chunk died three times")
    if not claim.claimed:
        compile_run_finish(run_id)  # an earlier delivery may have written the chunk but not finished the run
        return claim
    chunk = CompileChunk.objects.select_related("run", "run__prompt_set").get(pk=chunk_id)
    try:
        outputs, timings = _chunk_compile(chunk, claim.token, progress)
        _chunk_write(chunk, claim.token, outputs, timings)
    except ChunkTakenOver:
        return claim
    except Exception as error:  # the run records the failure; the worker log keeps the traceback
        _chunk_fail(chunk_id, claim.token, f"chunk {chunk.number}: {error}")
        raise
    compile_run_finish(run_id)
    return claim


def _chunk_fail(chunk_id: int, token: str | None, error: str) -> None:
    with transaction.atomic():
        chunks = CompileChunk.objects.filter(pk=chunk_id)
        if token is not None:
            chunks = chunks.filter(claim_token=token)
        run_ids = list(chunks.values_list("run_id", flat=True))
        chunks.update(status=CompileChunk.Status.FAILED, finished_at=timezone.now())
        CompileRun.objects.filter(pk__in=run_ids).exclude(status=CompileRun.Status.SUCCEEDED).update(
            status=CompileRun.Status.FAILED, error=error[:2000], finished_at=timezone.now()
        )


_ParentOutput = tuple[ParentProblem, ParentResult | None, CompileError | None]


def _chunk_compile(
    chunk: CompileChunk, token: str, progress: Callable[[int], None] | None
) -> tuple[list[_ParentOutput], dict[str, float]]:
    """Compile the chunk's parents. No writes but the lease's renewal, after a parent once a quarter of the
    lease went by since the last one (a claim that lost the chunk to another stops there)."""
    run = chunk.run
    lease = int(run.parameters.get("lease_seconds") or CHUNK_LEASE_SECONDS)
    renewed_at = time.monotonic()
    prompt_set = (
        PromptSet(run.prompt_set.prompts, run.prompt_set.tasks) if run.prompt_set else prompt_set_active()[1]
    )
    timings = {"compile_s": 0.0, "render_s": 0.0, "db_s": 0.0, "load_s": 0.0, "store_s": 0.0}
    started = time.perf_counter()
    parents = {
        p.pk: p
        for p in ParentProblem.objects.filter(pk__in=chunk.parent_ids)
        .select_related("source")
        .prefetch_related("images", "passes__approved_by")
    }
    timings["load_s"] += time.perf_counter() - started
    outputs: list[_ParentOutput] = []
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
            alive = CompileChunk.objects.filter(
                pk=chunk.pk, claim_token=token, status=CompileChunk.Status.RUNNING
            ).update(claimed_at=timezone.now())
            timings["db_s"] += time.perf_counter() - renewed
            renewed_at = time.monotonic()
            if not alive:
                raise ChunkTakenOver(chunk.pk)
        if progress is not None:
            progress(n)
    return outputs, timings


class _Holder(NamedTuple):
    parent_pk: int
    problem_id: str
    review_target_root: str


def _chunk_write(
    chunk: CompileChunk, token: str, outputs: list[_ParentOutput], timings: dict[str, float]
) -> None:
    """Write the chunk's output in one transaction, if the chunk is still this claim's."""
    started = time.perf_counter()
    with transaction.atomic():
        mine = CompileChunk.objects.select_for_update().filter(
            pk=chunk.pk, claim_token=token, status=CompileChunk.Status.RUNNING
        )
        if not mine.exists():
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
        timings = {"compile_s": 0.0, "render_s": 0.0, "db_s": 0.0, "load_s": 0.0, "store_s": 0.0}
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
            finished_at=timezone.now(),
            timings={k: round(v, 4) for k, v in timings.items()},
        )
        analyze_after_commit(Probe, ProbeKey, RenderedView, CompileIssue, Membership, rows=counts["probes"])
    run.refresh_from_db()
    return run


def probes_persist(
    *, run: CompileRun, outputs: list[_ParentOutput], timings: dict[str, float] | None = None
) -> dict[str, int]:
    """Upsert the parents' probes, keys and views in a few bulk statements; probes a parent no longer produces
    become ``superseded``; record the issues. Parents are taken in order, exactly as one at a time would be:
    a logical probe id held by another parent (the Kit's DUPLICATE_LOGICAL_ID: the id is a function of the
    source identity, never of the parent row) is blocked, naming the holder. Returns the counts."""
    compiled_ids = [p.logical_probe_id for _, result, _ in outputs if result for p in result.probes]
    holders = {
        lid: _Holder(parent_pk, problem_id, root)
        for lid, parent_pk, problem_id, root in Probe.objects.filter(
            logical_probe_id__in=compiled_ids
        ).values_list("logical_probe_id", "parent_id", "parent__problem_id", "review_target_root")
    }
    counts: dict[str, int] = {"parents": len(outputs), "probes": 0, "blocked_groups": 0}
    issues: list[CompileIssue] = []
    written: dict[str, tuple[ParentProblem, ParentResult, Any, bool]] = {}  # by logical id: last one wins
    superseding: list[int] = []  # parents whose probes not produced now are superseded
    for parent, result, error in outputs:
        if result is None:
            assert error is not None
            issues.append(
                CompileIssue(
                    run=run,
                    parent=parent,
                    task_id="parent",
                    code=error.code,
                    reasons=[error.code],
                    scope=[parent.problem_id],
                    detail=error.detail,
                )
            )
            continue
        superseding.append(parent.pk)
        counts["probes"] += len(result.probes)
        counts["blocked_groups"] += len(result.blocked)
        blocked = list(result.blocked)
        for compiled in result.probes:
            counts[compiled.interface] = counts.get(compiled.interface, 0) + 1
            holder = holders.get(compiled.logical_probe_id)
            if holder is not None and holder.parent_pk != parent.pk:
                blocked.append(
                    BlockedGroup(
                        task_id=compiled.task_id,
                        code="DUPLICATE_LOGICAL_ID",
                        reasons=["DUPLICATE_LOGICAL_ID"],
                        scope=sorted({r["record_id"] for r in compiled.key["source_records"]}),
                        group_id=compiled.native_query["group_id"],
                        detail=f"{compiled.logical_probe_id} already belongs to {holder.problem_id}",
                    )
                )
                continue
            unchanged = holder is not None and holder.review_target_root == compiled.review_target_root
            written[compiled.logical_probe_id] = (parent, result, compiled, unchanged)
        for lid, (owner, _, compiled, _) in written.items():
            if owner is parent:
                holders[lid] = _Holder(parent.pk, parent.problem_id, compiled.review_target_root)
        issues.extend(
            CompileIssue(
                run=run,
                parent=parent,
                task_id=b.task_id,
                code=b.code,
                reasons=b.reasons,
                scope=b.scope,
                group_id=b.group_id,
                detail=b.detail,
            )
            for b in blocked
        )
    _probes_write(run, list(written.values()), superseding, timings)
    CompileIssue.objects.bulk_create(issues)
    return counts


_PROBE_FIELDS = [
    "parent",
    "compile_run",
    "task_id",
    "interface",
    "language",
    "group_id",
    "parent_group_id",
    "evidence_group",
    "content_group_hint",
    "content_root",
    "review_target_root",
    "closure_root",
    "packet_review_root",
    "in_l",
    "raw_view",
    "gold_view",
    "raw_messages",
    "gold_messages",
    "attachment_ids",
    "metadata",
    "updated_at",
]
_REVIEW_RESET = ["state", "packet_state", "in_p"]  # any content change sends a probe back to review (Kit §6)


def _probes_write(
    run: CompileRun,
    written: list[tuple[ParentProblem, ParentResult, Any, bool]],
    superseding: list[int],
    timings: dict[str, float] | None,
) -> None:
    now = timezone.now()
    rows: dict[bool, list[Probe]] = {False: [], True: []}  # by "unchanged"
    for parent, result, compiled, unchanged in written:
        rows[unchanged].append(
            Probe(
                logical_probe_id=compiled.logical_probe_id,
                parent=parent,
                compile_run=run,
                task_id=compiled.task_id,
                interface=compiled.interface,
                language=compiled.key["language"],
                group_id=compiled.native_query["group_id"],
                parent_group_id=result.group_id,
                evidence_group=compiled.evidence_group,
                content_group_hint=result.content_group_hint,
                content_root=compiled.content_root,
                review_target_root=compiled.review_target_root,
                closure_root=compiled.closure_root,
                packet_review_root=compiled.packet_review_root,
                in_l=bool(compiled.key["joint_eligible"]),
                raw_view=compiled.raw_view,
                gold_view=compiled.gold_view,
                raw_messages=compiled.raw_messages,
                gold_messages=compiled.gold_messages,
                attachment_ids=compiled.attachment_ids,
                metadata=compiled.metadata,
                state=Probe.State.PENDING_REVIEW,
                packet_state="pending_review",
                in_p=False,
                created_at=now,
                updated_at=now,
            )
        )
    for unchanged, probes in rows.items():
        if probes:
            Probe.objects.bulk_create(
                probes,
                update_conflicts=True,
                unique_fields=["logical_probe_id"],
                update_fields=_PROBE_FIELDS if unchanged else _PROBE_FIELDS + _REVIEW_RESET,
            )
    pks = dict(
        Probe.objects.filter(logical_probe_id__in=[c.logical_probe_id for _, _, c, _ in written]).values_list(
            "logical_probe_id", "pk"
        )
    )
    ProbeKey.objects.bulk_create(
        [
            ProbeKey(
                probe_id=pks[c.logical_probe_id],
                key=c.key,
                native_query=c.native_query,
                displays=c.displays,
                assets=c.assets,
            )
            for _, _, c, _ in written
        ],
        update_conflicts=True,
        unique_fields=["probe"],
        update_fields=["key", "native_query", "displays", "assets"],
    )
    changed = [c for _, _, c, unchanged in written if not unchanged]
    RenderedView.objects.filter(probe_id__in=[pks[c.logical_probe_id] for c in changed]).delete()
    started = time.perf_counter()
    views = []
    for compiled in changed:
        by_view = {d["view_id"]: d for d in compiled.displays}
        for v in compiled.views:
            views.append(
                RenderedView(
                    probe_id=pks[compiled.logical_probe_id],
                    view_id=v.view_id,
                    file=view_store(v.png, v.record["bytes_sha256"]),
                    bytes_sha256=v.record["bytes_sha256"],
                    pixels_sha256=v.record["pixels_sha256"],
                    width=v.record["width"],
                    height=v.record["height"],
                    source_image_id=by_view[v.view_id]["source_image_id"],
                    marks=by_view[v.view_id]["marks"],
                    affine=by_view[v.view_id]["source_to_display"],
                )
            )
    if timings is not None:
        timings["store_s"] += time.perf_counter() - started
    RenderedView.objects.bulk_create(views)
    (
        Probe.objects.filter(parent_id__in=superseding)
        .exclude(pk__in=pks.values())
        .exclude(state=Probe.State.SUPERSEDED)
        .update(state=Probe.State.SUPERSEDED)
    )


# Review hand-off (the review app calls this) ---------------------------------------------------------
@transaction.atomic
def probe_record_review(
    *,
    probe: Probe,
    actor: Any,
    state: str,
    packet_state: str,
    review_target_root: str,
    empty_reason: str | None = None,
) -> Probe:
    """Record the review outcome for the probe's current content; stale roots are refused."""
    probe = Probe.objects.select_for_update().get(pk=probe.pk)
    if probe.review_target_root != review_target_root:
        raise ApplicationError("The probe changed since it was reviewed.", code="AUDIT_STALE", status=409)
    if state not in (Probe.State.APPROVED, Probe.State.REJECTED):
        raise ApplicationError("Unknown review state.", code="invalid_state")
    ids = probe.key.view.observation_ids
    allowed = {"approved_nonempty", "rejected"} if ids else {"approved_empty", "rejected"}
    if packet_state not in allowed:
        raise ApplicationError(
            "This packet state does not fit the packet's content.", code="PACKET_STATE_CONTENT_MISMATCH"
        )
    before = {"state": probe.state, "packet_state": probe.packet_state}
    probe.state, probe.packet_state = state, packet_state
    probe.in_p = state == Probe.State.APPROVED and packet_state == "approved_nonempty"
    probe.save(update_fields=["state", "packet_state", "in_p", "updated_at"])
    key = probe.key
    plan = {
        **key.view.packet_plan,
        "state": packet_state,
        "review_ref": "qa-packet" if packet_state.startswith("approved") else None,
        "empty_reason": empty_reason if packet_state == "approved_empty" else None,
    }
    if packet_state == "approved_empty" and not plan["empty_reason"]:
        plan["empty_reason"] = "no_independent_readable_primitive"
    key.key = {**key.key, "packet_plan": plan}
    key.save(update_fields=["key"])
    event_record(
        actor=actor,
        verb="probe.review_recorded",
        obj=probe,
        before=before,
        after={"state": state, "packet_state": packet_state},
    )
    return probe


# Membership, exact dedup, development selection (Kit §2.12) -------------------------------------------
@transaction.atomic
def membership_refresh(*, seed: int = 2027, development_count: int = 25) -> dict[str, int]:
    """Recompute dedup groups and splits over every parent that has live probes; update probe splits.

    Reads only the few columns and metadata keys the coverage tags use (not the probes' big JSON), and writes
    in bulk: memberships that changed, then one update per split for the probes whose split changed."""
    live = (
        Probe.objects.exclude(state=Probe.State.SUPERSEDED)
        .order_by("parent__problem_id", "logical_probe_id")
        .values_list(
            "parent_id",
            "parent__problem_id",
            "parent__source__name",
            "parent__source_split",
            "parent__source_sample_id",
            "content_group_hint",
            "interface",
            "language",
            "metadata__representation_kind",
            "metadata__public_text_availability",
            "metadata__image_count",
            "metadata__repair_applied_to_query",
        )
    )
    by_parent: dict[int, list[tuple[Any, ...]]] = {}
    for row in live:
        by_parent.setdefault(row[0], []).append(row)
    members = [_member_input(rows) for rows in by_parent.values()]
    assigned = assign_splits(members, seed=seed, development_count=development_count)
    existing = {m.parent_id: m for m in Membership.objects.filter(parent_id__in=list(by_parent))}
    created: list[Membership] = []
    changed: list[Membership] = []
    by_split: dict[str, list[int]] = {}
    counts: dict[str, int] = {}
    for member in assigned:
        values = {
            "source_identity": member.source_identity,
            "content_group_hint": member.content_group_hint,
            "dedup_group": member.dedup_group,
            "representative_id": member.representative_id,
            "dedup_state": member.dedup_state,
            "split": member.split,
            "tags": [list(tag) for tag in sorted(member.tags)],
        }
        membership = existing.get(member.parent_pk)
        if membership is None:
            created.append(Membership(parent_id=member.parent_pk, **values))
        elif any(getattr(membership, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(membership, name, value)
            changed.append(membership)
        by_split.setdefault(member.split, []).append(member.parent_pk)
        counts["split_" + member.split] = counts.get("split_" + member.split, 0) + 1
    Membership.objects.bulk_create(created, batch_size=1000)
    Membership.objects.bulk_update(changed, fields=_MEMBERSHIP_FIELDS, batch_size=500)
    for split, parent_pks in by_split.items():
        (
            Probe.objects.filter(parent_id__in=parent_pks)
            .exclude(state=Probe.State.SUPERSEDED)
            .exclude(split=split)
            .update(split=split)
        )
    return counts


_MEMBERSHIP_FIELDS = [
    "source_identity",
    "content_group_hint",
    "dedup_group",
    "representative_id",
    "dedup_state",
    "split",
    "tags",
]


def _member_input(rows: list[tuple[Any, ...]]) -> MemberInput:
    """One parent's coverage tags from its live probes' rows (see ``membership_refresh``); a metadata key the
    compiler did not write counts as its default, as ``dict.get`` would."""
    parent_pk, problem_id, namespace, split, sample, content_group_hint = rows[0][:6]
    tags = set()
    for *_, interface, language, representation, public_text, image_count, repair in rows:
        tags.update(
            {
                ("interface", interface),
                ("language", language),
                ("namespace", namespace),
                ("representation", representation if representation is not None else ""),
                ("public_text", public_text if public_text is not None else ""),
                ("images", "multi" if (image_count if image_count is not None else 1) > 1 else "single"),
                ("repair", str(bool(repair))),
            }
        )
    return MemberInput(
        parent_pk=parent_pk,
        problem_id=problem_id,
        source_identity=digest([namespace, split, sample]),
        content_group_hint=content_group_hint,
        tags=frozenset(tags),
    )


def release_zip_queue(*, release: Release, actor: Any) -> Release:
    """Queue the public zip of a release (built by a worker, progress in ``zip_progress``).

    A zip being built is left alone; a ready one whose file is gone is built again. The page and the API both
    call this, so a download is built the same way whoever asks.
    """
    from .tasks import (
        release_zip_task,  # the tasks module imports the releases module, which imports this one
    )

    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.zip_status in ("queued", "running"):
            return release
        Release.objects.filter(pk=release.pk).update(zip_status="queued", zip_progress=0)
        event_record(actor=actor, verb="release.zip_queued", obj=release)
        transaction.on_commit(partial(release_zip_task.delay, release_pk=release.pk))
    release.refresh_from_db()
    return release


def release_zip_file(release: Release) -> Path | None:
    """The built public zip of a release, or None while it is not built (or its file went missing)."""
    path = Path(release.zip_path) if release.zip_path else None
    return path if release.zip_status == "ready" and path is not None and path.is_file() else None
