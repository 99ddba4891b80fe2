"""Every write of the review app: slots and the queue, blind answers, decisions, settling a probe's outcome,
audit campaigns/plans/assessments, signoff and the gated release export."""

from __future__ import annotations

import secrets
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from annotation.importers import extract_zip
from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import bytes_digest, digest, parse_json
from physalign_site.errors import ApplicationError
from physalign_site.roles import ADJUDICATOR, PROBE_REVIEWER, has_role
from probes.models import Probe, Release
from probes.releases import parent_is_synthetic, release_export
from probes.services import probe_record_review

from . import audit_stats
from .kit_decisions import (
    KitDraft,
    KitFileError,
    OurProbe,
    differences,
    load_draft,
    normalize_decisions,
    same_bytes,
    verified_roots,
)
from .models import (
    CONFIRMATION_KEYS,
    SIGNOFF_KEYS,
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    BlindAnswer,
    BlindOrder,
    KitDecision,
    KitDraftImport,
    KitProbeBinding,
    ReviewContextSetting,
    ReviewDecision,
    ReviewSlot,
    Role,
    Severity,
    Signoff,
)
from .permissions import can_manage_audit, is_key_holder
from .release_proof import release_authorization
from .selectors import (
    Outcome,
    blind_progress,
    development_parents_state,
    live_probes,
    plan_findings,
    probe_outcome,
    slot_work,
)

DEVELOPMENT = "development"
EMPTY_REASONS = ("no_independent_readable_primitive", "only_unsafe_binding_statement", "family_policy_no_packet")
DEFECT = ("serious", "systemic", "information", "unresolved")


# Blind answers: the task's contract -------------------------------------------------------------------------
@dataclass(frozen=True)
class BlindAnswerIn:
    binding: list[str]
    read: dict[str, str]
    cannot_answer: bool = False
    reason: str = ""


def contract_of(probe: Probe) -> dict[str, Any]:
    """The public answer contract (binding key, cardinality, read anchors) plus the public candidate aliases."""
    private = probe.key.view
    return {**private.response_contract, "aliases": private.aliases}


def _normalize_blind(probe: Probe, given: BlindAnswerIn) -> dict[str, Any] | None:
    if given.cannot_answer:
        if not given.reason.strip():
            raise ApplicationError("Say why the question cannot be answered uniquely.", code="REASON_REQUIRED")
        return None
    contract = contract_of(probe)
    aliases = sorted({a.strip().upper() for a in given.binding if a.strip()})
    unknown = [a for a in aliases if a not in contract["aliases"]]
    if not aliases or unknown:
        raise ApplicationError("Answer with candidate IDs shown in the prompt (E1, E2, …).", code="BLIND_ALIAS_INVALID",
                               extra={"unknown": unknown, "allowed": contract["aliases"]})
    if contract["cardinality"] == "one" and len(aliases) != 1:
        raise ApplicationError("This question takes a single candidate ID.", code="BLIND_CARDINALITY")
    reads = {anchor: str(given.read.get(anchor, "")) for anchor in contract["read_anchor_ids"]}
    if any(not value.strip() for value in reads.values()):
        raise ApplicationError("Transcribe every read anchor.", code="BLIND_READ_MISSING",
                               extra={"anchors": contract["read_anchor_ids"]})
    answer: dict[str, Any] = {contract["binding_key"]: aliases}
    if reads:
        answer["read"] = reads
    return answer


def blind_matches_target(probe: Probe, answer: dict[str, Any] | None) -> bool:
    """Binding aliases equal the gold aliases, and each read equals the expected text (surrounding spaces
    ignored; a read is a faithful transcription, so nothing else is normalized)."""
    if answer is None:
        return False
    key = probe.key.view
    binding = answer.get(key.binding_key, [])
    if sorted(binding) != probe.key.gold_aliases:
        return False
    expected = {r["anchor_alias"]: r["expected"] for r in key.read_targets}
    given = answer.get("read", {})
    return all(given.get(anchor, "").strip() == text.strip() for anchor, text in expected.items())


def blind_label(blind: BlindAnswer) -> str:
    """A comparable label for agreement statistics."""
    return "cannot_answer" if blind.cannot_answer else digest(blind.answer)


# Slots and the queue -------------------------------------------------------------------------------------------
def blind_first_probe(seed: str, probe_ids: list[str]) -> str:
    return min(probe_ids, key=lambda qid: digest([seed, "blind-first", qid]))


def review_slots_ensure_development() -> int:
    """Primary and secondary slots for every development parent with live probes (two independent reviewers)."""
    created = 0
    parents: dict[int, list[str]] = {}
    for parent_id, qid in (live_probes().filter(split=Probe.Split.DEVELOPMENT)
                           .values_list("parent_id", "logical_probe_id")):
        parents.setdefault(parent_id, []).append(qid)
    existing = set(ReviewSlot.objects.filter(context=DEVELOPMENT).values_list("parent_id", "role"))
    rows = []
    for parent_id, qids in parents.items():
        problem_id = ParentProblem.objects.values_list("problem_id", flat=True).get(pk=parent_id)
        first = blind_first_probe(digest(["development_review", problem_id]), sorted(qids))
        for role in (Role.PRIMARY, Role.SECONDARY):
            if (parent_id, role) not in existing:
                rows.append(ReviewSlot(parent_id=parent_id, role=role, context=DEVELOPMENT, blind_first_probe_id=first))
    if rows:
        created = len(ReviewSlot.objects.bulk_create(rows, ignore_conflicts=True))
    return created


def _role_allowed(user: Any, role: str) -> bool:
    return has_role(user, ADJUDICATOR) if role == Role.ADJUDICATOR else has_role(user, PROBE_REVIEWER)


def _other_reviewers(slot: ReviewSlot) -> set[int]:
    return set(ReviewSlot.objects.filter(parent_id=slot.parent_id, context=slot.context)
               .exclude(pk=slot.pk).exclude(reviewer=None).values_list("reviewer_id", flat=True))


def _known_context(context: str) -> bool:
    if context == DEVELOPMENT:
        return True
    plan_id = context.split(":", 1)[1] if context.startswith("audit:") else ""
    return plan_id.isascii() and plan_id.isdigit() and AuditPlan.objects.filter(pk=int(plan_id)).exists()


def _refuse_key_holder(reviewer: Any) -> None:
    if is_key_holder(reviewer):
        raise ApplicationError("You can read every probe key (the scorer permission), so your review could not be "
                               "blind. Ask an admin to remove that permission, or leave this work to another "
                               "reviewer.", code="KEY_HOLDER_CANNOT_REVIEW", status=403)


@transaction.atomic
def review_claim(*, reviewer: Any, role: str, context: str) -> ReviewSlot:
    """Hand the reviewer the next unclaimed parent in this role and context.

    One reviewer's claims run one at a time (their user row is locked), so they never hold two roles on one
    parent (also a database constraint). Candidates are locked one at a time with ``SELECT … FOR UPDATE SKIP
    LOCKED LIMIT 1``: two reviewers asking at the same moment get different parents, and neither is told the
    queue is empty while a slot waits.
    """
    if role not in Role.values or not _role_allowed(reviewer, role):
        raise ApplicationError("You do not hold this review role.", code="ROLE_REQUIRED", status=403)
    _refuse_key_holder(reviewer)
    if not _known_context(context):
        raise ApplicationError("Unknown review context.", code="CONTEXT_UNKNOWN", status=404)
    if context == DEVELOPMENT:
        review_slots_ensure_development()
    get_user_model().objects.select_for_update().filter(pk=reviewer.pk).exists()
    held = list(ReviewSlot.objects.filter(context=context, reviewer=reviewer).values_list("parent_id", flat=True))
    passed_over: list[int] = []
    while True:
        slot = (ReviewSlot.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(context=context, role=role, reviewer__isnull=True).exclude(parent_id__in=held)
                .exclude(pk__in=passed_over).order_by("parent__problem_id", "pk").first())
        if slot is None:
            raise ApplicationError("No parent is waiting for this role.", code="QUEUE_EMPTY", status=404)
        if not slot_work(slot):
            passed_over.append(slot.pk)
            continue
        slot.reviewer, slot.claimed_at = reviewer, timezone.now()
        try:
            with transaction.atomic():
                slot.save(update_fields=["reviewer", "claimed_at"])
        except IntegrityError:  # a claim outside this service got there first: keep looking
            held.append(slot.parent_id)
            continue
        event_record(actor=reviewer, verb="review.claim", obj=slot, after={"role": role, "context": context})
        return slot


@transaction.atomic
def review_release(*, slot: ReviewSlot, reviewer: Any) -> ReviewSlot:
    """Give a claimed slot back to the queue, as long as its reviewer has not answered any of it blind (a
    blind answer is part of the record and binds the slot to its reviewer)."""
    slot = ReviewSlot.objects.select_for_update().get(pk=slot.pk)
    _own_slot(slot, reviewer)
    if BlindAnswer.objects.filter(slot=slot).exists():
        raise ApplicationError("You have answered probes of this parent blind, so it stays yours; finish it.",
                               code="SLOT_HAS_BLIND_ANSWERS", status=409)
    slot.reviewer, slot.claimed_at = None, None
    slot.save(update_fields=["reviewer", "claimed_at"])
    event_record(actor=reviewer, verb="review.release", obj=slot, after={"role": slot.role, "context": slot.context})
    return slot


@transaction.atomic
def review_context_set_blind_order(*, context: str, order: str, actor: Any) -> ReviewContextSetting:
    """Choose a context's blind order: strict (default) or the Kit's first-probe-only order."""
    if not can_manage_audit(actor):
        raise ApplicationError("Only admins choose a context's blind order.", code="ADMIN_REQUIRED", status=403)
    if order not in BlindOrder.values:
        raise ApplicationError("Choose strict or kit.", code="BLIND_ORDER_INVALID", extra={"allowed": BlindOrder.values})
    if not _known_context(context):
        raise ApplicationError("Unknown review context.", code="CONTEXT_UNKNOWN", status=404)
    setting, _ = ReviewContextSetting.objects.select_for_update().get_or_create(context=context)
    before = setting.blind_order if setting.pk else None
    setting.blind_order, setting.updated_by = order, actor
    setting.save()
    event_record(actor=actor, verb="review.blind_order", obj=setting, before={"blind_order": before},
                 after={"context": context, "blind_order": order})
    return setting


def _own_slot(slot: ReviewSlot, reviewer: Any) -> None:
    if slot.reviewer_id != getattr(reviewer, "pk", None):
        raise ApplicationError("This work is assigned to another reviewer.", code="NOT_ASSIGNED", status=403)


def _independent(slot: ReviewSlot, reviewer: Any) -> None:
    if reviewer.pk in _other_reviewers(slot):
        code = "INDEPENDENT_ADJUDICATOR_REQUIRED" if slot.role == Role.ADJUDICATOR else "SECOND_REVIEWER_MUST_BE_INDEPENDENT"
        raise ApplicationError("You already review this parent in another role.", code=code, status=403)


@transaction.atomic
def review_submit_blind(*, slot: ReviewSlot, probe: Probe, reviewer: Any, given: BlindAnswerIn) -> BlindAnswer:
    """Record the reviewer's blind answer. It is immutable; only after it may the reviewer see the target."""
    slot = ReviewSlot.objects.select_for_update().get(pk=slot.pk)
    _own_slot(slot, reviewer)
    _independent(slot, reviewer)
    _refuse_key_holder(reviewer)
    progress = blind_progress(slot)
    if probe.pk not in {p.pk for p in progress.probes}:
        raise ApplicationError("This probe is not part of your assignment.", code="NOT_IN_SLOT", status=404)
    gate = progress.answer_gate(probe)
    if not gate.allowed:
        raise ApplicationError(gate.message, code=gate.code, status=409, extra={"blind_first": slot.blind_first_probe_id})
    answer = _normalize_blind(probe, given)
    sequence = (BlindAnswer.objects.filter(slot=slot).aggregate(m=Max("sequence"))["m"] or 0) + 1
    try:
        with transaction.atomic():
            blind = BlindAnswer.objects.create(
                slot=slot, probe=probe, reviewer=reviewer, role=slot.role, review_target_root=probe.review_target_root,
                answer=answer, cannot_answer=given.cannot_answer, reason=given.reason.strip(),
                matches_target=blind_matches_target(probe, answer), sequence=sequence)
    except IntegrityError as error:
        raise ApplicationError("The blind answer was already submitted.", code="BLIND_ANSWER_IMMUTABLE", status=409) from error
    event_record(actor=reviewer, verb="review.blind_answer", obj=blind,
                 after={"probe": probe.logical_probe_id, "sequence": sequence})
    return blind


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
            raise ApplicationError("Approval needs all six confirmations.", code="CONFIRMATIONS_INCOMPLETE",
                                   extra={"missing": [k for k in CONFIRMATION_KEYS if given.confirmations.get(k) is not True]})
        if given.severity not in ("none", "minor"):
            raise ApplicationError("Approval needs severity none or minor.", code="SEVERITY_BLOCKS_APPROVAL")
    else:
        if given.severity not in DEFECT:
            raise ApplicationError("Rejection needs severity serious, systemic, information or unresolved.",
                                   code="REJECTION_NEEDS_SEVERITY")
        if not given.note.strip():
            raise ApplicationError("Rejection needs a note with the specific reason.", code="REJECTION_NEEDS_NOTE")
    ids = probe.key.view.observation_ids
    allowed = {"approved_nonempty", "rejected"} if ids else {"approved_empty", "rejected"}
    if given.packet_state not in allowed:
        raise ApplicationError("This packet decision does not fit the packet's content.",
                               code="PACKET_STATE_CONTENT_MISMATCH", extra={"allowed": sorted(allowed)})
    if given.packet_state == "approved_empty" and given.packet_empty_reason not in EMPTY_REASONS:
        raise ApplicationError("An approved empty packet needs a reason.", code="PACKET_EMPTY_REASON_REQUIRED",
                               extra={"allowed": list(EMPTY_REASONS)})


@transaction.atomic
def review_decide(*, slot: ReviewSlot, probe: Probe, reviewer: Any, given: DecisionIn) -> ReviewDecision:
    """Record a decision on the probe's current content. Needs this reviewer's fresh blind answer."""
    slot = ReviewSlot.objects.select_for_update().get(pk=slot.pk)
    _own_slot(slot, reviewer)
    _independent(slot, reviewer)
    gate = blind_progress(slot).reveal_gate(probe)
    if not gate.allowed:  # a decision is made on the revealed target: the same gate as the reveal
        raise ApplicationError(gate.message, code=gate.code, status=403)
    blind = BlindAnswer.objects.get(slot=slot, probe=probe, review_target_root=probe.review_target_root)
    if ReviewDecision.objects.filter(slot=slot, probe=probe, review_target_root=probe.review_target_root).exists():
        raise ApplicationError("You already decided this probe.", code="DECISION_EXISTS", status=409)
    if slot.role == Role.ADJUDICATOR and probe.logical_probe_id not in {p.logical_probe_id for p in slot_work(slot, include_done=True)}:
        raise ApplicationError("A resolution is only allowed on a disputed probe.", code="UNNECESSARY_RESOLUTION_NOT_ALLOWED")
    _validate_decision(probe, given)
    decision = ReviewDecision.objects.create(
        slot=slot, probe=probe, blind=blind, reviewer=reviewer, role=slot.role,
        review_target_root=probe.review_target_root, status=given.status, severity=given.severity,
        confirmations={k: given.confirmations.get(k) is True for k in CONFIRMATION_KEYS},
        packet_state=given.packet_state,
        packet_empty_reason=given.packet_empty_reason if given.packet_state == "approved_empty" else "",
        note=given.note.strip(), sequence=blind.sequence)
    event_record(actor=reviewer, verb="review.decision", obj=decision,
                 after={"probe": probe.logical_probe_id, "status": given.status, "severity": given.severity})
    review_settle(probe=probe, context=slot.context, actor=reviewer)
    return decision


# Settling a probe: direct approval, adjudication, hand-off to the probe -----------------------------------------
def review_settle(*, probe: Probe, context: str, actor: Any) -> Outcome:
    """Apply the outcome: open an adjudicator slot for a dispute, or record approval/rejection on the probe
    (bound to the root that was reviewed; a stale root is refused by the probe service)."""
    outcome = probe_outcome(probe, context)
    if outcome.state == "adjudication":
        ReviewSlot.objects.get_or_create(parent_id=probe.parent_id, role=Role.ADJUDICATOR, context=context,
                                         defaults={"blind_first_probe_id": probe.logical_probe_id})
    elif outcome.state in ("approved", "rejected") and context == DEVELOPMENT:
        probe_record_review(probe=probe, actor=actor, state=outcome.state, packet_state=outcome.packet_state,
                            review_target_root=probe.review_target_root, empty_reason=outcome.empty_reason or None)
    elif outcome.state in ("approved", "rejected"):
        plan = AuditPlan.objects.get(pk=context.split(":", 1)[1])
        audit_sync_slots(plan=plan)
    return outcome


# Batch audit -------------------------------------------------------------------------------------------------
POLICY = {"policy_id": audit_stats.POLICY_ID, "primary_sample_max": audit_stats.PRIMARY_SAMPLE_MAX,
          "secondary_sample_max": audit_stats.SECONDARY_SAMPLE_MAX, "risk_budget": audit_stats.RISK_BUDGET,
          "max_rounds": audit_stats.MAX_ROUNDS, "alpha": "1/40", "threshold": "1/20",
          "unit": "parent_with_at_least_one_serious_defect", "sampling": "simple_random_without_replacement"}


@transaction.atomic
def audit_campaign_create(*, actor: Any, nonce: str | None = None) -> AuditCampaign:
    """A campaign with a fresh random 32-byte nonce (one per data batch; never re-initialized to re-roll)."""
    nonce = nonce or secrets.token_hex(32)
    campaign_id = "NAC-" + digest({"nonce": nonce, "policy": POLICY})
    campaign = AuditCampaign.objects.create(campaign_id=campaign_id, nonce=nonce, policy=POLICY,
                                            created_by=actor if getattr(actor, "pk", None) else None)
    event_record(actor=actor, verb="audit.campaign_create", obj=campaign, after={"campaign_id": campaign_id})
    return campaign


def _candidate_parents() -> dict[str, list[dict[str, Any]]]:
    parents: dict[str, list[dict[str, Any]]] = {}
    for probe in live_probes().filter(split=Probe.Split.UNASSIGNED).select_related("parent"):
        parents.setdefault(probe.parent.problem_id, []).append(
            {"logical_probe_id": probe.logical_probe_id, "interface": probe.interface, "language": probe.language,
             "metadata": probe.metadata, "root": probe.review_target_root})
    return parents


@transaction.atomic
def audit_plan_create(*, campaign: AuditCampaign, actor: Any) -> AuditPlan:
    """Draw the next round's plan and open its primary and secondary slots.

    Needs every development parent fully approved with no systemic, information or unresolved finding. Round 2
    only follows a failed, complete round 1 and only for a new version: every flagged parent must have changed.
    """
    dev = development_parents_state()
    if not dev["parents"] or dev["incomplete"] or dev["blocking"]:
        raise ApplicationError("Every development parent must be fully approved first.", code="DEVELOPMENT_REVIEW_INCOMPLETE",
                               extra={"incomplete": dev["incomplete"][:50], "blocking": dev["blocking"][:50]})
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
        campaign=campaign, round_number=round_number, seed=sample.seed, candidates=sample.candidates,
        sample=sample.sample, secondary=sample.secondary, risk=sample.risk,
        uncovered_risk_tags=sample.uncovered_risk_tags, blind_first=sample.blind_first,
        target_roots={q: r for q, r in roots.items() if any(q == p["logical_probe_id"] for pid in audited for p in parents[pid])},
        catalog_root=catalog_root)
    by_id = dict(ParentProblem.objects.filter(problem_id__in=audited).values_list("problem_id", "pk"))
    rows = [ReviewSlot(parent_id=by_id[pid], role=Role.PRIMARY, context=plan.context,
                       blind_first_probe_id=sample.blind_first[pid]) for pid in sorted(audited)]
    rows += [ReviewSlot(parent_id=by_id[pid], role=Role.SECONDARY, context=plan.context,
                        blind_first_probe_id=sample.blind_first[pid]) for pid in sample.secondary]
    ReviewSlot.objects.bulk_create(rows)
    event_record(actor=actor, verb="audit.plan_create", obj=plan,
                 after={"round": round_number, "sample": len(sample.sample), "risk": len(sample.risk)})
    return plan


def _check_round_two(first: AuditPlan, roots: dict[str, str], catalog_root: str) -> None:
    """Round 2: only after a failed, complete round 1, for a new version in which every flagged parent
    is gone or changed (Kit §7 new-version rule)."""
    last = first.assessments.first()
    if last is None or last.accepted or not last.complete:
        raise ApplicationError("Round 2 only follows a failed, complete round 1.", code="AUDIT_ROUND2_NOT_ALLOWED")
    if catalog_root == first.catalog_root:
        raise ApplicationError("Round 2 needs a new version of the candidates.", code="AUDIT_ROUND2_SAME_VERSION")
    flagged = set(last.result.get("flagged_parents", [])) | {
        p.parent.problem_id for p in Probe.objects.filter(logical_probe_id__in=last.result.get("systemic_probe_ids", []))
        .select_related("parent")}
    unchanged = sorted(q for q, pid in Probe.objects.filter(logical_probe_id__in=list(first.target_roots),
                                                            parent__problem_id__in=flagged)
                       .values_list("logical_probe_id", "parent__problem_id")
                       if roots.get(q) == first.target_roots[q])
    if unchanged:
        raise ApplicationError("Flagged parents must be fixed (changed) or removed before round 2.",
                               code="AUDIT_ROUND2_UNMODIFIED_CANDIDATE", extra={"probes": unchanged[:50]})


def audit_sync_slots(*, plan: AuditPlan) -> None:
    """Open secondary slots the rules now require (flagged parents, escalation) and adjudicator slots."""
    result = audit_assess_compute(plan)
    by_id = dict(ParentProblem.objects.filter(problem_id__in=result.required_secondary_parents)
                 .values_list("problem_id", "pk"))
    for pid, pk in by_id.items():
        ReviewSlot.objects.get_or_create(parent_id=pk, role=Role.SECONDARY, context=plan.context,
                                         defaults={"blind_first_probe_id": plan.blind_first[pid]})


def audit_assess_compute(plan: AuditPlan) -> audit_stats.Assessment:
    findings = plan_findings(plan)
    return audit_stats.assess(
        candidates=plan.candidates, sample=plan.sample, secondary_parents=plan.secondary, risk=plan.risk,
        uncovered_risk_tags=plan.uncovered_risk_tags, blind_first=plan.blind_first,
        probes_by_parent=findings["probes_by_parent"], primary=findings["primary"], secondary=findings["secondary"],
        resolutions=findings["resolutions"])


@transaction.atomic
def audit_assess(*, plan: AuditPlan, actor: Any) -> AuditAssessment:
    """Compute and store the assessment; an accepted one records every audited probe's final decision."""
    if any(Probe.objects.filter(logical_probe_id=q).exclude(review_target_root=r).exists()
           for q, r in plan.target_roots.items()):
        raise ApplicationError("Audited probes changed since the plan was drawn.", code="AUDIT_STALE", status=409)
    result = audit_assess_compute(plan)
    data = result.as_dict()
    flagged = sorted({probe.parent.problem_id for probe in Probe.objects.filter(
        review_decisions__slot__context=plan.context, review_decisions__status="rejected").select_related("parent")})
    data.update(plan_id=plan.pk, round=plan.round_number, campaign_id=plan.campaign.campaign_id, flagged_parents=flagged)
    assessment = AuditAssessment.objects.create(plan=plan, accepted=result.accepted,
                                                complete=audit_stats.review_complete(result), result=data,
                                                result_root=digest(data), created_by=actor if getattr(actor, "pk", None) else None)
    if result.accepted:
        for probe in live_probes().filter(logical_probe_id__in=list(plan.target_roots)):
            outcome = probe_outcome(probe, plan.context)
            if outcome.state in ("approved", "rejected"):
                probe_record_review(probe=probe, actor=actor, state=outcome.state, packet_state=outcome.packet_state,
                                    review_target_root=plan.target_roots[probe.logical_probe_id],
                                    empty_reason=outcome.empty_reason or None)
    event_record(actor=actor, verb="audit.assess", obj=assessment, after={"accepted": result.accepted,
                                                                        "blockers": result.blockers})
    return assessment


# Signoff and the gated export ---------------------------------------------------------------------------------------
def signoff_target(*, mode: str, assessment: AuditAssessment | None) -> tuple[str, str, list[str]]:
    """(split, target_root, admitted parents) for a signoff; recomputed at export to refuse stale signoffs."""
    if mode == Signoff.Mode.AUDIT:
        if assessment is None or not assessment.accepted:
            raise ApplicationError("Sign off an accepted audit assessment.", code="ASSESSMENT_NOT_ACCEPTED")
        latest = AuditAssessment.objects.filter(plan__campaign=assessment.plan.campaign).first()
        if latest.pk != assessment.pk:
            raise ApplicationError("A newer assessment exists for this campaign.", code="ASSESSMENT_SUPERSEDED")
        retained = set(assessment.result["retained_parents"])
        audited = set(assessment.plan.sample) | set(assessment.plan.risk)
        admitted = sorted(pid for pid in retained & audited if _parent_fully_approved(pid))
        return "test", assessment.result_root, admitted
    state = development_parents_state()
    admitted = state["approved_parents"]
    return "development", digest(state["roots"]), admitted


def _parent_fully_approved(problem_id: str) -> bool:
    probes = live_probes().filter(parent__problem_id=problem_id)
    return probes.exists() and not probes.exclude(state=Probe.State.APPROVED).exists()


@transaction.atomic
def signoff_create(*, actor: Any, mode: str, assessment: AuditAssessment | None, confirmations: dict[str, bool],
                   evidence_ref: str) -> Signoff:
    if mode not in Signoff.Mode.values:
        raise ApplicationError("Unknown signoff mode.", code="SIGNOFF_MODE_INVALID")
    missing = [k for k in SIGNOFF_KEYS if confirmations.get(k) is not True]
    if missing:
        raise ApplicationError("All six release confirmations are required.", code="SIGNOFF_CONFIRMATIONS_INCOMPLETE",
                               extra={"missing": missing})
    if not evidence_ref.strip():
        raise ApplicationError("Give an evidence reference.", code="SIGNOFF_EVIDENCE_REQUIRED")
    split, root, admitted = signoff_target(mode=mode, assessment=assessment)
    if not admitted:
        raise ApplicationError("No fully approved parent to release.", code="NO_COMPLETE_APPROVED_PARENTS")
    if mode == Signoff.Mode.INDIVIDUAL and development_parents_state()["blocking"]:
        raise ApplicationError("Systemic, information or unresolved findings block the release.",
                               code="SYSTEMIC_OR_UNRESOLVED_BLOCKS_RELEASE")
    signoff = Signoff.objects.create(mode=mode, assessment=assessment if mode == Signoff.Mode.AUDIT else None,
                                     split=split, problem_ids=admitted, target_root=root,
                                     confirmations={k: True for k in SIGNOFF_KEYS}, evidence_ref=evidence_ref.strip(),
                                     reviewer=actor)
    event_record(actor=actor, verb="review.signoff", obj=signoff, after={"mode": mode, "parents": len(admitted)})
    return signoff


def signoff_export(*, signoff: Signoff, output: Path, actor: Any) -> Release:
    """Export the release the signoff covers; refused when anything it covered has changed since."""
    if signoff.release_id:
        raise ApplicationError("This signoff was already used for a release.", code="SIGNOFF_USED", status=409)
    split, root, admitted = signoff_target(mode=signoff.mode, assessment=signoff.assessment)
    if root != signoff.target_root or admitted != signoff.problem_ids:
        raise ApplicationError("The signoff does not match the current review state.",
                               code="SIGNOFF_WRONG_VERSION_OR_TARGET", status=409)
    parents = ParentProblem.objects.filter(problem_id__in=admitted).select_related("source")
    release = release_export(split=split, output=output, actor=actor, problem_ids=admitted,
                             authorization=release_authorization(signoff),
                             synthetic_example=bool(admitted) and all(parent_is_synthetic(p) for p in parents))
    Signoff.objects.filter(pk=signoff.pk).update(release=release)
    event_record(actor=actor, verb="review.signoff_export", obj=signoff, after={"release_id": release.release_id})
    return release


# Kit review decisions (issue 13 item 4; design and rules in review/kit_decisions.py) -------------------------------
def _require_importer(actor: Any) -> None:
    """Admins import Kit decisions over the web; an operator's manage.py passes ``actor=None``."""
    if actor is not None and not can_manage_audit(actor):
        raise ApplicationError("Only admins import Kit review decisions.", code="ADMIN_REQUIRED", status=403)


def _our_side(probe: Probe) -> Any:
    key = probe.key
    # A settled probe's key holds the reviewed packet state; the Kit's draft core holds it pending.
    pending = {**key.view.packet_plan, "state": "pending_review", "empty_reason": None, "review_ref": None}
    images = {i.image_id: i for i in probe.parent.images.all()}
    views = {v.view_id: v for v in probe.views.all()}
    originals = [a for a in probe.attachment_ids if a in images]
    return OurProbe(
        key={**key.key, "packet_plan": pending}, raw_view=probe.raw_view, gold_view=probe.gold_view, raw_messages=probe.raw_messages,
        gold_messages=probe.gold_messages, attachment_ids=probe.attachment_ids, displays=key.displays,
        pixels={**{a: images[a].pixels_sha256 for a in originals}, **{v: r.pixels_sha256 for v, r in views.items()}},
        bytes={**{a: images[a].sha256 for a in originals}, **{v: r.bytes_sha256 for v, r in views.items()}})


@transaction.atomic
def kit_draft_import(*, root: Path, actor: Any) -> Any:
    """Check a Kit draft and bind each of its probes that equals one of ours (same key, views, messages,
    render manifest and pixels) to the Kit's review target root. Probes that differ are reported, not bound.
    Importing the same draft again re-checks it against our current probes."""
    _require_importer(actor)
    try:
        draft = load_draft(root)
        roots = {qid: verified_roots(draft.items[qid], draft.previews[qid]) for qid in draft.items}
    except KitFileError as error:
        raise ApplicationError(f"The Kit draft was refused: {error}", code=error.code,
                               extra={"detail": error.detail}) from error
    record, _ = KitDraftImport.objects.update_or_create(catalog_root=draft.catalog_root, defaults={
        "project_id": draft.project_id, "catalog": draft.catalog,
        "imported_by": actor if getattr(actor, "pk", None) else None})
    ours = {p.logical_probe_id: p for p in live_probes().filter(logical_probe_id__in=list(draft.items))
            .select_related("key", "parent").prefetch_related("views", "parent__images")}
    bound, differing = [], {}
    KitProbeBinding.objects.filter(draft=record).delete()
    for qid in sorted(draft.items):
        probe = ours.get(qid)
        if probe is None:
            differing[qid] = ["not_compiled_here"]
            continue
        ourside, core = _our_side(probe), draft.previews[qid]["core"]
        diff = differences(core, ourside)
        if diff:
            differing[qid] = diff
            continue
        KitProbeBinding.objects.create(draft=record, probe=probe, kit_content_root=roots[qid][0],
                                       kit_review_target_root=roots[qid][1],
                                       review_target_root=probe.review_target_root,
                                       same_bytes=same_bytes(core, ourside))
        bound.append(qid)
    record.summary = {"bound": bound, "differing": differing, "kit_probes": len(draft.items),
                      "development_problem_ids": sorted(draft.development_problem_ids)}
    record.save(update_fields=["summary"])
    event_record(actor=actor, verb="review.kit_draft_import", obj=record,
                 after={"catalog_root": draft.catalog_root, "bound": len(bound), "differing": sorted(differing)})
    return record


@dataclass(frozen=True)
class KitImportReport:
    catalog_root: str
    imported: list[str]
    unchanged: list[str]
    pending: list[str]
    settled: dict[str, str]  # logical_probe_id -> the probe state the decision recorded


@transaction.atomic
def kit_decisions_import(*, document: Any, file_bytes_sha256: str, actor: Any,
                         draft_root: Path | None = None) -> KitImportReport:
    """Import one Kit decision file onto our probes, all or nothing.

    The file is checked as the Kit checks it (catalog root, fields, known development probes, duplicates,
    stale roots, strict booleans, approval and rejection rules); then every decided probe must be bound to
    that exact Kit root by an imported draft and be unchanged here since (else ``REVIEW_TARGET_STALE``).
    Each decision becomes an immutable :class:`KitDecision` (the Kit reviewer's name is text); an approval
    or rejection of a probe still pending review settles it, as our own development review does.
    """
    _require_importer(actor)
    if draft_root is not None:
        kit_draft_import(root=draft_root, actor=actor)
    catalog_root = document.get("catalog_root") if isinstance(document, dict) else None
    record = KitDraftImport.objects.filter(catalog_root=catalog_root or "").first()
    if record is None:
        raise ApplicationError("No imported Kit draft has this file's catalog root: import the draft first.",
                               code="REVIEW_CATALOG_STALE", extra={"catalog_root": catalog_root})
    catalog = record.catalog
    draft = KitDraft(root=Path("."), catalog=catalog, catalog_root=record.catalog_root, previews={},
                     development_problem_ids=set(record.summary.get("development_problem_ids", [])),
                     project_id=record.project_id, items={p["logical_probe_id"]: p for p in catalog["probes"]})
    try:
        decisions = normalize_decisions(document, draft)
    except KitFileError as error:
        raise ApplicationError(f"The Kit decision file was refused: {error}", code=error.code,
                               extra={"detail": error.detail}) from error
    bindings = {b.probe.logical_probe_id: b for b in KitProbeBinding.objects.filter(draft=record).select_related("probe")}
    schema, context = document["schema_version"], document.get("context_root", "")
    imported, unchanged, pending, settled = [], [], [], {}
    for qid, d in sorted(decisions.items()):
        if d["status"] == "pending":
            pending.append(qid)
            continue
        binding = bindings.get(qid)
        if binding is None or binding.kit_review_target_root != d["review_target_root"]:
            raise ApplicationError("This Kit probe is not the same as ours.", code="REVIEW_TARGET_STALE",
                                   extra={"logical_probe_id": qid,
                                          "differs": record.summary.get("differing", {}).get(qid, [])})
        probe = Probe.objects.select_for_update().get(pk=binding.probe_id)
        if probe.state == Probe.State.SUPERSEDED or probe.review_target_root != binding.review_target_root:
            raise ApplicationError("Our probe changed since the Kit draft was checked.", code="REVIEW_TARGET_STALE",
                                   extra={"logical_probe_id": qid})
        values = {"status": d["status"], "severity": d["severity"], "confirmations": d["confirmations"],
                  "blind_answer": d["blind_answer"], "kit_reviewer": d["reviewer"].strip(), "note": d["note"],
                  "sequence": d["sequence"], "kit_review_target_root": d["review_target_root"]}
        existing = KitDecision.objects.filter(probe=probe, review_target_root=probe.review_target_root,
                                              role=Role.INDIVIDUAL, context_root=context).first()
        if existing is not None:
            if any(getattr(existing, k) != v for k, v in values.items()):
                raise ApplicationError("Another decision on this probe was imported already.",
                                       code="CONFLICTING_REVIEWS_USE_ONE_ADJUDICATED_EXPORT",
                                       extra={"logical_probe_id": qid})
            unchanged.append(qid)
            continue
        KitDecision.objects.create(draft=record, probe=probe, schema_version=schema, context_root=context,
                                   role=Role.INDIVIDUAL, file_sha256=file_bytes_sha256,
                                   review_target_root=probe.review_target_root,
                                   imported_by=actor if getattr(actor, "pk", None) else None, **values)
        imported.append(qid)
        if probe.state == Probe.State.PENDING_REVIEW:
            approved = d["status"] == "approved"
            packet = ("approved_nonempty" if probe.key.view.observation_ids else "approved_empty") \
                if approved else "rejected"
            probe_record_review(probe=probe, actor=actor, state=d["status"], packet_state=packet,
                                review_target_root=probe.review_target_root)
            settled[qid] = d["status"]
    event_record(actor=actor, verb="review.kit_decisions_import", obj=record,
                 after={"file_sha256": file_bytes_sha256, "schema_version": schema, "imported": imported,
                        "unchanged": unchanged, "pending": pending, "settled": settled})
    return KitImportReport(catalog_root=record.catalog_root, imported=imported, unchanged=unchanged,
                           pending=pending, settled=settled)


def _draft_root_in(folder: Path) -> Path:
    """The folder of an extracted archive that holds the Kit draft (``catalog.PRIVATE.json``) or review
    project (``project.json`` + ``source/``): the archive root or its one top-level folder."""
    candidates = [folder, *sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(("__", ".")))]
    found = [c for c in candidates if (c / "catalog.PRIVATE.json").is_file()
             or ((c / "project.json").is_file() and (c / "source").is_dir())]
    if len(found) != 1:
        raise ApplicationError("The archive must hold one Kit draft (catalog.PRIVATE.json) or Kit review project "
                               "(project.json and source/) at its root or in one top-level folder.",
                               code="KIT_DRAFT_LAYOUT")
    return found[0]


def kit_draft_upload(*, upload: Any, actor: Any) -> Any:
    """An uploaded zip of a Kit draft or review project: extracted with the import checks (paths, links,
    size, expansion ratio), checked and bound by :func:`kit_draft_import`, then deleted."""
    _require_importer(actor)
    if upload.size > settings.PHYSALIGN_IMPORT_MAX_BYTES:
        raise ApplicationError(f"The archive is larger than {settings.PHYSALIGN_IMPORT_MAX_BYTES:,} bytes.",
                               code="import_too_large")
    work = Path(tempfile.mkdtemp(prefix="kit-draft-"))
    try:
        archive = work / "upload.zip"
        with archive.open("wb") as sink:
            for chunk in upload.chunks():
                sink.write(chunk)
        try:
            extract_zip(archive, work / "x")
        except zipfile.BadZipFile as error:
            raise ApplicationError("The upload is not a readable zip archive.", code="import_zip_invalid") from error
        return kit_draft_import(root=_draft_root_in(work / "x"), actor=actor)
    finally:
        shutil.rmtree(work, ignore_errors=True)


KIT_DECISION_FILE_MAX_BYTES = 20 * 1024 * 1024


def kit_decisions_upload(*, upload: Any, actor: Any) -> KitImportReport:
    """An uploaded Kit decision file (JSON: duplicate keys, NaN and bad UTF-8 refused), imported all or nothing."""
    _require_importer(actor)
    if upload.size > KIT_DECISION_FILE_MAX_BYTES:
        raise ApplicationError(f"The decision file is larger than {KIT_DECISION_FILE_MAX_BYTES:,} bytes.",
                               code="import_too_large")
    data = upload.read()
    try:
        document = parse_json(data)
    except ValueError as error:
        raise ApplicationError(f"The decision file is not valid JSON: {error}", code="REVIEW_FILE_JSON_INVALID") from error
    return kit_decisions_import(document=document, file_bytes_sha256=bytes_digest(data), actor=actor)
