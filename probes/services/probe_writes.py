"""Saving a compile's output: probes upserted by logical id, their keys and views, superseded probes, issues."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from django.utils import timezone

from annotation.models import ParentProblem
from probes.compiler import BlockedGroup, CompileError, ParentResult

from ..attachments import view_store
from ..models import CompileIssue, CompileRun, Probe, ProbeKey, RenderedView

# one parent's compile: its result, or the error that kept it from compiling
ParentOutput = tuple[ParentProblem, ParentResult | None, CompileError | None]


class _Holder(NamedTuple):
    parent_pk: int
    problem_id: str
    review_target_root: str


def probes_persist(
    *, run: CompileRun, outputs: list[ParentOutput], timings: dict[str, float] | None = None
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
