"""A reviewer's work on a slot (Kit §4): the development queue, claims and releases, each context's blind order, and blind answers (what may be answered, how it is normalised and compared, submitting it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from audit.disclosure import exposed_parent_ids, has_seen_targets
from audit.services import event_record
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from physalign_site.roles import ADJUDICATOR, PROBE_REVIEWER, has_role
from probes.models import Probe

from ..models import (
    AuditPlan,
    BlindAnswer,
    BlindOrder,
    ReviewContextSetting,
    ReviewSlot,
    Role,
)
from ..permissions import can_manage_audit, is_key_holder
from ..selectors import (
    blind_progress,
    live_probes,
    slot_work,
)

DEVELOPMENT = "development"


EMPTY_REASONS = (
    "no_independent_readable_primitive",
    "only_unsafe_binding_statement",
    "family_policy_no_packet",
)


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
            raise ApplicationError(
                "Say why the question cannot be answered uniquely.", code="REASON_REQUIRED"
            )
        return None
    contract = contract_of(probe)
    aliases = sorted({a.strip().upper() for a in given.binding if a.strip()})
    unknown = [a for a in aliases if a not in contract["aliases"]]
    if not aliases or unknown:
        raise ApplicationError(
            "Answer with candidate IDs shown in the prompt (E1, E2, …).",
            code="BLIND_ALIAS_INVALID",
            extra={"unknown": unknown, "allowed": contract["aliases"]},
        )
    if contract["cardinality"] == "one" and len(aliases) != 1:
        raise ApplicationError("This question takes a single candidate ID.", code="BLIND_CARDINALITY")
    reads = {anchor: str(given.read.get(anchor, "")) for anchor in contract["read_anchor_ids"]}
    if any(not value.strip() for value in reads.values()):
        raise ApplicationError(
            "Transcribe every read anchor.",
            code="BLIND_READ_MISSING",
            extra={"anchors": contract["read_anchor_ids"]},
        )
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
    """Primary and secondary slots for every development parent with live probes (two independent reviewers).

    Called by the development claim, before it looks for a slot (the queue page only counts parents without
    slots as waiting, it writes nothing). Three queries however many parents there are."""
    created = 0
    parents: dict[int, list[str]] = {}
    problem_ids: dict[int, str] = {}
    for parent_id, problem_id, qid in (
        live_probes()
        .filter(split=Probe.Split.DEVELOPMENT)
        .values_list("parent_id", "parent__problem_id", "logical_probe_id")
    ):
        parents.setdefault(parent_id, []).append(qid)
        problem_ids[parent_id] = problem_id
    existing = set(ReviewSlot.objects.filter(context=DEVELOPMENT).values_list("parent_id", "role"))
    rows = []
    for parent_id, qids in parents.items():
        missing = [r for r in (Role.PRIMARY, Role.SECONDARY) if (parent_id, r) not in existing]
        if not missing:
            continue
        first = blind_first_probe(digest(["development_review", problem_ids[parent_id]]), sorted(qids))
        rows += [
            ReviewSlot(parent_id=parent_id, role=role, context=DEVELOPMENT, blind_first_probe_id=first)
            for role in missing
        ]
    if rows:
        created = len(ReviewSlot.objects.bulk_create(rows, ignore_conflicts=True))
    return created


def _role_allowed(user: Any, role: str) -> bool:
    return has_role(user, ADJUDICATOR) if role == Role.ADJUDICATOR else has_role(user, PROBE_REVIEWER)


def _other_reviewers(slot: ReviewSlot) -> set[int]:
    return set(
        ReviewSlot.objects.filter(parent_id=slot.parent_id, context=slot.context)
        .exclude(pk=slot.pk)
        .exclude(reviewer=None)
        .values_list("reviewer_id", flat=True)
    )


def _known_context(context: str) -> bool:
    if context == DEVELOPMENT:
        return True
    plan_id = context.split(":", 1)[1] if context.startswith("audit:") else ""
    return plan_id.isascii() and plan_id.isdigit() and AuditPlan.objects.filter(pk=int(plan_id)).exists()


def _refuse_seen_targets(reviewer: Any, parent_id: int) -> None:
    if has_seen_targets(reviewer, parent_id):
        raise ApplicationError(
            "You have been shown a target of this parent (a key page, an evaluation drill-down, a Kit draft or "
            "its reference answer), so your review of it could not be blind. Leave it to another reviewer.",
            code="TARGETS_SEEN",
            status=403,
        )


def _refuse_key_holder(reviewer: Any) -> None:
    if is_key_holder(reviewer):
        raise ApplicationError(
            "You can read every probe key (the scorer permission), so your review could not be "
            "blind. Ask an admin to remove that permission, or leave this work to another "
            "reviewer.",
            code="KEY_HOLDER_CANNOT_REVIEW",
            status=403,
        )


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
    held = list(
        ReviewSlot.objects.filter(context=context, reviewer=reviewer).values_list("parent_id", flat=True)
    )
    seen = exposed_parent_ids(reviewer)  # parents whose targets were shown to this reviewer: never theirs
    passed_over: list[int] = []
    while True:
        slot = (
            ReviewSlot.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(context=context, role=role, reviewer__isnull=True)
            .exclude(parent_id__in=held)
            .exclude(parent_id__in=seen)
            .exclude(pk__in=passed_over)
            .order_by("parent__problem_id", "pk")
            .first()
        )
        if slot is None:
            if seen.exists():
                raise ApplicationError(
                    "No parent is waiting for this role that you could review blind: you have been shown "
                    "targets of some parents, and those go to other reviewers.",
                    code="QUEUE_EMPTY",
                    status=404,
                )
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
    own_slot(slot, reviewer)
    if BlindAnswer.objects.filter(slot=slot).exists():
        raise ApplicationError(
            "You have answered probes of this parent blind, so it stays yours; finish it.",
            code="SLOT_HAS_BLIND_ANSWERS",
            status=409,
        )
    slot.reviewer, slot.claimed_at = None, None
    slot.save(update_fields=["reviewer", "claimed_at"])
    event_record(
        actor=reviewer, verb="review.release", obj=slot, after={"role": slot.role, "context": slot.context}
    )
    return slot


@transaction.atomic
def review_context_set_blind_order(*, context: str, order: str, actor: Any) -> ReviewContextSetting:
    """Choose a context's blind order: strict (default) or the Kit's first-probe-only order."""
    if not can_manage_audit(actor):
        raise ApplicationError(
            "Only admins choose a context's blind order.", code="ADMIN_REQUIRED", status=403
        )
    if order not in BlindOrder.values:
        raise ApplicationError(
            "Choose strict or kit.", code="BLIND_ORDER_INVALID", extra={"allowed": BlindOrder.values}
        )
    if not _known_context(context):
        raise ApplicationError("Unknown review context.", code="CONTEXT_UNKNOWN", status=404)
    setting, _ = ReviewContextSetting.objects.select_for_update().get_or_create(context=context)
    before = setting.blind_order if setting.pk else None
    setting.blind_order, setting.updated_by = order, actor
    setting.save()
    event_record(
        actor=actor,
        verb="review.blind_order",
        obj=setting,
        before={"blind_order": before},
        after={"context": context, "blind_order": order},
    )
    return setting


def own_slot(slot: ReviewSlot, reviewer: Any) -> None:
    if slot.reviewer_id != getattr(reviewer, "pk", None):
        raise ApplicationError("This work is assigned to another reviewer.", code="NOT_ASSIGNED", status=403)


def independent(slot: ReviewSlot, reviewer: Any) -> None:
    if reviewer.pk in _other_reviewers(slot):
        code = (
            "INDEPENDENT_ADJUDICATOR_REQUIRED"
            if slot.role == Role.ADJUDICATOR
            else "SECOND_REVIEWER_MUST_BE_INDEPENDENT"
        )
        raise ApplicationError("You already review this parent in another role.", code=code, status=403)


@transaction.atomic
def review_submit_blind(
    *, slot: ReviewSlot, probe: Probe, reviewer: Any, given: BlindAnswerIn
) -> BlindAnswer:
    """Record the reviewer's blind answer. It is immutable; only after it may the reviewer see the target."""
    slot = ReviewSlot.objects.select_for_update().get(pk=slot.pk)
    own_slot(slot, reviewer)
    independent(slot, reviewer)
    _refuse_key_holder(reviewer)
    _refuse_seen_targets(reviewer, slot.parent_id)
    progress = blind_progress(slot)
    if probe.pk not in {p.pk for p in progress.probes}:
        raise ApplicationError("This probe is not part of your assignment.", code="NOT_IN_SLOT", status=404)
    gate = progress.answer_gate(probe)
    if not gate.allowed:
        raise ApplicationError(
            gate.message, code=gate.code, status=409, extra={"blind_first": slot.blind_first_probe_id}
        )
    answer = _normalize_blind(probe, given)
    sequence = (BlindAnswer.objects.filter(slot=slot).aggregate(m=Max("sequence"))["m"] or 0) + 1
    try:
        with transaction.atomic():
            blind = BlindAnswer.objects.create(
                slot=slot,
                probe=probe,
                reviewer=reviewer,
                role=slot.role,
                review_target_root=probe.review_target_root,
                answer=answer,
                cannot_answer=given.cannot_answer,
                reason=given.reason.strip(),
                matches_target=blind_matches_target(probe, answer),
                sequence=sequence,
            )
    except IntegrityError as error:
        raise ApplicationError(
            "The blind answer was already submitted.", code="BLIND_ANSWER_IMMUTABLE", status=409
        ) from error
    event_record(
        actor=reviewer,
        verb="review.blind_answer",
        obj=blind,
        after={"probe": probe.logical_probe_id, "sequence": sequence},
    )
    return blind
