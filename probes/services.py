"""Every write for probes: prompt sets, compile runs, probe persistence, membership and splits."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from django.db import transaction
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
from probes.compiler.membership import MemberInput, assign_splits
from probes.compiler.prompts import DEFAULT_PROMPT_SET

from .attachments import view_store
from .models import (
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
@transaction.atomic
def compile_run_create(
    *, actor: Any, parent_ids: list[str] | None = None, seed: int = 2027, enqueue: bool = True
) -> CompileRun:
    """Record a compile run for some parents (or all compilable ones) and queue it on a worker."""
    if parent_ids:
        known = set(
            ParentProblem.objects.filter(problem_id__in=parent_ids).values_list("problem_id", flat=True)
        )
        missing = sorted(set(parent_ids) - known)
        if missing:
            raise ApplicationError(
                "Unknown parent problems.", code="unknown_parent", extra={"missing": missing}
            )
    stored, _ = prompt_set_active()
    run = CompileRun.objects.create(
        seed=seed,
        prompt_set=stored,
        created_by=actor if getattr(actor, "pk", None) else None,
        parameters={"parent_ids": sorted(parent_ids)} if parent_ids else {"all": True},
    )
    event_record(actor=actor, verb="compile_run.create", obj=run, after={"parameters": run.parameters})
    if enqueue:
        from .tasks import compile_run_task  # the tasks module imports this one

        transaction.on_commit(partial(compile_run_task.delay, run_id=run.pk))
    return run


def _run_parents(run: CompileRun) -> list[ParentProblem]:
    ids = run.parameters.get("parent_ids")
    if ids:
        return list(ParentProblem.objects.filter(problem_id__in=ids).order_by("problem_id"))
    return list(compilable_parents())


def compile_run_execute(*, run_id: int, progress: ProgressCallback | None = None) -> CompileRun:
    """Compile each parent of the run, persist probes and issues, then refresh membership and splits.

    Idempotent: probes are upserted by ``logical_probe_id`` and the run's issues are rebuilt.
    """
    run = CompileRun.objects.get(pk=run_id)
    parents = _run_parents(run)
    prompt_set = (
        PromptSet(run.prompt_set.prompts, run.prompt_set.tasks) if run.prompt_set else prompt_set_active()[1]
    )
    CompileRun.objects.filter(pk=run.pk).update(status=CompileRun.Status.RUNNING, total=len(parents), done=0)
    CompileIssue.objects.filter(run=run).delete()
    timings = {"compile_s": 0.0, "render_s": 0.0, "db_s": 0.0, "load_s": 0.0}
    counts: dict[str, int] = {"parents": len(parents), "probes": 0, "blocked_groups": 0}
    try:
        for done, parent in enumerate(parents, 1):
            result = _compile_one(parent, run, prompt_set, timings)
            counts["probes"] += len(result.probes)
            counts["blocked_groups"] += len(result.blocked)
            for probe in result.probes:
                counts[probe.interface] = counts.get(probe.interface, 0) + 1
            CompileRun.objects.filter(pk=run.pk).update(done=done)
            if progress:
                progress(done, len(parents))
        started = time.perf_counter()
        counts.update(membership_refresh(seed=run.seed))
        timings["db_s"] += time.perf_counter() - started
    except Exception as error:  # the run records the failure; the worker log keeps the traceback
        CompileRun.objects.filter(pk=run.pk).update(
            status=CompileRun.Status.FAILED, error=str(error)[:2000], finished_at=timezone.now()
        )
        raise
    CompileRun.objects.filter(pk=run.pk).update(
        status=CompileRun.Status.SUCCEEDED,
        counts=counts,
        finished_at=timezone.now(),
        timings={k: round(v, 4) for k, v in timings.items()},
    )
    analyze_after_commit(Probe, ProbeKey, RenderedView, CompileIssue, Membership, rows=counts["probes"])
    run.refresh_from_db()
    return run


def _compile_one(
    parent: ParentProblem, run: CompileRun, prompt_set: PromptSet, timings: dict[str, float]
) -> ParentResult:
    started = time.perf_counter()
    try:
        source = parent_source_for(parent)
    except CompileError as error:
        CompileIssue.objects.create(
            run=run,
            parent=parent,
            task_id="parent",
            code=error.code,
            reasons=[error.code],
            scope=[parent.problem_id],
            detail=error.detail,
        )
        timings["load_s"] += time.perf_counter() - started
        return ParentResult(
            problem_id=parent.problem_id, group_id="", content_group_hint="", source_identity=""
        )
    loaded = time.perf_counter()
    result = compile_parent(source, prompt_set=prompt_set, seed=run.seed)
    compiled = time.perf_counter()
    probes_persist(parent=parent, run=run, result=result)
    timings["load_s"] += loaded - started
    timings["render_s"] += result.render_seconds
    timings["compile_s"] += compiled - loaded - result.render_seconds
    timings["db_s"] += time.perf_counter() - compiled
    return result


@transaction.atomic
def probes_persist(*, parent: ParentProblem, run: CompileRun, result: ParentResult) -> list[Probe]:
    """Upsert the parent's probes; probes no longer produced become ``superseded``; record issues."""
    kept, blocked = [], list(result.blocked)
    # A logical probe id is a function of the source identity, never of the parent row: a second parent
    # with the same (namespace, split, sample) would silently take over the first one's probe. The Kit
    # blocks such a group (DUPLICATE_LOGICAL_ID); so do we, naming the parent that already holds it.
    holders = dict(
        Probe.objects.filter(logical_probe_id__in=[p.logical_probe_id for p in result.probes])
        .exclude(parent=parent)
        .values_list("logical_probe_id", "parent__problem_id")
    )
    for compiled in result.probes:
        if compiled.logical_probe_id in holders:
            blocked.append(
                BlockedGroup(
                    task_id=compiled.task_id,
                    code="DUPLICATE_LOGICAL_ID",
                    reasons=["DUPLICATE_LOGICAL_ID"],
                    scope=sorted({r["record_id"] for r in compiled.key["source_records"]}),
                    group_id=compiled.native_query["group_id"],
                    detail=f"{compiled.logical_probe_id} already belongs to {holders[compiled.logical_probe_id]}",
                )
            )
            continue
        kept.append(_probe_upsert(parent, run, result, compiled))
    (
        Probe.objects.filter(parent=parent)
        .exclude(logical_probe_id__in=[p.logical_probe_id for p in kept])
        .update(state=Probe.State.SUPERSEDED)
    )
    CompileIssue.objects.bulk_create(
        [
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
        ]
    )
    return kept


def _probe_upsert(parent: ParentProblem, run: CompileRun, result: ParentResult, compiled: Any) -> Probe:
    existing = Probe.objects.filter(logical_probe_id=compiled.logical_probe_id).first()
    unchanged = existing is not None and existing.review_target_root == compiled.review_target_root
    fields = {
        "parent": parent,
        "compile_run": run,
        "task_id": compiled.task_id,
        "interface": compiled.interface,
        "language": compiled.key["language"],
        "group_id": compiled.native_query["group_id"],
        "parent_group_id": result.group_id,
        "evidence_group": compiled.evidence_group,
        "content_group_hint": result.content_group_hint,
        "content_root": compiled.content_root,
        "review_target_root": compiled.review_target_root,
        "closure_root": compiled.closure_root,
        "packet_review_root": compiled.packet_review_root,
        "in_l": bool(compiled.key["joint_eligible"]),
        "raw_view": compiled.raw_view,
        "gold_view": compiled.gold_view,
        "raw_messages": compiled.raw_messages,
        "gold_messages": compiled.gold_messages,
        "attachment_ids": compiled.attachment_ids,
        "metadata": compiled.metadata,
    }
    if not unchanged:  # any content change sends the probe back to review (Kit §6: review target root)
        fields.update(state=Probe.State.PENDING_REVIEW, packet_state="pending_review", in_p=False)
    probe, _ = Probe.objects.update_or_create(logical_probe_id=compiled.logical_probe_id, defaults=fields)
    ProbeKey.objects.update_or_create(
        probe=probe,
        defaults={
            "key": compiled.key,
            "native_query": compiled.native_query,
            "displays": compiled.displays,
            "assets": compiled.assets,
        },
    )
    if not unchanged:
        RenderedView.objects.filter(probe=probe).delete()
        by_view = {d["view_id"]: d for d in compiled.displays}
        RenderedView.objects.bulk_create(
            [
                RenderedView(
                    probe=probe,
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
                for v in compiled.views
            ]
        )
    return probe


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
    """Recompute dedup groups and splits over every parent that has live probes; update probe splits."""
    live = Probe.objects.exclude(state=Probe.State.SUPERSEDED).select_related("parent", "parent__source")
    by_parent: dict[int, list[Probe]] = {}
    for probe in live:
        by_parent.setdefault(probe.parent_id, []).append(probe)
    members = [_member_input(probes) for probes in by_parent.values()]
    assigned = assign_splits(members, seed=seed, development_count=development_count)
    counts: dict[str, int] = {}
    for member in assigned:
        Membership.objects.update_or_create(
            parent_id=member.parent_pk,
            defaults={
                "source_identity": member.source_identity,
                "content_group_hint": member.content_group_hint,
                "dedup_group": member.dedup_group,
                "representative_id": member.representative_id,
                "dedup_state": member.dedup_state,
                "split": member.split,
                "tags": sorted(member.tags),
            },
        )
        Probe.objects.filter(parent_id=member.parent_pk).exclude(state=Probe.State.SUPERSEDED).update(
            split=member.split
        )
        counts["split_" + member.split] = counts.get("split_" + member.split, 0) + 1
    return counts


def _member_input(probes: list[Probe]) -> MemberInput:
    parent = probes[0].parent
    tags = set()
    for probe in probes:
        meta = probe.metadata
        tags.update(
            {
                ("interface", probe.interface),
                ("language", probe.language),
                ("namespace", parent.source.name),
                ("representation", meta.get("representation_kind", "")),
                ("public_text", meta.get("public_text_availability", "")),
                ("images", "multi" if meta.get("image_count", 1) > 1 else "single"),
                ("repair", str(bool(meta.get("repair_applied_to_query")))),
            }
        )
    identity = digest([parent.source.name, parent.source_split, parent.source_sample_id])
    return MemberInput(
        parent_pk=parent.pk,
        problem_id=parent.problem_id,
        source_identity=identity,
        content_group_hint=probes[0].content_group_hint,
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
