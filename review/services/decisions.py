"""Review decisions (status, severity, the six confirmations) and settling a probe's outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from audit.services import event_record
from physalign_site.errors import ApplicationError
from probes.models import Probe
from probes.services import probe_record_review

from ..models import (
    CONFIRMATION_KEYS,
    AuditPlan,
    BlindAnswer,
    ReviewDecision,
    ReviewSlot,
    Role,
    Severity,
)
from ..selectors import (
    Outcome,
    blind_progress,
    probe_outcome,
    slot_work,
)
from .batch_audit import audit_sync_slots
from .slots import DEFECT, DEVELOPMENT, EMPTY_REASONS, independent, own_slot


@dataclass(frozen=True)
class DecisionIn:
    status: str
    severity: str
    confirmations: dict[str, bool]
    packet_state: str
    packet_empty_reason: str = ""
    note: str = ""


def _validate_decision(probe: Probe, given: DecisionIn) -> None:
    if given.status not in ReviewDecision.Status.values or given.severity not in Severity.values:
        raise ApplicationError("Choose approve or reject and a severity.", code="DECISION_INVALID")
    confirmed = all(given.confirmations.get(key) is True for key in CONFIRMATION_KEYS)
    if given.status == "approved":
        if not confirmed:
            raise ApplicationError(
                "Approval needs all six confirmations.",
                code="CONFIRMATIONS_INCOMPLETE",
                extra={"missing": [k for k in CONFIRMATION_KEYS if given.confirmations.get(k) is not True]},
            )
        if given.severity not in ("none", "minor"):
            raise ApplicationError("Approval needs severity none or minor.", code="SEVERITY_BLOCKS_APPROVAL")
    else:
        if given.severity not in DEFECT:
            raise ApplicationError(
                "Rejection needs severity serious, systemic, information or unresolved.",
                code="REJECTION_NEEDS_SEVERITY",
            )
        if not given.note.strip():
            raise ApplicationError(
                "Rejection needs a note with the specific reason.", code="REJECTION_NEEDS_NOTE"
            )
    ids = probe.key.view.observation_ids
    allowed = {"approved_nonempty", "rejected"} if ids else {"approved_empty", "rejected"}
    if given.packet_state not in allowed:
        raise ApplicationError(
            "This packet decision does not fit the packet's content.",
            code="PACKET_STATE_CONTENT_MISMATCH",
            extra={"allowed": sorted(allowed)},
        )
    if given.packet_state == "approved_empty" and given.packet_empty_reason not in EMPTY_REASONS:
        raise ApplicationError(
            "An approved empty packet needs a reason.",
            code="PACKET_EMPTY_REASON_REQUIRED",
            extra={"allowed": list(EMPTY_REASONS)},
        )


@transaction.atomic
def review_decide(*, slot: ReviewSlot, probe: Probe, reviewer: Any, given: DecisionIn) -> ReviewDecision:
    """Record a decision on the probe's current content. Needs this reviewer's fresh blind answer."""
    slot = ReviewSlot.objects.select_for_update().get(pk=slot.pk)
    own_slot(slot, reviewer)
    independent(slot, reviewer)
    gate = blind_progress(slot).reveal_gate(probe)
    if not gate.allowed:  # a decision is made on the revealed target: the same gate as the reveal
        raise ApplicationError(gate.message, code=gate.code, status=403)
    blind = BlindAnswer.objects.get(slot=slot, probe=probe, review_target_root=probe.review_target_root)
    if ReviewDecision.objects.filter(
        slot=slot, probe=probe, review_target_root=probe.review_target_root
    ).exists():
        raise ApplicationError("You already decided this probe.", code="DECISION_EXISTS", status=409)
    if slot.role == Role.ADJUDICATOR and probe.logical_probe_id not in {
        p.logical_probe_id for p in slot_work(slot, include_done=True)
    }:
        raise ApplicationError(
            "A resolution is only allowed on a disputed probe.", code="UNNECESSARY_RESOLUTION_NOT_ALLOWED"
        )
    _validate_decision(probe, given)
    decision = ReviewDecision.objects.create(
        slot=slot,
        probe=probe,
        blind=blind,
        reviewer=reviewer,
        role=slot.role,
        review_target_root=probe.review_target_root,
        status=given.status,
        severity=given.severity,
        confirmations={k: given.confirmations.get(k) is True for k in CONFIRMATION_KEYS},
        packet_state=given.packet_state,
        packet_empty_reason=given.packet_empty_reason if given.packet_state == "approved_empty" else "",
        note=given.note.strip(),
        sequence=blind.sequence,
    )
    event_record(
        actor=reviewer,
        verb="review.decision",
        obj=decision,
        after={"probe": probe.logical_probe_id, "status": given.status, "severity": given.severity},
    )
    review_settle(probe=probe, context=slot.context, actor=reviewer)
    return decision


# Settling a probe: direct approval, adjudication, hand-off to the probe -----------------------------------------
def review_settle(*, probe: Probe, context: str, actor: Any) -> Outcome:
    """Apply the outcome: open an adjudicator slot for a dispute, or record approval/rejection on the probe
    (bound to the root that was reviewed; a stale root is refused by the probe service)."""
    outcome = probe_outcome(probe, context)
    if outcome.state == "adjudication":
        ReviewSlot.objects.get_or_create(
            parent_id=probe.parent_id,
            role=Role.ADJUDICATOR,
            context=context,
            defaults={"blind_first_probe_id": probe.logical_probe_id},
        )
    elif outcome.state in ("approved", "rejected") and context == DEVELOPMENT:
        probe_record_review(
            probe=probe,
            actor=actor,
            state=outcome.state,
            packet_state=outcome.packet_state,
            review_target_root=probe.review_target_root,
            empty_reason=outcome.empty_reason or None,
        )
    elif outcome.state in ("approved", "rejected"):
        plan = AuditPlan.objects.get(pk=context.split(":", 1)[1])
        audit_sync_slots(plan=plan)
    return outcome
