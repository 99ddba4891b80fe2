"""Who stays blind to what, and the words that say so (issue 28 item 9); the next step of a slot and the
candidates a reviewer can click (item 8)."""

from __future__ import annotations

import pytest

from probes.models import Probe
from review import redaction, services
from review.models import Role
from review.redaction import WITHHELD, WithheldProbes, withholding_message
from review.selectors import (
    _blind_to,
    blind_order_name,
    blind_progress,
    candidate_picks,
    next_step,
    reveal_payload,
    withholding_for,
)
from tests.review.test_flow import approve, gold_blind, review_all

ANSWERED_HINT = "appears once you have answered"


def test_own_unanswered_probes_appear_once_answered_in_the_right_number():
    one = withholding_message(WithheldProbes(own_unanswered=1), order_name="Kit blind order")
    assert one == (
        f"Some text is withheld (shown as {WITHHELD}): it is private to 1 probe of this parent that you have not "
        "answered blind yet (the Kit blind order opens each target after your own blind answer): it appears once "
        "you have answered it."
    )
    two = withholding_message(WithheldProbes(own_unanswered=2), order_name="strict blind order")
    assert "2 probes of this parent" in two and two.endswith("once you have answered them.")


def test_an_adjudicator_is_never_told_to_answer_probes_that_are_not_theirs():
    text = withholding_message(WithheldProbes(undecided=2), order_name="strict blind order")
    assert ANSWERED_HINT not in text
    assert (
        "2 other probes of this parent that the primary and secondary reviewers have not both decided" in text
    )
    outside = withholding_message(WithheldProbes(outside=1), order_name="strict blind order")
    assert (
        ANSWERED_HINT not in outside and "1 probe of this parent that is not part of this review" in outside
    )
    assert withholding_message(WithheldProbes(), order_name="strict blind order") == ""
    assert not WithheldProbes().any and WithheldProbes(outside=1).any


def test_one_wording_per_order():
    assert blind_order_name("strict") == "strict blind order"
    assert blind_order_name("kit") == "Kit blind order"
    assert blind_order_name("anything else") == "strict blind order"


def _dispute_one(demo_probes, reviewers):
    """alice approves every probe as primary; dave rejects the blind-first probe as secondary with a note that
    quotes another probe's private read target; carol claims the adjudication."""
    alice, dave, carol = reviewers["alice"], reviewers["dave"], reviewers["carol"]
    primary = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    review_all(primary, alice)
    target = Probe.objects.select_related("key").get(logical_probe_id=primary.blind_first_probe_id)
    probes = list(Probe.objects.select_related("key").filter(parent_id=primary.parent_id))
    public = "\n".join(
        f"{p.raw_messages.get('system', '')}\n{p.raw_messages.get('user', '')}" for p in probes
    )
    private = set()
    for p in probes:
        if p.pk != target.pk:
            private |= redaction.private_strings(key=p.key.key, gold_view=p.gold_view, metadata=p.metadata)
    quoted = sorted(redaction.withheld(private, public_text=public), key=len)[-1]
    secondary = services.review_claim(reviewer=dave, role=Role.SECONDARY, context="development")

    def decide(probe):
        if probe.pk == target.pk:
            return services.DecisionIn(
                status="rejected",
                severity="serious",
                confirmations={},
                packet_state="rejected",
                note=f"[ownership doubt] covers the {quoted}-adjacent label",
            )
        return approve(probe)

    review_all(secondary, dave, decide=decide)
    slot = services.review_claim(reviewer=carol, role=Role.ADJUDICATOR, context="development")
    return slot, target, quoted


@pytest.mark.django_db
def test_an_adjudicator_reads_the_reviewers_notes_whole_once_the_rest_is_settled(demo_probes, reviewers):
    slot, target, quoted = _dispute_one(demo_probes, reviewers)
    probes = list(Probe.objects.filter(parent_id=slot.parent_id))
    # before the adjudicator's blind answer: only the disputed probe, their own, is withheld
    assert _blind_to(slot, probes, set()) == {target.pk: "own_unanswered"}
    services.review_submit_blind(
        slot=slot, probe=target, reviewer=reviewers["carol"], given=gold_blind(target)
    )
    assert withholding_for(slot).reasons == WithheldProbes()
    payload = reveal_payload(slot, target)
    assert not payload["withheld"] and payload["withheld_because"] == ""
    notes = [d["note"] for d in payload["other_decisions"]]
    assert f"[ownership doubt] covers the {quoted}-adjacent label" in notes
    assert [d["role"] for d in payload["other_decisions"]] == [Role.PRIMARY, Role.SECONDARY]


@pytest.mark.django_db
def test_primary_and_secondary_stay_blind_to_every_unanswered_probe(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    probes = list(Probe.objects.filter(parent_id=slot.parent_id))
    assert set(_blind_to(slot, probes, set()).values()) == {"own_unanswered"}
    assert withholding_for(slot).reasons == WithheldProbes(own_unanswered=3)


@pytest.mark.django_db
def test_next_step_answers_blind_first_then_opens_targets(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    first = next_step(slot, blind_progress(slot))
    assert first is not None and first.kind == "blind"
    assert first.probe.logical_probe_id == slot.blind_first_probe_id  # the blind-first probe leads
    # the strict order: nothing else may be answered before the blind-first probe
    assert next_step(slot, blind_progress(slot), skip=first.probe) is None
    services.review_submit_blind(slot=slot, probe=first.probe, reviewer=alice, given=gold_blind(first.probe))
    second = next_step(slot, blind_progress(slot))
    assert second is not None and second.kind == "blind" and second.probe.pk != first.probe.pk
    for probe in demo_probes:
        if probe.pk != first.probe.pk:
            services.review_submit_blind(slot=slot, probe=probe, reviewer=alice, given=gold_blind(probe))
    after = next_step(slot, blind_progress(slot))
    assert after is not None and after.kind == "target"
    for probe in demo_probes:
        services.review_decide(slot=slot, probe=probe, reviewer=alice, given=approve(probe))
    assert next_step(slot, blind_progress(slot)) is None


@pytest.mark.django_db
def test_candidate_picks_are_public_aliases_in_contract_order_with_their_boxes(demo_probes):
    marked = 0
    for probe in demo_probes:
        aliases = services.contract_of(probe)["aliases"]
        picks = candidate_picks(probe, aliases)
        assert [p.alias for p in picks] == aliases  # contract order, every candidate
        assert all(p.alias in probe.raw_messages["user"] for p in picks)  # nothing the prompt does not show
        for pick in picks:
            for mark in pick.marks:
                marked += 1
                assert mark.view_id in probe.attachment_ids
                assert 0 <= mark.left <= 100 and 0 <= mark.top <= 100
                assert 0 < mark.width <= 100 and 0 < mark.height <= 100
    assert marked  # the demo's views mark candidates to click
