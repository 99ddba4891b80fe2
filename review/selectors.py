"""Reads for review: live probes, a slot's work, decisions per probe, outcomes, audit findings, queue summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, QuerySet

from annotation.models import ParentProblem
from probes.models import Probe

from . import audit_stats, redaction
from .models import (
    AuditAssessment,
    AuditCampaign,
    AuditPlan,
    BlindAnswer,
    BlindOrder,
    KitDecision,
    KitDraftImport,
    ReviewContextSetting,
    ReviewDecision,
    ReviewSlot,
    Role,
)

DEVELOPMENT = "development"


def live_probes() -> QuerySet[Probe]:
    return Probe.objects.exclude(state=Probe.State.SUPERSEDED)


def probe_decisions(probe: Probe, context: str, *, root: str | None = None) -> dict[str, ReviewDecision]:
    """Fresh decisions (bound to the probe's current root, or ``root``) of this context, by role."""
    rows = ReviewDecision.objects.filter(
        probe=probe, slot__context=context, review_target_root=root or probe.review_target_root
    ).select_related("blind")
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
    return audit_stats.Finding(
        str(decision.reviewer_id), decision.status, decision.severity, decision.sequence
    )


def probe_outcome(probe: Probe, context: str, *, ignore_resolution: bool = False) -> Outcome:
    """The final decision for the probe's current root in this context (Kit §6.5, paper §3.2).

    Development: direct approval only when both blind answers match the target and both reviewers approve
    with all confirmations and the same packet decision; matching rejections stand; anything else goes to an
    adjudicator. Audit: the kit's rule, a (status, severity) disagreement or ``unresolved`` is adjudicated.
    """
    return outcome_of(probe_decisions(probe, context), context, ignore_resolution=ignore_resolution)


def outcome_of(
    decisions: dict[str, ReviewDecision], context: str, *, ignore_resolution: bool = False
) -> Outcome:
    """:func:`probe_outcome` on one probe's fresh decisions of ``context``, by role (already fetched)."""
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
    if (
        a.status == b.status == "approved"
        and a.all_confirmed
        and b.all_confirmed
        and a.blind.matches_target
        and b.blind.matches_target
        and a.packet_state == b.packet_state
    ):
        return _final(a)
    if a.status == b.status == "rejected" and a.severity == b.severity and a.severity != "unresolved":
        return _final(a)
    return Outcome("adjudication")


def fresh_decisions(
    roots: dict[int, str], contexts: set[str]
) -> dict[tuple[str, int], dict[str, ReviewDecision]]:
    """Fresh decisions (on the root given for each probe pk) of these contexts, by (context, probe pk) and
    role, in one query: what :func:`probe_decisions` gives one probe at a time."""
    found: dict[tuple[str, int], dict[str, ReviewDecision]] = {}
    if not roots or not contexts:
        return found
    rows = (
        ReviewDecision.objects.filter(probe_id__in=list(roots), slot__context__in=sorted(contexts))
        .select_related("blind")
        .annotate(slot_context=F("slot__context"))
    )
    for row in rows:
        if row.review_target_root == roots[row.probe_id]:
            found.setdefault((row.slot_context, row.probe_id), {})[row.role] = row
    return found


def probe_outcomes(
    roots: dict[int, str], context: str, *, ignore_resolution: bool = False
) -> dict[int, Outcome]:
    """:func:`probe_outcome` for many probes (pk → current root) of one context, in one query."""
    found = fresh_decisions(roots, {context})
    return {
        pk: outcome_of(found.get((context, pk), {}), context, ignore_resolution=ignore_resolution)
        for pk in roots
    }


def in_context(context: str, probes: list[Probe]) -> list[Probe]:
    """The probes a review context covers: every one in development, those of the plan in an audit."""
    if context == DEVELOPMENT:
        return probes
    plan = AuditPlan.objects.filter(pk=context.split(":", 1)[1]).first()
    return [p for p in probes if plan is not None and p.logical_probe_id in plan.target_roots]


def slot_work(slot: ReviewSlot, *, include_done: bool = False) -> list[Probe]:
    """The slot's probes, in order: the blind-first probe, then by id. Without ``include_done``, only those
    still lacking this slot's decision on the current root. An adjudicator only gets disputed probes."""
    probes = in_context(
        slot.context,
        list(
            live_probes()
            .filter(parent_id=slot.parent_id)
            .select_related("parent", "key")
            .order_by("logical_probe_id")
        ),
    )
    if slot.role == Role.ADJUDICATOR:
        probes = [
            p
            for p in probes
            if probe_outcome(p, slot.context, ignore_resolution=True).state == "adjudication"
        ]
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
        rows.append(
            WorkRow(
                probe,
                blinds.get(key),
                decisions.get(key),
                stale,
                probe.logical_probe_id == slot.blind_first_probe_id,
            )
        )
    return rows


@dataclass(frozen=True)
class NextStep:
    """The next thing to do in a slot: answer ``probe`` blind (``kind == "blind"``) or decide it."""

    probe: Probe
    kind: str  # blind | target


def next_step(slot: ReviewSlot, progress: BlindProgress, *, skip: Probe | None = None) -> NextStep | None:
    """The first probe the blind order lets the reviewer answer blind, else the first answered and undecided
    probe whose target is open (``skip`` left out: the page the reviewer is on)."""
    rows = [r for r in slot_rows(slot) if skip is None or r.probe.pk != skip.pk]
    blind = next((r for r in rows if r.blind is None and progress.answer_gate(r.probe).allowed), None)
    if blind is not None:
        return NextStep(blind.probe, "blind")
    target = next(
        (r for r in rows if r.blind and r.decision is None and progress.reveal_gate(r.probe).allowed), None
    )
    return NextStep(target.probe, "target") if target is not None else None


@dataclass(frozen=True)
class CandidateMark:
    """Where a candidate is marked on one rendered view, in percent of the view (the box drawn on it)."""

    view_id: str
    left: float
    top: float
    width: float
    height: float


@dataclass(frozen=True)
class CandidatePick:
    """One candidate a reviewer can pick by clicking: its public alias and the views that mark it."""

    alias: str
    marks: tuple[CandidateMark, ...]


def _mark_box(view_id: str, points: list[list[float]], width: int, height: int) -> CandidateMark | None:
    if not points or not width or not height:
        return None
    xs, ys = [float(p[0]) for p in points], [float(p[1]) for p in points]

    def pct(value: float, size: int) -> float:
        return round(max(0.0, min(100.0, 100 * value / size)), 2)

    left, top = pct(min(xs), width), pct(min(ys), height)
    return CandidateMark(view_id, left, top, pct(max(xs), width) - left, pct(max(ys), height) - top)


def candidate_picks(probe: Probe, aliases: list[str]) -> list[CandidatePick]:
    """The probe's candidates (public aliases, in contract order) with the boxes drawn for them on its
    attached views: what the prompt and the attachments already show, nothing private."""
    attached = set(probe.attachment_ids)
    marks: dict[str, list[CandidateMark]] = {alias: [] for alias in aliases}
    for view in probe.views.all():
        if view.view_id not in attached:
            continue
        for mark in view.marks:
            box = _mark_box(view.view_id, mark.get("points_px") or [], view.width, view.height)
            if mark.get("alias") in marks and box is not None:
                marks[mark["alias"]].append(box)
    return [CandidatePick(alias, tuple(marks[alias])) for alias in aliases]


def attachment_rows(probe: Probe, picks: list[CandidatePick]) -> list[dict[str, Any]]:
    """The probe's attachments in order, each with the candidate marks to click on it (none without picks)."""
    on_view: dict[str, list[dict[str, Any]]] = {}
    for pick in picks:
        for mark in pick.marks:
            on_view.setdefault(mark.view_id, []).append({"alias": pick.alias, "mark": mark})
    return [{"asset_id": a, "picks": on_view.get(a, [])} for a in probe.attachment_ids]


def my_slot_list(reviewer: Any) -> QuerySet[ReviewSlot]:
    """Every slot the reviewer holds (the API pages it by ``-pk``, the queue page orders it by claim)."""
    return ReviewSlot.objects.filter(reviewer=reviewer).select_related("parent")


def my_slots(reviewer: Any) -> list[dict[str, Any]]:
    slots = list(my_slot_list(reviewer).order_by("-claimed_at"))
    counts = slot_work_counts(slots)
    return [{"slot": slot, "total": counts[slot.pk][0], "remaining": counts[slot.pk][1]} for slot in slots]


def slot_work_counts(slots: list[ReviewSlot]) -> dict[int, tuple[int, int]]:
    """For each slot, ``(len(slot_work(slot, include_done=True)), len(slot_work(slot)))`` in a constant number
    of queries (the slots' live probes, their audit plans, the adjudicators' decisions, the slots' own
    decisions)."""
    if not slots:
        return {}
    probes: dict[int, list[tuple[int, str, str]]] = {}
    for pk, parent_id, qid, root in (
        live_probes()
        .filter(parent_id__in={s.parent_id for s in slots})
        .values_list("pk", "parent_id", "logical_probe_id", "review_target_root")
    ):
        probes.setdefault(parent_id, []).append((pk, qid, root))
    plan_ids = {s.context.split(":", 1)[1] for s in slots if s.context != DEVELOPMENT}
    plans = {
        str(pk): roots
        for pk, roots in AuditPlan.objects.filter(
            pk__in=[p for p in plan_ids if p.isascii() and p.isdigit()]
        ).values_list("pk", "target_roots")
    }
    work: dict[int, list[tuple[int, str, str]]] = {}
    for slot in slots:
        rows = probes.get(slot.parent_id, [])
        if slot.context != DEVELOPMENT:
            targets = plans.get(slot.context.split(":", 1)[1])
            rows = [r for r in rows if targets is not None and r[1] in targets]
        work[slot.pk] = rows
    adjudicating = [s for s in slots if s.role == Role.ADJUDICATOR]
    if adjudicating:
        roots = {pk: root for s in adjudicating for pk, _, root in work[s.pk]}
        found = fresh_decisions(roots, {s.context for s in adjudicating})
        for slot in adjudicating:
            work[slot.pk] = [
                r
                for r in work[slot.pk]
                if outcome_of(found.get((slot.context, r[0]), {}), slot.context, ignore_resolution=True).state
                == "adjudication"
            ]
    done: dict[int, set[tuple[int, str]]] = {}
    for slot_id, probe_id, root in ReviewDecision.objects.filter(slot__in=[s.pk for s in slots]).values_list(
        "slot_id", "probe_id", "review_target_root"
    ):
        done.setdefault(slot_id, set()).add((probe_id, root))
    return {
        slot.pk: (
            len(work[slot.pk]),
            sum((pk, root) not in done.get(slot.pk, set()) for pk, _, root in work[slot.pk]),
        )
        for slot in slots
    }


def open_contexts() -> list[tuple[str, str]]:
    """(context, label) pairs a reviewer may take work from: development, then each audit plan."""
    contexts = [(DEVELOPMENT, "Development review")]
    accepted = AuditAssessment.objects.filter(plan=OuterRef("pk"), accepted=True)
    for plan in (
        AuditPlan.objects.select_related("campaign").annotate(done=Exists(accepted)).order_by("-pk")[:10]
    ):
        if not plan.done:
            contexts.append(
                (plan.context, f"Audit {plan.campaign.campaign_id[:12]}… round {plan.round_number}")
            )
    return contexts


def development_without_slots() -> dict[str, int]:
    """Development parents with live probes and no slot yet, per role (primary, secondary): their slots are
    made by the first claim (:func:`review.services.review_slots_ensure_development`), so they wait too."""
    dev_parents = live_probes().filter(split=Probe.Split.DEVELOPMENT).values("parent_id").distinct()
    return dict(
        ParentProblem.objects.filter(pk__in=dev_parents).aggregate(
            **{
                role: Count(
                    "pk",
                    filter=~Exists(
                        ReviewSlot.objects.filter(parent=OuterRef("pk"), context=DEVELOPMENT, role=role)
                    ),
                )
                for role in (Role.PRIMARY, Role.SECONDARY)
            }
        )
    )


def unclaimed_counts() -> dict[tuple[str, str], int]:
    """Unclaimed slots per (context, role), development parents still without a slot counted as waiting."""
    counts: dict[tuple[str, str], int] = {
        (context, role): n
        for context, role, n in ReviewSlot.objects.filter(reviewer__isnull=True)
        .values_list("context", "role")
        .annotate(n=Count("pk"))
        .values_list("context", "role", "n")
        .order_by()
    }
    for role, n in development_without_slots().items():
        if n:
            counts[(DEVELOPMENT, role)] = counts.get((DEVELOPMENT, role), 0) + n
    return counts


def development_parents_state() -> dict[str, Any]:
    """Development parents: which are fully approved, which are incomplete, which carry a blocking finding."""
    probes = list(live_probes().filter(split=Probe.Split.DEVELOPMENT).select_related("parent"))
    by_parent: dict[str, list[Probe]] = {}
    for probe in probes:
        by_parent.setdefault(probe.parent.problem_id, []).append(probe)
    approved = sorted(
        pid for pid, ps in by_parent.items() if all(p.state == Probe.State.APPROVED for p in ps)
    )
    blocking = sorted(_blocking_findings(probes))
    roots = {p.logical_probe_id: p.review_target_root for pid in approved for p in by_parent[pid]}
    return {
        "parents": sorted(by_parent),
        "approved_parents": approved,
        "incomplete": sorted(set(by_parent) - set(approved)),
        "blocking": blocking,
        "roots": roots,
    }


def _blocking_findings(probes: list[Probe]) -> set[str]:
    """Probes with a systemic or information finding on their current root: in-app decisions on the
    development context and imported Kit decisions alike (a Kit file cannot bypass what blocks ours)."""
    blocking = ("systemic", "information")
    found: list[ReviewDecision | KitDecision] = [
        *ReviewDecision.objects.filter(
            slot__context=DEVELOPMENT, severity__in=blocking, probe__in=probes
        ).select_related("probe"),
        *KitDecision.objects.filter(severity__in=blocking, probe__in=probes).select_related("probe"),
    ]
    return {d.probe.logical_probe_id for d in found if d.review_target_root == d.probe.review_target_root}


def plan_findings(plan: AuditPlan) -> dict[str, Any]:
    """The plan's findings on the roots it audited, as the pure assessment wants them."""
    audited = set(plan.sample) | set(plan.risk)
    probes = (
        Probe.objects.filter(logical_probe_id__in=list(plan.target_roots))
        .select_related("parent")
        .order_by("logical_probe_id")
    )
    probes_by_parent: dict[str, list[str]] = {pid: [] for pid in audited}
    for probe in probes:
        probes_by_parent.setdefault(probe.parent.problem_id, []).append(probe.logical_probe_id)
    slots: dict[str, dict[str, audit_stats.Finding]] = {
        Role.PRIMARY: {},
        Role.SECONDARY: {},
        Role.ADJUDICATOR: {},
    }
    for decision in ReviewDecision.objects.filter(slot__context=plan.context).select_related("probe"):
        qid = decision.probe.logical_probe_id
        if plan.target_roots.get(qid) == decision.review_target_root:
            slots[decision.role][qid] = finding_of(decision)
    return {
        "probes_by_parent": probes_by_parent,
        "primary": slots[Role.PRIMARY],
        "secondary": slots[Role.SECONDARY],
        "resolutions": slots[Role.ADJUDICATOR],
    }


# Blind order and the reveal -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gate:
    """Whether a step is open now; when not, a stable ``code`` and a sentence for the reviewer."""

    allowed: bool
    code: str = ""
    message: str = ""


OPEN = Gate(True)


def blind_order_of(context: str) -> str:
    """The context's blind order: strict unless an admin chose the Kit's order for it."""
    row = ReviewContextSetting.objects.filter(context=context).values_list("blind_order", flat=True).first()
    return row or BlindOrder.STRICT


@dataclass(frozen=True)
class BlindProgress:
    """Where one reviewer stands in one slot: which probes they answered blind (on the current roots) and
    what the context's blind order lets them do next. Every page, API view and service asks this."""

    slot: ReviewSlot
    order: str
    probes: tuple[Probe, ...]  # the slot's work, blind-first first
    answered: frozenset[int]  # pks of the slot's probes with this slot's blind answer on the current root

    @property
    def remaining(self) -> list[Probe]:
        return [p for p in self.probes if p.pk not in self.answered]

    def _first_pending(self) -> bool:
        first = next((p for p in self.probes if p.logical_probe_id == self.slot.blind_first_probe_id), None)
        return (
            self.slot.role in (Role.PRIMARY, Role.SECONDARY)
            and first is not None
            and first.pk not in self.answered
        )

    def answer_gate(self, probe: Probe) -> Gate:
        if probe.pk in self.answered:
            return Gate(False, "BLIND_ANSWER_IMMUTABLE", "Your blind answer was submitted and cannot change.")
        if probe.logical_probe_id != self.slot.blind_first_probe_id and self._first_pending():
            return Gate(
                False,
                "AUDIT_BLIND_FIRST_ORDER_NOT_RESPECTED",
                "Answer this parent's blind-first probe first; the others open after it.",
            )
        return OPEN

    def reveal_gate(self, probe: Probe) -> Gate:
        if probe.pk not in self.answered:
            return Gate(False, "BLIND_ANSWER_REQUIRED", "Submit your blind answer first.")
        if self.order == BlindOrder.STRICT and self.remaining:
            left = len(self.remaining)
            return Gate(
                False,
                "BLIND_ORDER_STRICT",
                f"Answer every probe of this parent blind before any target is shown (strict blind "
                f"order): {left} probe{'s' if left != 1 else ''} still to answer.",
            )
        return OPEN


def blind_progress(slot: ReviewSlot) -> BlindProgress:
    probes = tuple(slot_work(slot, include_done=True))
    answered = frozenset(
        BlindAnswer.objects.filter(slot=slot, probe__in=[p.pk for p in probes]).values_list(
            "probe_id", "review_target_root"
        )
    )
    roots = {p.pk: p.review_target_root for p in probes}
    return BlindProgress(
        slot=slot,
        order=blind_order_of(slot.context),
        probes=probes,
        answered=frozenset(pk for pk, root in answered if roots.get(pk) == root),
    )


BLIND_ORDER_NAMES: dict[str, str] = {
    BlindOrder.STRICT: "strict blind order",
    BlindOrder.KIT: "Kit blind order",
}


def blind_order_name(order: str) -> str:
    """The one wording of a blind order, on the queue, the slot page and the target page alike."""
    return BLIND_ORDER_NAMES.get(order, BLIND_ORDER_NAMES[BlindOrder.STRICT])


@dataclass(frozen=True)
class Withholding:
    """What no response to one slot's reviewer may carry, and why (``redaction.WithheldProbes``)."""

    strings: frozenset[str]
    reasons: redaction.WithheldProbes
    order: str

    @property
    def message(self) -> str:
        return redaction.withholding_message(self.reasons, order_name=blind_order_name(self.order))


def _settled_by_both(slot: ReviewSlot, probes: list[Probe]) -> set[int]:
    """Probes whose primary and secondary decisions (this context, current root) agree: no dispute brings them
    to an adjudicator."""
    found = fresh_decisions({p.pk: p.review_target_root for p in probes}, {slot.context})
    settled = set()
    for probe in probes:
        decisions = found.get((slot.context, probe.pk), {})
        both = Role.PRIMARY in decisions and Role.SECONDARY in decisions
        if both and outcome_of(decisions, slot.context, ignore_resolution=True).state != "adjudication":
            settled.add(probe.pk)
    return settled


def _blind_to(slot: ReviewSlot, probes: list[Probe], answered: set[tuple[int, str]]) -> dict[int, str]:
    """The parent's probes this slot's reviewer must stay blind to, each with its reason (the fields of
    ``redaction.WithheldProbes``): see the rule in ``review.redaction``."""
    unanswered = [p for p in probes if (p.pk, p.review_target_root) not in answered]
    scope = {p.pk for p in in_context(slot.context, unanswered)}
    if slot.role != Role.ADJUDICATOR:
        return {p.pk: "own_unanswered" if p.pk in scope else "outside" for p in unanswered}
    work = {p.pk for p in slot_work(slot, include_done=True)}
    settled = _settled_by_both(slot, [p for p in unanswered if p.pk in scope and p.pk not in work])
    reasons = {}
    for probe in unanswered:
        if probe.pk in work:
            reasons[probe.pk] = "own_unanswered"
        elif probe.pk not in scope:
            reasons[probe.pk] = "outside"
        elif probe.pk not in settled:
            reasons[probe.pk] = "undecided"
    return reasons


def withholding_for(slot: ReviewSlot) -> Withholding:
    """The private strings no response to this slot's reviewer may carry: those of every live probe of the
    parent the reviewer must stay blind to (not answered blind on its current root, in any slot, and still
    possibly theirs to answer), less what the parent's public prompts already show."""
    probes = list(live_probes().filter(parent_id=slot.parent_id).select_related("key"))
    answered = set(
        BlindAnswer.objects.filter(reviewer_id=slot.reviewer_id, probe__in=probes).values_list(
            "probe_id", "review_target_root"
        )
    )
    public = "\n".join(
        f"{p.raw_messages.get('system', '')}\n{p.raw_messages.get('user', '')}" for p in probes
    )
    blind_to = _blind_to(slot, probes, answered)
    strings: set[str] = set()
    for probe in probes:
        if probe.pk in blind_to:
            strings |= redaction.private_strings(
                key=probe.key.key, gold_view=probe.gold_view, metadata=probe.metadata
            )
    reasons = list(blind_to.values())
    return Withholding(
        strings=redaction.withheld(strings, public_text=public),
        reasons=redaction.WithheldProbes(
            own_unanswered=reasons.count("own_unanswered"),
            undecided=reasons.count("undecided"),
            outside=reasons.count("outside"),
        ),
        order=blind_order_of(slot.context),
    )


def withheld_for(slot: ReviewSlot) -> frozenset[str]:
    """The strings of :func:`withholding_for`."""
    return withholding_for(slot).strings


def _decision_view(decision: ReviewDecision) -> dict[str, Any]:
    return {
        "reviewer": decision.reviewer.get_username(),
        "role": decision.role,
        "status": decision.status,
        "severity": decision.severity,
        "confirmations": decision.confirmations,
        "packet_state": decision.packet_state,
        "note": decision.note,
        "sequence": decision.sequence,
        "review_target_root": decision.review_target_root,
        "blind_matched": decision.blind.matches_target,
        "blind_display": decision.blind.display,
        "blind_reason": decision.blind.reason,
    }


def reveal_payload(slot: ReviewSlot, probe: Probe) -> dict[str, Any]:
    """The private side of one probe for the slot's reviewer, the only place it is assembled (the target
    page and the target API both render it). Callers check ``BlindProgress.reveal_gate`` first; the payload
    is redacted of every sibling's private strings the reviewer has not answered blind."""
    key = probe.key.view
    blind = BlindAnswer.objects.get(slot=slot, probe=probe, review_target_root=probe.review_target_root)
    others = probe_decisions(probe, slot.context) if slot.role == Role.ADJUDICATOR else {}
    withholding = withholding_for(slot)
    payload = {
        "logical_probe_id": probe.logical_probe_id,
        "interface": probe.interface,
        "review_target_root": probe.review_target_root,
        "expected_binding_aliases": probe.key.gold_aliases,
        "read": [
            {
                "anchor_alias": r["anchor_alias"],
                "expected": r["expected"],
                "normalizer_id": r["normalizer_id"],
            }
            for r in key.read_targets
        ],
        "packet": probe.gold_view.get("recognition_packet", []),
        "packet_plan": key.packet_plan,
        "gold_messages": probe.gold_messages,
        "source_records": key.source_records,
        "diagnostics": probe.metadata,
        "candidate_map": key.candidate_map,
        "blind_answer": {
            "answer": blind.answer,
            "cannot_answer": blind.cannot_answer,
            "reason": blind.reason,
            "matches_target": blind.matches_target,
            "sequence": blind.sequence,
            "display": blind.display,
        },
        "other_decisions": [_decision_view(others[r]) for r in (Role.PRIMARY, Role.SECONDARY) if r in others],
    }
    redacted = redaction.redact(payload, withholding.strings)
    redacted["withheld"] = redacted != payload
    redacted["withheld_because"] = withholding.message if redacted["withheld"] else ""
    return redacted


def audit_campaign_list() -> QuerySet[AuditCampaign]:
    """Audit campaigns with their plans (one query for every campaign's plan ids)."""
    return AuditCampaign.objects.prefetch_related("plans")


# Kit review decisions ------------------------------------------------------------------------------------------
def kit_decision_overview() -> dict[str, Any]:
    """Imported Kit drafts (how many of their probes are bound to ours) and the decisions imported through them."""
    drafts = []
    for record in KitDraftImport.objects.select_related("imported_by").prefetch_related("decisions"):
        decisions = list(record.decisions.all())
        drafts.append(
            {
                "record": record,
                "bound": len(record.summary.get("bound", [])),
                "differing": sorted(record.summary.get("differing", {}).items()),
                "kit_probes": record.summary.get("kit_probes", 0),
                "approved": sum(d.status == "approved" for d in decisions),
                "rejected": sum(d.status == "rejected" for d in decisions),
            }
        )
    recent = KitDecision.objects.select_related("probe", "imported_by").order_by("-created_at")[:50]
    return {"drafts": drafts, "recent": recent}
