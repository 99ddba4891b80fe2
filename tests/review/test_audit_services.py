"""Audit campaign → plan → assessment, round 2 and the new-version rule, signoff and the gated export,
driven through the services on three compiled demo parents (one development, two candidates)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ParentProblem
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release
from probes.releases import release_validate
from review import audit_stats, services
from review.models import SIGNOFF_KEYS, AuditAssessment, AuditPlan, ReviewSlot, Role, Signoff
from review.selectors import slot_work
from tests.probes.conftest import reapprove

from .conftest import DEV, A, B, compile_all, set_splits
from .test_flow import approve, gold_blind, review_all

NONCE = "5a" * 32
SIGN = {k: True for k in SIGNOFF_KEYS}


def approve_development(users) -> None:
    primary = services.review_claim(reviewer=users["alice"], role=Role.PRIMARY, context="development")
    review_all(primary, users["alice"])
    secondary = services.review_claim(reviewer=users["bob"], role=Role.SECONDARY, context="development")
    review_all(secondary, users["bob"])
    assert set(Probe.objects.filter(split=Probe.Split.DEVELOPMENT).values_list("state", flat=True)) == {
        "approved"
    }


def reject_serious(probe: Probe) -> services.DecisionIn:
    return services.DecisionIn(
        status="rejected",
        severity="serious",
        confirmations={},
        packet_state="rejected",
        note="[insufficient uniqueness] two owners fit",
    )


def review_context(plan: AuditPlan, user, role: str, *, decide=approve) -> list[ReviewSlot]:
    slots = []
    while True:
        try:
            slot = services.review_claim(reviewer=user, role=role, context=plan.context)
        except ApplicationError as error:
            assert error.code == "QUEUE_EMPTY"
            return slots
        review_all(slot, user, decide=decide)
        slots.append(slot)


def recompile_changed(*problem_ids: str) -> None:
    for parent in ParentProblem.objects.filter(problem_id__in=problem_ids):
        parent.stem += " The surface is smooth."
        parent.save()
        reapprove(parent)  # the source reviewer approves the passes again on the changed statement
    compile_all()
    set_splits()


def test_plan_needs_every_development_parent_approved(batch):
    campaign = services.audit_campaign_create(actor=batch["admin"], nonce=NONCE)
    with pytest.raises(ApplicationError) as error:
        services.audit_plan_create(campaign=campaign, actor=batch["admin"])
    assert error.value.code == "DEVELOPMENT_REVIEW_INCOMPLETE"
    assert not AuditPlan.objects.exists()


def test_campaign_plan_is_reproducible_from_the_nonce(batch):
    approve_development(batch)
    campaign = services.audit_campaign_create(actor=batch["admin"], nonce=NONCE)
    assert campaign.campaign_id.startswith("NAC-") and campaign.policy["alpha"] == "1/40"
    assert len(services.audit_campaign_create(actor=batch["admin"]).nonce) == 64  # random 32 bytes by default
    plan = services.audit_plan_create(campaign=campaign, actor=batch["admin"])
    assert (
        plan.candidates == [A, B] and plan.sample == [A, B] and plan.secondary == [A, B] and plan.risk == []
    )
    assert plan.seed == audit_stats.round_seed(NONCE, 1) and plan.uncovered_risk_tags == []
    again = audit_stats.draw_sample(
        nonce=NONCE, round_number=1, parents=services.batch_audit._candidate_parents()
    )
    assert (again.sample, again.secondary, again.blind_first) == (
        plan.sample,
        plan.secondary,
        plan.blind_first,
    )
    for pid in (A, B):
        qids = sorted(Probe.objects.filter(parent__problem_id=pid).values_list("logical_probe_id", flat=True))
        assert plan.blind_first[pid] == services.blind_first_probe(plan.seed, qids)
    slots = ReviewSlot.objects.filter(context=plan.context)
    assert sorted(slots.values_list("parent__problem_id", "role")) == [
        (A, "primary"),
        (A, "secondary"),
        (B, "primary"),
        (B, "secondary"),
    ]
    assert len(plan.target_roots) == 6


def test_accepted_assessment_records_decisions_then_signoff_exports_only_admitted_parents(batch, tmp_path):
    approve_development(batch)
    admin = batch["admin"]
    campaign = services.audit_campaign_create(actor=admin, nonce=NONCE)
    plan = services.audit_plan_create(campaign=campaign, actor=admin)
    blocked = services.audit_assess(plan=plan, actor=admin)
    assert not blocked.accepted and not blocked.complete
    assert blocked.result["blockers"] == ["PRIMARY_INCOMPLETE", "SECONDARY_INCOMPLETE_OR_ESCALATION_REQUIRED"]
    # the primary may not be the secondary of the same parent; alice takes primary, dave secondary
    review_context(plan, batch["alice"], Role.PRIMARY)
    with pytest.raises(ApplicationError) as error:
        services.review_claim(reviewer=batch["alice"], role=Role.SECONDARY, context=plan.context)
    assert error.value.code == "QUEUE_EMPTY"
    review_context(plan, batch["dave"], Role.SECONDARY)
    assessment = services.audit_assess(plan=plan, actor=admin)
    assert assessment.accepted and assessment.complete and assessment.result["blockers"] == []
    risk = assessment.result["risk"]
    assert (risk["population_parents"], risk["sample_parents"], risk["detected_sample_parents"]) == (2, 2, 0)
    assert (
        risk["upper_defective_parents_original"],
        risk["upper_remaining_numerator"],
        risk["passes_5_percent"],
    ) == (0, 0, True)
    assert assessment.result["retained_parents"] == [A, B]
    assert set(Probe.objects.filter(split=Probe.Split.UNASSIGNED).values_list("state", flat=True)) == {
        "approved"
    }

    # signoff: all six confirmations and an evidence reference are required
    with pytest.raises(ApplicationError) as error:
        services.signoff_create(
            actor=admin,
            mode="audit",
            assessment=assessment,
            confirmations={**SIGN, "data_use_authorized": False},
            evidence_ref="audit",
        )
    assert error.value.code == "SIGNOFF_CONFIRMATIONS_INCOMPLETE" and error.value.extra["missing"] == [
        "data_use_authorized"
    ]
    with pytest.raises(ApplicationError) as error:
        services.signoff_create(
            actor=admin, mode="audit", assessment=blocked, confirmations=SIGN, evidence_ref="x"
        )
    assert error.value.code == "ASSESSMENT_NOT_ACCEPTED"
    with pytest.raises(ApplicationError) as error:
        services.signoff_create(
            actor=admin, mode="audit", assessment=assessment, confirmations=SIGN, evidence_ref=" "
        )
    assert error.value.code == "SIGNOFF_EVIDENCE_REQUIRED"
    signoff = services.signoff_create(
        actor=admin,
        mode="audit",
        assessment=assessment,
        confirmations=SIGN,
        evidence_ref="campaign " + campaign.campaign_id,
    )
    assert (signoff.split, signoff.problem_ids, signoff.target_root) == (
        "test",
        [A, B],
        assessment.result_root,
    )

    # the command refuses without a signoff, and exports through one
    with pytest.raises(CommandError, match="SIGNOFF_REQUIRED"):
        call_command("export_release", "--split", "test", "--output", str(tmp_path / "x"), stdout=StringIO())
    out = StringIO()
    call_command(
        "export_release", "--signoff", str(signoff.pk), "--output", str(tmp_path / "rel"), stdout=out
    )
    release = Release.objects.get()
    assert release.split == "test" and out.getvalue().startswith(release.release_id)
    report = release_validate(tmp_path / "rel")
    assert report.valid, report.errors
    assert (
        max(v["mothers"] for v in release.counts.values()) == 2
        and max(v["probes"] for v in release.counts.values()) == 6
    )
    assert Signoff.objects.get(pk=signoff.pk).release_id == release.pk
    with pytest.raises(ApplicationError) as error:
        services.signoff_export(
            signoff=Signoff.objects.get(pk=signoff.pk), output=tmp_path / "again", actor=admin
        )
    assert error.value.code == "SIGNOFF_USED"


def test_signoff_is_refused_once_the_content_changed(batch, tmp_path):
    approve_development(batch)
    admin = batch["admin"]
    signoff = services.signoff_create(
        actor=admin, mode="individual", assessment=None, confirmations=SIGN, evidence_ref="development review"
    )
    assert (signoff.split, signoff.problem_ids) == ("development", [DEV])
    recompile_changed(DEV)
    with pytest.raises(ApplicationError) as error:
        services.signoff_export(signoff=signoff, output=tmp_path / "r", actor=admin)
    assert error.value.code in ("SIGNOFF_WRONG_VERSION_OR_TARGET", "NO_COMPLETE_APPROVED_PARENTS")
    assert not Release.objects.exists()


def test_individual_signoff_exports_the_approved_development_parents(batch, tmp_path):
    admin = batch["admin"]
    with pytest.raises(ApplicationError) as error:
        services.signoff_create(
            actor=admin, mode="individual", assessment=None, confirmations=SIGN, evidence_ref="x"
        )
    assert error.value.code == "NO_COMPLETE_APPROVED_PARENTS"
    approve_development(batch)
    signoff = services.signoff_create(
        actor=admin, mode="individual", assessment=None, confirmations=SIGN, evidence_ref="development review"
    )
    release = services.signoff_export(signoff=signoff, output=tmp_path / "dev", actor=admin)
    assert release.split == "development"
    # The release carries its review proof and signoff: the Kit-rules validation accepts it as signed.
    report = release_validate(tmp_path / "dev")
    assert report.valid, report.errors
    assert (tmp_path / "dev" / "private" / "signoff.json").exists()
    assert (
        max(v["mothers"] for v in release.counts.values()) == 1
        and max(v["probes"] for v in release.counts.values()) == 3
    )


def test_missed_serious_finding_escalates_counts_originally_and_fails_the_bound(batch):
    """The secondary rejects a probe of A as serious, the primary approved it: adjudication by an independent
    adjudicator; even when the resolution approves, k counts the original finding and the bound fails."""
    approve_development(batch)
    admin = batch["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin, nonce=NONCE), actor=admin
    )
    review_context(plan, batch["alice"], Role.PRIMARY)
    target = plan.blind_first[A]

    def secondary_decide(probe):
        return reject_serious(probe) if probe.logical_probe_id == target else approve(probe)

    review_context(plan, batch["bob"], Role.SECONDARY, decide=secondary_decide)
    live = services.audit_assess_compute(plan)
    assert live.unresolved == [target] and live.escalated
    assert "UNRESOLVED_DISAGREEMENTS" in live.blockers
    # an adjudicator slot opened; alice (primary) and bob (secondary) cannot take it, carol can
    adj = ReviewSlot.objects.get(context=plan.context, role=Role.ADJUDICATOR)
    assert adj.parent.problem_id == A
    slot = services.review_claim(reviewer=batch["carol"], role=Role.ADJUDICATOR, context=plan.context)
    assert [p.logical_probe_id for p in slot_work(slot)] == [target]
    probe = Probe.objects.get(logical_probe_id=target)
    services.review_submit_blind(slot=slot, probe=probe, reviewer=batch["carol"], given=gold_blind(probe))
    services.review_decide(slot=slot, probe=probe, reviewer=batch["carol"], given=approve(probe))
    assessment = services.audit_assess(plan=plan, actor=admin)
    risk = assessment.result["risk"]
    assert assessment.complete and not assessment.accepted
    assert assessment.result["blockers"] == ["FINITE_POPULATION_BOUND_ABOVE_LIMIT"]
    assert assessment.result["original_observed_serious_sample_parents"] == [A]
    assert assessment.result["confirmed_excluded_parents"] == []
    # N=2, n=2, k=1: the bound is exactly 1; nothing removed, 1/2 > 1/20
    assert (
        risk["detected_sample_parents"],
        risk["upper_defective_parents_original"],
        risk["removed_confirmed_parents"],
        risk["upper_remaining_numerator"],
        risk["remaining_population_parents"],
    ) == (1, 1, 0, 1, 2)
    assert assessment.result["flagged_parents"] == [A]
    # nothing was recorded on the probes of a failed audit
    assert set(Probe.objects.filter(split=Probe.Split.UNASSIGNED).values_list("state", flat=True)) == {
        "pending_review"
    }
    with pytest.raises(ApplicationError) as error:
        services.signoff_create(
            actor=admin, mode="audit", assessment=assessment, confirmations=SIGN, evidence_ref="x"
        )
    assert error.value.code == "ASSESSMENT_NOT_ACCEPTED"


def test_confirmed_bad_parent_is_removed_whole_and_the_rest_is_accepted(batch):
    """Both reviewers reject a probe of A as serious: A is confirmed bad and removed whole. Census N=n=2, k=1,
    upper 1 = removed 1, so the finite-risk adjustment leaves 0 / 1 and the batch passes with B retained."""
    approve_development(batch)
    admin = batch["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin, nonce=NONCE), actor=admin
    )
    target = plan.blind_first[A]

    def decide(probe):
        return reject_serious(probe) if probe.logical_probe_id == target else approve(probe)

    review_context(plan, batch["alice"], Role.PRIMARY, decide=decide)
    review_context(plan, batch["bob"], Role.SECONDARY, decide=decide)
    assessment = services.audit_assess(plan=plan, actor=admin)
    risk = assessment.result["risk"]
    assert assessment.accepted, assessment.result["blockers"]
    assert assessment.result["confirmed_excluded_parents"] == [A] and assessment.result[
        "retained_parents"
    ] == [B]
    assert (
        risk["upper_defective_parents_original"],
        risk["removed_confirmed_parents"],
        risk["upper_remaining_numerator"],
        risk["remaining_population_parents"],
    ) == (1, 1, 0, 1)
    assert Probe.objects.get(logical_probe_id=target).state == "rejected"
    signoff = services.signoff_create(
        actor=admin, mode="audit", assessment=assessment, confirmations=SIGN, evidence_ref="audit"
    )
    assert signoff.problem_ids == [B]  # the excluded parent is not admitted


def test_systemic_finding_blocks_the_rule_version(batch):
    approve_development(batch)
    admin = batch["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin, nonce=NONCE), actor=admin
    )
    target = plan.blind_first[B]

    def decide(probe):
        if probe.logical_probe_id == target:
            return services.DecisionIn(
                status="rejected",
                severity="systemic",
                confirmations={},
                packet_state="rejected",
                note="[rule error] selector wrong",
            )
        return approve(probe)

    review_context(plan, batch["alice"], Role.PRIMARY, decide=decide)
    review_context(plan, batch["bob"], Role.SECONDARY, decide=decide)
    assessment = services.audit_assess(plan=plan, actor=admin)
    assert not assessment.accepted and assessment.complete
    assert "SYSTEMIC_OR_INFORMATION_DEFECT_WITHDRAW_RULE_VERSION" in assessment.result["blockers"]
    assert assessment.result["systemic_probe_ids"] == [target]


def _failed_round_one(batch) -> tuple[AuditPlan, AuditAssessment]:
    approve_development(batch)
    admin = batch["admin"]
    campaign = services.audit_campaign_create(actor=admin, nonce=NONCE)
    plan = services.audit_plan_create(campaign=campaign, actor=admin)
    targets = {plan.blind_first[A], plan.blind_first[B]}

    def decide(probe):
        return reject_serious(probe) if probe.logical_probe_id in targets else approve(probe)

    review_context(plan, batch["alice"], Role.PRIMARY, decide=decide)
    review_context(plan, batch["bob"], Role.SECONDARY, decide=decide)
    assessment = services.audit_assess(plan=plan, actor=admin)
    # both parents confirmed bad: nothing remains, so the bound cannot pass
    assert not assessment.accepted and assessment.complete
    assert assessment.result["blockers"] == ["FINITE_POPULATION_BOUND_ABOVE_LIMIT"]
    assert assessment.result["risk"]["remaining_population_parents"] == 0
    return plan, assessment


def test_round_two_needs_a_failed_complete_round_and_a_new_version_and_there_is_no_round_three(batch):
    plan, _ = _failed_round_one(batch)
    admin, campaign = batch["admin"], plan.campaign
    with pytest.raises(ApplicationError) as error:  # same candidates: no re-roll
        services.audit_plan_create(campaign=campaign, actor=admin)
    assert error.value.code == "AUDIT_ROUND2_SAME_VERSION"
    recompile_changed(A)  # A fixed, B (flagged too) unchanged
    with pytest.raises(ApplicationError) as error:
        services.audit_plan_create(campaign=campaign, actor=admin)
    assert error.value.code == "AUDIT_ROUND2_UNMODIFIED_CANDIDATE"
    assert {Probe.objects.get(logical_probe_id=q).parent.problem_id for q in error.value.extra["probes"]} == {
        B
    }
    recompile_changed(B)
    second = services.audit_plan_create(campaign=campaign, actor=admin)
    assert second.round_number == 2 and second.seed == audit_stats.round_seed(NONCE, 2)
    with pytest.raises(ApplicationError) as error:
        services.audit_plan_create(campaign=campaign, actor=admin)
    assert error.value.code == "AUDIT_ROUND_LIMIT"


def test_round_two_is_refused_after_an_incomplete_round_one(batch):
    approve_development(batch)
    admin = batch["admin"]
    campaign = services.audit_campaign_create(actor=admin, nonce=NONCE)
    services.audit_plan_create(campaign=campaign, actor=admin)
    with pytest.raises(ApplicationError) as error:  # no assessment at all
        services.audit_plan_create(campaign=campaign, actor=admin)
    assert error.value.code == "AUDIT_ROUND2_NOT_ALLOWED"
    services.audit_assess(plan=campaign.plans.get(), actor=admin)  # incomplete
    with pytest.raises(ApplicationError) as error:
        services.audit_plan_create(campaign=campaign, actor=admin)
    assert error.value.code == "AUDIT_ROUND2_NOT_ALLOWED"


def test_assessment_is_refused_when_audited_probes_changed(batch):
    approve_development(batch)
    admin = batch["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin, nonce=NONCE), actor=admin
    )
    recompile_changed(A)
    with pytest.raises(ApplicationError) as error:
        services.audit_assess(plan=plan, actor=admin)
    assert error.value.code == "AUDIT_STALE"


def test_finite_risk_adjustment_hand_values():
    # upper bound after removing confirmed bad parents: numerator = max(upper, removed) - removed over N - removed
    upper = audit_stats.hypergeom_upper(1099, 100, 1)
    risk = audit_stats.finite_risk(1099, 100, 1, 1)
    assert (risk.upper_original, risk.upper_remaining_numerator, risk.remaining) == (upper, upper - 1, 1098)
    assert risk.passes == ((upper - 1) * 20 <= 1098)
    # the bound obeys its definition at the edge: 40·P[X<=k] >= 1 at D=upper and < 1 at D=upper+1
    import math

    def tail(D):
        return sum(math.comb(D, x) * math.comb(1099 - D, 100 - x) for x in range(0, 2))

    assert 40 * tail(upper) >= math.comb(1099, 100) > 40 * tail(upper + 1)
    # risk parents can establish more removed parents than the interval: upper is raised to removed
    many = audit_stats.finite_risk(10, 2, 0, 5)
    assert many.upper_original == max(audit_stats.hypergeom_upper(10, 2, 0), 5)
