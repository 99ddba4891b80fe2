"""Batch audit (§4.3): campaigns, sampled plans in rounds, and the hypergeometric assessment."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from django.db import transaction

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from probes.models import Probe
from probes.services import probe_record_review

from .. import audit_stats
from ..models import (
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    ReviewSlot,
    Role,
)
from ..selectors import (
    development_parents_state,
    live_probes,
    plan_findings,
    probe_outcome,
)

# Batch audit -------------------------------------------------------------------------------------------------
POLICY = {
    "policy_id": audit_stats.POLICY_ID,
    "primary_sample_max": audit_stats.PRIMARY_SAMPLE_MAX,
    "secondary_sample_max": audit_stats.SECONDARY_SAMPLE_MAX,
    "risk_budget": audit_stats.RISK_BUDGET,
    "max_rounds": audit_stats.MAX_ROUNDS,
    "alpha": "1/40",
    "threshold": "1/20",
    "unit": "parent_with_at_least_one_serious_defect",
    "sampling": "simple_random_without_replacement",
}


@transaction.atomic
def audit_campaign_create(*, actor: Any, nonce: str | None = None) -> AuditCampaign:
    """A campaign with a fresh random 32-byte nonce (one per data batch; never re-initialized to re-roll)."""
    nonce = nonce or secrets.token_hex(32)
    campaign_id = "NAC-" + digest({"nonce": nonce, "policy": POLICY})
    campaign = AuditCampaign.objects.create(
        campaign_id=campaign_id,
        nonce=nonce,
        policy=POLICY,
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    event_record(actor=actor, verb="audit.campaign_create", obj=campaign, after={"campaign_id": campaign_id})
    return campaign


def _candidate_parents() -> dict[str, list[Mapping[str, Any]]]:
    parents: dict[str, list[Mapping[str, Any]]] = {}
    for probe in live_probes().filter(split=Probe.Split.UNASSIGNED).select_related("parent"):
        parents.setdefault(probe.parent.problem_id, []).append(
            {
                "logical_probe_id": probe.logical_probe_id,
                "interface": probe.interface,
                "language": probe.language,
                "metadata": probe.metadata,
                "root": probe.review_target_root,
            }
        )
    return parents


@transaction.atomic
def audit_plan_create(*, campaign: AuditCampaign, actor: Any) -> AuditPlan:
    """Draw the next round's plan and open its primary and secondary slots.

    Needs every development parent fully approved with no systemic, information or unresolved finding. Round 2
    only follows a failed, complete round 1 and only for a new version: every flagged parent must have changed.
    """
    dev = development_parents_state()
    if not dev["parents"] or dev["incomplete"] or dev["blocking"]:
        raise ApplicationError(
            "Every development parent must be fully approved first.",
            code="DEVELOPMENT_REVIEW_INCOMPLETE",
            extra={"incomplete": dev["incomplete"][:50], "blocking": dev["blocking"][:50]},
        )
    previous = list(AuditPlan.objects.select_for_update().filter(campaign=campaign).order_by("round_number"))
    round_number = len(previous) + 1
    if round_number > audit_stats.MAX_ROUNDS:
        raise ApplicationError("There is no third audit round.", code="AUDIT_ROUND_LIMIT")
    parents = _candidate_parents()
    if not parents:
        raise ApplicationError("No candidate parents to audit.", code="AUDIT_EMPTY")
    roots = {p["logical_probe_id"]: p["root"] for probes in parents.values() for p in probes}
    catalog_root = digest(roots)
    if previous:
        _check_round_two(previous[-1], roots, catalog_root)
    sample = audit_stats.draw_sample(nonce=campaign.nonce, round_number=round_number, parents=parents)
    audited = set(sample.sample) | set(sample.risk)
    plan = AuditPlan.objects.create(
        campaign=campaign,
        round_number=round_number,
        seed=sample.seed,
        candidates=sample.candidates,
        sample=sample.sample,
        secondary=sample.secondary,
        risk=sample.risk,
        uncovered_risk_tags=sample.uncovered_risk_tags,
        blind_first=sample.blind_first,
        target_roots={
            q: r
            for q, r in roots.items()
            if any(q == p["logical_probe_id"] for pid in audited for p in parents[pid])
        },
        catalog_root=catalog_root,
    )
    by_id = dict(ParentProblem.objects.filter(problem_id__in=audited).values_list("problem_id", "pk"))
    rows = [
        ReviewSlot(
            parent_id=by_id[pid],
            role=Role.PRIMARY,
            context=plan.context,
            blind_first_probe_id=sample.blind_first[pid],
        )
        for pid in sorted(audited)
    ]
    rows += [
        ReviewSlot(
            parent_id=by_id[pid],
            role=Role.SECONDARY,
            context=plan.context,
            blind_first_probe_id=sample.blind_first[pid],
        )
        for pid in sample.secondary
    ]
    ReviewSlot.objects.bulk_create(rows)
    event_record(
        actor=actor,
        verb="audit.plan_create",
        obj=plan,
        after={"round": round_number, "sample": len(sample.sample), "risk": len(sample.risk)},
    )
    return plan


def _check_round_two(first: AuditPlan, roots: dict[str, str], catalog_root: str) -> None:
    """Round 2: only after a failed, complete round 1, for a new version in which every flagged parent
    is gone or changed (Kit §7 new-version rule)."""
    last = first.assessments.first()
    if last is None or last.accepted or not last.complete:
        raise ApplicationError(
            "Round 2 only follows a failed, complete round 1.", code="AUDIT_ROUND2_NOT_ALLOWED"
        )
    if catalog_root == first.catalog_root:
        raise ApplicationError(
            "Round 2 needs a new version of the candidates.", code="AUDIT_ROUND2_SAME_VERSION"
        )
    flagged = set(last.result.get("flagged_parents", [])) | {
        p.parent.problem_id
        for p in Probe.objects.filter(
            logical_probe_id__in=last.result.get("systemic_probe_ids", [])
        ).select_related("parent")
    }
    unchanged = sorted(
        q
        for q, pid in Probe.objects.filter(
            logical_probe_id__in=list(first.target_roots), parent__problem_id__in=flagged
        ).values_list("logical_probe_id", "parent__problem_id")
        if roots.get(q) == first.target_roots[q]
    )
    if unchanged:
        raise ApplicationError(
            "Flagged parents must be fixed (changed) or removed before round 2.",
            code="AUDIT_ROUND2_UNMODIFIED_CANDIDATE",
            extra={"probes": unchanged[:50]},
        )


def audit_sync_slots(*, plan: AuditPlan) -> None:
    """Open secondary slots the rules now require (flagged parents, escalation) and adjudicator slots."""
    result = audit_assess_compute(plan)
    by_id = dict(
        ParentProblem.objects.filter(problem_id__in=result.required_secondary_parents).values_list(
            "problem_id", "pk"
        )
    )
    for pid, pk in by_id.items():
        ReviewSlot.objects.get_or_create(
            parent_id=pk,
            role=Role.SECONDARY,
            context=plan.context,
            defaults={"blind_first_probe_id": plan.blind_first[pid]},
        )


def audit_assess_compute(plan: AuditPlan) -> audit_stats.Assessment:
    findings = plan_findings(plan)
    return audit_stats.assess(
        candidates=plan.candidates,
        sample=plan.sample,
        secondary_parents=plan.secondary,
        risk=plan.risk,
        uncovered_risk_tags=plan.uncovered_risk_tags,
        blind_first=plan.blind_first,
        probes_by_parent=findings["probes_by_parent"],
        primary=findings["primary"],
        secondary=findings["secondary"],
        resolutions=findings["resolutions"],
    )


@transaction.atomic
def audit_assess(*, plan: AuditPlan, actor: Any) -> AuditAssessment:
    """Compute and store the assessment; an accepted one records every audited probe's final decision."""
    if any(
        Probe.objects.filter(logical_probe_id=q).exclude(review_target_root=r).exists()
        for q, r in plan.target_roots.items()
    ):
        raise ApplicationError(
            "Audited probes changed since the plan was drawn.", code="AUDIT_STALE", status=409
        )
    result = audit_assess_compute(plan)
    data = result.as_dict()
    flagged = sorted(
        {
            probe.parent.problem_id
            for probe in Probe.objects.filter(
                review_decisions__slot__context=plan.context, review_decisions__status="rejected"
            ).select_related("parent")
        }
    )
    data.update(
        plan_id=plan.pk,
        round=plan.round_number,
        campaign_id=plan.campaign.campaign_id,
        flagged_parents=flagged,
    )
    assessment = AuditAssessment.objects.create(
        plan=plan,
        accepted=result.accepted,
        complete=audit_stats.review_complete(result),
        result=data,
        result_root=digest(data),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    if result.accepted:
        for probe in live_probes().filter(logical_probe_id__in=list(plan.target_roots)):
            outcome = probe_outcome(probe, plan.context)
            if outcome.state in ("approved", "rejected"):
                probe_record_review(
                    probe=probe,
                    actor=actor,
                    state=outcome.state,
                    packet_state=outcome.packet_state,
                    review_target_root=plan.target_roots[probe.logical_probe_id],
                    empty_reason=outcome.empty_reason or None,
                )
    event_record(
        actor=actor,
        verb="audit.assess",
        obj=assessment,
        after={"accepted": result.accepted, "blockers": result.blockers},
    )
    return assessment
