"""The whole review over the REST API only, as each role that may call it: claim, public probe, blind answer,
reveal, decision (201 with the outcome), then a disagreement settled by an adjudicator. The HTML form path is
covered in test_flow / test_pages; this is the API client's journey (the decision API once answered 500 on
every valid body)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from probes.models import Probe
from review.models import CONFIRMATION_KEYS, ReviewDecision

ALL = {k: True for k in CONFIRMATION_KEYS}


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _approve_body(target: dict) -> dict:
    empty = not target["packet_plan"]["observation_ids"]
    return {
        "status": "approved",
        "severity": "none",
        "confirmations": ALL,
        "packet_state": "approved_empty" if empty else "approved_nonempty",
        "packet_empty_reason": "no_independent_readable_primitive" if empty else "",
    }


REJECT = {
    "status": "rejected",
    "severity": "serious",
    "confirmations": {},
    "packet_state": "rejected",
    "note": "[ownership doubt] the owner is not unique",
}


def _review_over_api(user, role: str, *, reject: str | None = None) -> dict[str, dict]:
    """Claim a slot of ``role``, answer every probe blind (the public probe's own candidates), reveal and
    decide each; the decision answers of each probe by logical id."""
    client = _client(user)
    claim = client.post("/api/review/queue/", {"role": role, "context": "development"}, format="json")
    assert claim.status_code == 201, claim.content
    slot = claim.json()["id"]
    detail = client.get(f"/api/review/slots/{slot}/")
    assert detail.status_code == 200
    probes = [p["logical_probe_id"] for p in detail.json()["probes"]]
    keys = {
        p.logical_probe_id: p.key
        for p in Probe.objects.select_related("key").filter(logical_probe_id__in=probes)
    }
    for pid in probes:
        base = f"/api/review/slots/{slot}/probes/{pid}/"
        assert client.get(base).status_code == 200
        reads = {r["anchor_alias"]: r["expected"] for r in keys[pid].key["read_targets"]}
        blind = client.post(
            base + "blind/", {"binding": keys[pid].gold_aliases, "read": reads}, format="json"
        )
        assert blind.status_code == 201, blind.content
    answers = {}
    for pid in probes:
        base = f"/api/review/slots/{slot}/probes/{pid}/"
        target = client.get(base + "target/")
        assert target.status_code == 200, target.content
        body = REJECT if pid == reject else _approve_body(target.json())
        decision = client.post(base + "decision/", body, format="json")
        assert decision.status_code == 201, decision.content
        answers[pid] = decision.json()
    return answers


@pytest.mark.django_db
def test_every_reviewer_role_decides_over_the_api_and_gets_the_outcome(demo_probes, reviewers):
    alice, bob, carol = reviewers["alice"], reviewers["bob"], reviewers["carol"]
    first = _review_over_api(alice, "primary")
    assert {d["outcome"] for d in first.values()} == {"pending"}
    assert {d["probe_state"] for d in first.values()} == {"pending_review"}
    disputed = sorted(first)[0]
    second = _review_over_api(bob, "secondary", reject=disputed)
    assert second[disputed]["outcome"] == "adjudication"
    assert {second[p]["outcome"] for p in second if p != disputed} == {"approved"}
    final = _review_over_api(carol, "adjudicator")
    assert list(final) == [disputed]
    assert final[disputed]["outcome"] == "approved" and final[disputed]["probe_state"] == "approved"
    assert ReviewDecision.objects.count() == 3 + 3 + 1
    # a second decision on the same content is a 409, not a 500
    slot = ReviewDecision.objects.filter(reviewer=carol).get().slot_id
    again = _client(carol).post(
        f"/api/review/slots/{slot}/probes/{disputed}/decision/", REJECT, format="json"
    )
    assert again.status_code == 409 and ReviewDecision.objects.count() == 7


@pytest.mark.django_db
def test_an_admin_without_the_key_reviews_over_the_api(demo_probes, reviewers):
    answers = _review_over_api(reviewers["admin"], "primary")
    assert len(answers) == 3 and {d["outcome"] for d in answers.values()} == {"pending"}
