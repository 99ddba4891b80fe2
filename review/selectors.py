"""Reads for review: live probes, a slot's work, decisions per probe, outcomes, audit findings, queue summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from probes.models import Probe

from . import audit_stats
from .models import AuditPlan, BlindAnswer, ReviewDecision, ReviewSlot, Role

DEVELOPMENT = "development"


def live_probes() -> QuerySet[Probe]:
    return Probe.objects.exclude(state=Probe.State.SUPERSEDED)


def probe_decisions(probe: Probe, context: str, *, root: str | None = None) -> dict[str, ReviewDecision]:
    """Fresh decisions (bound to the probe's current root, or ``root``) of this context, by role."""
    rows = (ReviewDecision.objects.filter(probe=probe, slot__context=context,
                                          review_target_root=root or probe.review_target_root)
            .select_related("blind"))
    return {row.role: row for row in rows}


@dataclass(frozen=True)
class Outcome:
    state: str  # pending | adjudication | approved | rejected
    packet_state: str = ""
    empty_reason: str = ""


def _final(decision: ReviewDecision) -> Outcome:
    if decision.status == "approved":
        return Outcome("approved", decision.packet_state, decision.packet_empty_reason)
    return Outcome("rejected", "rejected")


def finding_of(decision: ReviewDecision) -> audit_stats.Finding:
    return audit_stats.Finding(str(decision.reviewer_id), decision.status, decision.severity, decision.sequence)


def probe_outcome(probe: Probe, context: str, *, ignore_resolution: bool = False) -> Outcome:
    """The final decision for the probe's current root in this context (Kit §6.5, paper §3.2).

    Development: direct approval only when both blind answers match the target and both reviewers approve
    with all confirmations and the same packet decision; matching rejections stand; anything else goes to an
    adjudicator. Audit: the kit's rule, a (status, severity) disagreement or ``unresolved`` is adjudicated.
    """
    decisions = probe_decisions(probe, context)
    resolution = decisions.get(Role.ADJUDICATOR)
    if resolution is not None and not ignore_resolution:
        return _final(resolution)
    a, b = decisions.get(Role.PRIMARY), decisions.get(Role.SECONDARY)
    if context != DEVELOPMENT:
        if a is None:
            return Outcome("pending")
        if audit_stats.needs_adjudication(finding_of(a), finding_of(b) if b else None):
            return Outcome("adjudication")
        return _final(a)
    if a is None or b is None:
        return Outcome("pending")
    if (a.status == b.status == "approved" and a.all_confirmed and b.all_confirmed and a.blind.matches_target
            and b.blind.matches_target and a.packet_state == b.packet_state):
        return _final(a)
    if a.status == b.status == "rejected" and a.severity == b.severity and a.severity != "unresolved":
        return _final(a)
    return Outcome("adjudication")


def slot_work(slot: ReviewSlot, *, include_done: bool = False) -> list[Probe]:
    """The slot's probes, in order: the blind-first probe, then by id. Without ``include_done``, only those
    still lacking this slot's decision on the current root. An adjudicator only gets disputed probes."""
    probes = list(live_probes().filter(parent_id=slot.parent_id).select_related("parent", "key")
                  .order_by("logical_probe_id"))
    if slot.context != DEVELOPMENT:
        plan = AuditPlan.objects.filter(pk=slot.context.split(":", 1)[1]).first()
        probes = [p for p in probes if plan is not None and p.logical_probe_id in plan.target_roots]
    if slot.role == Role.ADJUDICATOR:
        probes = [p for p in probes if probe_outcome(p, slot.context, ignore_resolution=True).state == "adjudication"]
    probes.sort(key=lambda p: (p.logical_probe_id != slot.blind_first_probe_id, p.logical_probe_id))
    if include_done:
        return probes
    done = set(ReviewDecision.objects.filter(slot=slot).values_list("probe_id", "review_target_root"))
    return [p for p in probes if (p.pk, p.review_target_root) not in done]


@dataclass(frozen=True)
class WorkRow:
    probe: Probe
    blind: BlindAnswer | None
    decision: ReviewDecision | None
    stale_decisions: int
    blind_first: bool


def slot_rows(slot: ReviewSlot) -> list[WorkRow]:
    probes = slot_work(slot, include_done=True)
    blinds = {(b.probe_id, b.review_target_root): b for b in BlindAnswer.objects.filter(slot=slot)}
    decisions = {(d.probe_id, d.review_target_root): d for d in ReviewDecision.objects.filter(slot=slot)}
    rows = []
    for probe in probes:
        key = (probe.pk, probe.review_target_root)
        stale = sum(1 for (pid, root) in decisions if pid == probe.pk and root != probe.review_target_root)
        rows.append(WorkRow(probe, blinds.get(key), decisions.get(key), stale,
                            probe.logical_probe_id == slot.blind_first_probe_id))
    return rows


def my_slots(reviewer: Any) -> list[dict[str, Any]]:
    rows = []
    for slot in ReviewSlot.objects.filter(reviewer=reviewer).select_related("parent").order_by("-claimed_at"):
        total = len(slot_work(slot, include_done=True))
        remaining = len(slot_work(slot))
        rows.append({"slot": slot, "total": total, "remaining": remaining})
    return rows


def open_contexts() -> list[tuple[str, str]]:
    """(context, label) pairs a reviewer may take work from: development, then each audit plan."""
    contexts = [(DEVELOPMENT, "Development review")]
    for plan in AuditPlan.objects.select_related("campaign").order_by("-pk")[:10]:
        if not plan.assessments.filter(accepted=True).exists():
            contexts.append((plan.context, f"Audit {plan.campaign.campaign_id[:12]}… round {plan.round_number}"))
    return contexts


def unclaimed_counts() -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for context, role in ReviewSlot.objects.filter(reviewer__isnull=True).values_list("context", "role"):
        counts[(context, role)] = counts.get((context, role), 0) + 1
    return counts


def development_parents_state() -> dict[str, Any]:
    """Development parents: which are fully approved, which are incomplete, which carry a blocking finding."""
    probes = list(live_probes().filter(split=Probe.Split.DEVELOPMENT).select_related("parent"))
    by_parent: dict[str, list[Probe]] = {}
    for probe in probes:
        by_parent.setdefault(probe.parent.problem_id, []).append(probe)
    approved = sorted(pid for pid, ps in by_parent.items() if all(p.state == Probe.State.APPROVED for p in ps))
    blocking = sorted({d.probe.logical_probe_id for d in ReviewDecision.objects.filter(
        slot__context=DEVELOPMENT, severity__in=["systemic", "information"], probe__in=probes).select_related("probe")
        if d.review_target_root == d.probe.review_target_root})
    roots = {p.logical_probe_id: p.review_target_root for pid in approved for p in by_parent[pid]}
    return {"parents": sorted(by_parent), "approved_parents": approved,
            "incomplete": sorted(set(by_parent) - set(approved)), "blocking": blocking, "roots": roots}


def plan_findings(plan: AuditPlan) -> dict[str, Any]:
    """The plan's findings on the roots it audited, as the pure assessment wants them."""
    audited = set(plan.sample) | set(plan.risk)
    probes = (Probe.objects.filter(logical_probe_id__in=list(plan.target_roots)).select_related("parent")
              .order_by("logical_probe_id"))
    probes_by_parent: dict[str, list[str]] = {pid: [] for pid in audited}
    for probe in probes:
        probes_by_parent.setdefault(probe.parent.problem_id, []).append(probe.logical_probe_id)
    slots: dict[str, dict[str, audit_stats.Finding]] = {Role.PRIMARY: {}, Role.SECONDARY: {}, Role.ADJUDICATOR: {}}
    for decision in ReviewDecision.objects.filter(slot__context=plan.context).select_related("probe"):
        qid = decision.probe.logical_probe_id
        if plan.target_roots.get(qid) == decision.review_target_root:
            slots[decision.role][qid] = finding_of(decision)
    return {"probes_by_parent": probes_by_parent, "primary": slots[Role.PRIMARY],
            "secondary": slots[Role.SECONDARY], "resolutions": slots[Role.ADJUDICATOR]}
