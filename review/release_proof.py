"""The review evidence a release carries (Kit §7): a signoff's decisions, audit plan and result, as plain data.

:func:`release_authorization` reads what a :class:`~review.models.Signoff` covers and hands it to
:func:`probes.releases.release_export`, which writes it as ``private/request/review_proof.PRIVATE.json`` (a
``native_review_receipt_v1`` for individual review, a ``native_audit_assessment_v1`` for an audit) and
``private/signoff.json``. Each role's decisions on the current roots are the evidence; the final decision of a
probe is the adjudicator's, else the primary's (the rule of :func:`review.selectors.probe_outcome`).
"""

from __future__ import annotations

import json
from typing import Any

from probes.release_layout import FINAL_ROLES, ReleaseAuthorization

from .models import (
    CONFIRMATION_KEYS,
    SIGNOFF_KEYS,
    AuditAssessment,
    BlindAnswer,
    KitDecision,
    ReviewDecision,
    Role,
    Signoff,
)
from .selectors import live_probes

DOCUMENT_ROLE: dict[str, str] = {
    Role.INDIVIDUAL: "individual",
    Role.PRIMARY: "primary",
    Role.SECONDARY: "secondary",
    Role.ADJUDICATOR: "adjudication",
}


def blind_text(blind: BlindAnswer) -> str:
    """The reviewer's first answer as the Kit's free-text ``blind_answer``."""
    if blind.cannot_answer:
        return f"cannot be answered uniquely: {blind.reason}".strip()
    return json.dumps(blind.answer, ensure_ascii=False, sort_keys=True)


def decision_record(decision: ReviewDecision) -> dict[str, Any]:
    """One decision in the Kit's ``native_release_reviews_v1`` decision shape."""
    return {
        "logical_probe_id": decision.probe.logical_probe_id,
        "review_target_root": decision.review_target_root,
        "status": decision.status,
        "reviewer": decision.reviewer.get_username(),
        "blind_answer": blind_text(decision.blind),
        "confirmations": {k: decision.confirmations.get(k) is True for k in CONFIRMATION_KEYS},
        "note": decision.note,
        "severity": decision.severity,
        "sequence": decision.sequence,
    }


def kit_decision_record(decision: KitDecision) -> dict[str, Any]:
    """An imported Kit decision in the same shape: our probe's root (the one it was bound to), the Kit
    reviewer's name as the file wrote it, the blind answer as the file's text."""
    return {
        "logical_probe_id": decision.probe.logical_probe_id,
        "review_target_root": decision.review_target_root,
        "status": decision.status,
        "reviewer": decision.kit_reviewer,
        "blind_answer": decision.blind_answer,
        "confirmations": {k: decision.confirmations.get(k) is True for k in CONFIRMATION_KEYS},
        "note": decision.note,
        "severity": decision.severity,
        "sequence": decision.sequence,
    }


def _audit_assessment(signoff: Signoff) -> AuditAssessment:
    assessment = signoff.assessment
    assert assessment is not None  # an audit signoff has one (audit_signoff_needs_assessment)
    return assessment


def release_authorization(signoff: Signoff) -> ReleaseAuthorization:
    probes = {p.pk: p for p in live_probes().filter(parent__problem_id__in=signoff.problem_ids)}
    audit = signoff.mode == Signoff.Mode.AUDIT
    context = _audit_assessment(signoff).plan.context if audit else "development"
    rows = (
        ReviewDecision.objects.filter(slot__context=context, probe_id__in=list(probes))
        .select_related("probe", "blind", "reviewer")
        .order_by("probe__logical_probe_id", "role")
    )
    documents: dict[str, list[dict[str, Any]]] = {}
    by_probe: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        if row.review_target_root != probes[row.probe_id].review_target_root:
            continue  # stale: the probe changed since
        role = DOCUMENT_ROLE[row.role]
        record = decision_record(row)
        documents.setdefault(role, []).append(record)
        by_probe.setdefault(record["logical_probe_id"], {})[role] = record
    if not audit:
        # Individual (development) review may come from a Kit team: an imported decision on the current root
        # counts like an in-app one; a probe reviewed here keeps the in-app decision.
        for kit in (
            KitDecision.objects.filter(role=Role.INDIVIDUAL, probe_id__in=list(probes))
            .select_related("probe")
            .order_by("probe__logical_probe_id", "created_at")
        ):
            qid = kit.probe.logical_probe_id
            if kit.review_target_root != probes[
                kit.probe_id
            ].review_target_root or "individual" in by_probe.get(qid, {}):
                continue
            record = kit_decision_record(kit)
            documents.setdefault("individual", []).append(record)
            by_probe.setdefault(qid, {})["individual"] = record
    decisions = {
        qid: next(roles[r] for r in FINAL_ROLES if r in roles)
        for qid, roles in by_probe.items()
        if any(r in roles for r in FINAL_ROLES)
    }
    plan = result = None
    if audit:
        assessment = _audit_assessment(signoff)
        audit_plan = assessment.plan
        plan = {
            "audit_id": audit_plan.context,
            "campaign_id": audit_plan.campaign.campaign_id,
            "round_number": audit_plan.round_number,
            "seed": audit_plan.seed,
            "candidate_mothers": audit_plan.candidates,
            "sample_mothers": audit_plan.sample,
            "secondary_mothers": audit_plan.secondary,
            "risk_mothers": audit_plan.risk,
            "uncovered_risk_tags": audit_plan.uncovered_risk_tags,
            "blind_first": audit_plan.blind_first,
        }
        result = {
            **assessment.result,
            "accepted": assessment.accepted,
            "result_root": assessment.result_root,
            "retained_mothers": assessment.result["retained_parents"],
        }
    return ReleaseAuthorization(
        mode="batch" if audit else "individual",
        decisions=decisions,
        documents=documents,
        review_state_root=signoff.target_root,
        plan=plan,
        result=result,
        signoff={
            "reviewer": signoff.reviewer.get_username(),
            "evidence_ref": signoff.evidence_ref,
            "confirmations": {k: signoff.confirmations.get(k) is True for k in SIGNOFF_KEYS},
        },
    )
