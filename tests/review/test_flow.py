"""Blind-first review end to end through services, pages and the API."""

from __future__ import annotations

import pytest
from django.utils.html import escape
from rest_framework.test import APIClient

from physalign_site.errors import ApplicationError
from probes.models import Probe
from review import services
from review.models import CONFIRMATION_KEYS, BlindAnswer, ReviewDecision, ReviewSlot, Role
from review.selectors import probe_outcome, slot_work
from tests.probes.conftest import reapprove

from .conftest import compile_all

ALL = {k: True for k in CONFIRMATION_KEYS}


def gold_blind(probe: Probe) -> services.BlindAnswerIn:
    return services.BlindAnswerIn(
        binding=probe.key.gold_aliases,
        read={r["anchor_alias"]: r["expected"] for r in probe.key.key["read_targets"]},
    )


def approve(probe: Probe) -> services.DecisionIn:
    ids = probe.key.key["packet_plan"]["observation_ids"]
    return services.DecisionIn(
        status="approved",
        severity="none",
        confirmations=ALL,
        packet_state="approved_nonempty" if ids else "approved_empty",
        packet_empty_reason="" if ids else "no_independent_readable_primitive",
    )


def answer_all_blind(slot: ReviewSlot, user, *, blind=gold_blind) -> list[Probe]:
    """Every probe of the slot still lacking this slot's blind answer, answered (blind-first first)."""
    work = slot_work(slot)
    answered = set(BlindAnswer.objects.filter(slot=slot).values_list("probe_id", "review_target_root"))
    for probe in work:
        if (probe.pk, probe.review_target_root) not in answered:
            services.review_submit_blind(slot=slot, probe=probe, reviewer=user, given=blind(probe))
    return work


def review_all(slot: ReviewSlot, user, *, decide=approve, blind=gold_blind) -> None:
    """The strict blind order: every probe answered blind, then every target revealed and decided."""
    for probe in answer_all_blind(slot, user, blind=blind):
        services.review_decide(slot=slot, probe=probe, reviewer=user, given=decide(probe))


def urls(slot: ReviewSlot, probe: Probe) -> dict[str, str]:
    base = f"/review/slots/{slot.pk}/probes/{probe.logical_probe_id}/"
    api = f"/api/review/slots/{slot.pk}/probes/{probe.logical_probe_id}/"
    return {
        "page": base,
        "target": base + "target/",
        "api_target": api + "target/",
        "api_blind": api + "blind/",
    }


@pytest.mark.django_db
def test_reveal_is_403_before_the_blind_answer_and_200_after_for_that_reviewer_only(demo_probes, reviewers):
    alice, bob = reviewers["alice"], reviewers["bob"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    probe = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    private = [probe.key.key["candidate_map"][a]["id"] for a in probe.key.gold_aliases]
    page, api = APIClient(), APIClient()
    page.force_login(alice)
    api.force_login(alice)
    u = urls(slot, probe)
    public = page.get(u["page"])
    assert public.status_code == 200
    body = public.content.decode()
    assert escape(probe.raw_messages["user"]) in body and escape(probe.raw_messages["system"]) in body
    for secret in private + ["Expected binding aliases", "candidate_map", "gold-aliases"]:
        assert secret not in body
    assert page.get(u["target"]).status_code == 403
    refused = api.get(u["api_target"])
    assert refused.status_code == 403 and all(s not in refused.content.decode() for s in private)

    assert "Submit your blind answer first" in page.get(u["target"]).content.decode()
    assert refused.data["code"] == "BLIND_ANSWER_REQUIRED"

    created = api.post(
        u["api_blind"],
        {
            "binding": probe.key.gold_aliases,
            "read": {r["anchor_alias"]: r["expected"] for r in probe.key.key["read_targets"]},
        },
        format="json",
    )
    assert created.status_code == 201, created.data
    strict = api.get(u["api_target"])  # the strict blind order: every probe of the parent first
    assert strict.status_code == 403 and strict.data["code"] == "BLIND_ORDER_STRICT"
    assert all(s not in strict.content.decode() for s in private)
    assert "2 probes still to answer" in page.get(u["target"]).content.decode()
    answer_all_blind(slot, alice)
    revealed = api.get(u["api_target"])
    assert revealed.status_code == 200
    assert revealed.data["expected_binding_aliases"] == probe.key.gold_aliases
    assert revealed.data["blind_answer"]["matches_target"] is True
    assert page.get(u["target"]).status_code == 200
    assert probe.key.gold_aliases[0] in page.get(u["target"]).content.decode()

    other = APIClient()
    other.force_login(bob)  # another reviewer cannot open alice's slot, before or after her answer
    assert other.get(u["api_target"]).status_code == 403
    assert other.get(u["target"]).status_code == 403


@pytest.mark.django_db
def test_blind_answer_is_immutable(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    probe = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    wrong = sorted(set(probe.key.key["candidate_map"]) - set(probe.key.gold_aliases))[:1]
    blind = services.review_submit_blind(
        slot=slot,
        probe=probe,
        reviewer=alice,
        given=services.BlindAnswerIn(
            binding=wrong, read={r["anchor_alias"]: "x" for r in probe.key.key["read_targets"]}
        ),
    )
    assert blind.matches_target is False
    with pytest.raises(ApplicationError) as error:
        services.review_submit_blind(slot=slot, probe=probe, reviewer=alice, given=gold_blind(probe))
    assert error.value.code == "BLIND_ANSWER_IMMUTABLE"
    blind.answer = {"owner": probe.key.gold_aliases}
    with pytest.raises(ApplicationError):
        blind.save()
    with pytest.raises(ApplicationError):
        blind.delete()
    client = APIClient()
    client.force_login(alice)
    again = client.post(urls(slot, probe)["api_blind"], {"binding": probe.key.gold_aliases}, format="json")
    assert again.status_code == 409
    stored = BlindAnswer.objects.get()
    assert stored.answer[probe.key.key["response_contract"]["binding_key"]] == wrong and stored.sequence == 1


@pytest.mark.django_db
def test_blind_first_probe_must_come_first(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    other = next(p for p in demo_probes if p.logical_probe_id != slot.blind_first_probe_id)
    with pytest.raises(ApplicationError) as error:
        services.review_submit_blind(slot=slot, probe=other, reviewer=alice, given=gold_blind(other))
    assert error.value.code == "AUDIT_BLIND_FIRST_ORDER_NOT_RESPECTED"
    assert not BlindAnswer.objects.exists()


@pytest.mark.django_db
def test_decision_rules(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    probe = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    with pytest.raises(ApplicationError) as error:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=approve(probe))
    assert error.value.code == "BLIND_ANSWER_REQUIRED"
    services.review_submit_blind(slot=slot, probe=probe, reviewer=alice, given=gold_blind(probe))
    with pytest.raises(ApplicationError) as error:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=approve(probe))
    assert error.value.code == "BLIND_ORDER_STRICT"
    answer_all_blind(slot, alice)
    partial = services.DecisionIn(
        **{**approve(probe).__dict__, "confirmations": {**ALL, "complete_targets": False}}
    )
    with pytest.raises(ApplicationError) as error:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=partial)
    assert error.value.code == "CONFIRMATIONS_INCOMPLETE"
    no_note = services.DecisionIn(
        status="rejected", severity="serious", confirmations={}, packet_state="rejected"
    )
    with pytest.raises(ApplicationError) as error:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=no_note)
    assert error.value.code == "REJECTION_NEEDS_NOTE"
    minor_reject = services.DecisionIn(
        status="rejected", severity="minor", confirmations={}, packet_state="rejected", note="x"
    )
    with pytest.raises(ApplicationError) as error:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=minor_reject)
    assert error.value.code == "REJECTION_NEEDS_SEVERITY"
    assert not ReviewDecision.objects.exists()


@pytest.mark.django_db
def test_two_reviewers_who_agree_approve_the_probe_and_its_packet(demo_probes, reviewers):
    alice, bob = reviewers["alice"], reviewers["bob"]
    primary = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    review_all(primary, alice)
    assert set(Probe.objects.values_list("state", flat=True)) == {
        "pending_review"
    }  # one reviewer is not enough
    with pytest.raises(ApplicationError) as error:  # alice cannot be her own second reviewer
        services.review_claim(reviewer=alice, role=Role.SECONDARY, context="development")
    assert error.value.code == "QUEUE_EMPTY"
    secondary = services.review_claim(reviewer=bob, role=Role.SECONDARY, context="development")
    assert secondary.parent_id == primary.parent_id
    review_all(secondary, bob)
    for probe in Probe.objects.select_related("key"):
        assert probe.state == "approved"
        ids = probe.key.key["packet_plan"]["observation_ids"]
        assert probe.packet_state == ("approved_nonempty" if ids else "approved_empty")
        assert probe.in_p == bool(ids)
    assert not ReviewSlot.objects.filter(role=Role.ADJUDICATOR).exists()


@pytest.mark.django_db
def test_disagreement_goes_to_an_independent_adjudicator(demo_probes, reviewers):
    alice, bob, carol, dave = reviewers["alice"], reviewers["bob"], reviewers["carol"], reviewers["dave"]
    primary = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    review_all(primary, alice)
    secondary = services.review_claim(reviewer=dave, role=Role.SECONDARY, context="development")
    target = Probe.objects.get(logical_probe_id=primary.blind_first_probe_id)

    def decide(probe):
        if probe.pk == target.pk:
            return services.DecisionIn(
                status="rejected",
                severity="serious",
                confirmations={},
                packet_state="rejected",
                note="[ownership doubt] the owner is not unique",
            )
        return approve(probe)

    review_all(secondary, dave, decide=decide)
    target.refresh_from_db()
    assert target.state == "pending_review" and probe_outcome(target, "development").state == "adjudication"
    # dave reviewed this parent as secondary, so he may not adjudicate it even though he holds the role
    with pytest.raises(ApplicationError):
        services.review_claim(reviewer=dave, role=Role.ADJUDICATOR, context="development")
    with pytest.raises(ApplicationError) as error:
        services.review_claim(reviewer=bob, role=Role.ADJUDICATOR, context="development")
    assert error.value.code == "ROLE_REQUIRED"
    slot = services.review_claim(reviewer=carol, role=Role.ADJUDICATOR, context="development")
    assert [p.pk for p in slot_work(slot)] == [target.pk]  # only the disputed probe
    services.review_submit_blind(slot=slot, probe=target, reviewer=carol, given=gold_blind(target))
    services.review_decide(
        slot=slot,
        probe=target,
        reviewer=carol,
        given=services.DecisionIn(
            status="rejected",
            severity="serious",
            confirmations={},
            packet_state="rejected",
            note="confirmed: owner ambiguous",
        ),
    )
    target.refresh_from_db()
    assert target.state == "rejected" and target.packet_state == "rejected"
    # no last-writer-wins: the adjudicator's decision is final and cannot be re-submitted
    with pytest.raises(ApplicationError):
        services.review_decide(slot=slot, probe=target, reviewer=carol, given=approve(target))
    # the adjudicator is refused on a probe that was not disputed
    other = next(p for p in demo_probes if p.pk != target.pk)
    with pytest.raises(ApplicationError):
        services.review_submit_blind(slot=slot, probe=other, reviewer=carol, given=gold_blind(other))


@pytest.mark.django_db
def test_decisions_go_stale_after_recompilation(demo_probes, reviewers):
    alice, bob = reviewers["alice"], reviewers["bob"]
    primary = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    review_all(primary, alice)
    secondary = services.review_claim(reviewer=bob, role=Role.SECONDARY, context="development")
    review_all(secondary, bob)
    before = {p.logical_probe_id: p.review_target_root for p in Probe.objects.all()}
    parent = demo_probes[0].parent
    parent.stem = parent.stem + " The surface is smooth."
    parent.save()
    reapprove(parent)  # the source reviewer approves the passes again on the changed statement
    compile_all()
    after = {p.logical_probe_id: p for p in Probe.objects.exclude(state="superseded")}
    changed = [q for q, p in after.items() if q in before and p.review_target_root != before[q]]
    assert changed, "changing the statement must change the review target root"
    for qid in changed:
        probe = after[qid]
        assert probe.state == "pending_review"
        assert probe_outcome(probe, "development").state == "pending"
        assert (
            ReviewDecision.objects.filter(probe=probe)
            .exclude(review_target_root=probe.review_target_root)
            .count()
            == 2
        )
    # the stale root is refused by the probe hand-off, and the same slot must review the new content
    from probes.services import probe_record_review

    with pytest.raises(ApplicationError) as error:
        probe_record_review(
            probe=after[changed[0]],
            actor=None,
            state="approved",
            packet_state="rejected",
            review_target_root=before[changed[0]],
        )
    assert error.value.code == "AUDIT_STALE"
    assert {p.logical_probe_id for p in slot_work(primary)} >= set(changed)
    review_all(primary, alice)
    review_all(secondary, bob)
    assert Probe.objects.get(logical_probe_id=changed[0]).state == "approved"


@pytest.mark.django_db
def test_queue_never_hands_a_taken_slot_to_a_second_reviewer(demo_probes, reviewers):
    one = services.review_claim(reviewer=reviewers["alice"], role=Role.PRIMARY, context="development")
    with pytest.raises(ApplicationError) as error:
        services.review_claim(reviewer=reviewers["bob"], role=Role.PRIMARY, context="development")
    assert error.value.code == "QUEUE_EMPTY"
    two = services.review_claim(reviewer=reviewers["bob"], role=Role.SECONDARY, context="development")
    assert (two.parent_id, two.role) == (one.parent_id, Role.SECONDARY)
    assert ReviewSlot.objects.get(pk=one.pk).reviewer == reviewers["alice"]
