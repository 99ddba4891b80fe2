"""Review pages per role through the Django client: the audit campaign/plan/assessment pages, signoff and the
export it gates, agreement (page and API) and accounting (paper Tables 4 and 5) with exact counts."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from probes.models import CompileIssue, Probe, Release
from review import services
from review.models import SIGNOFF_KEYS, AuditAssessment, AuditCampaign, AuditPlan, BlindAnswer, Role, Signoff
from tests.conftest import make_user

from .conftest import A, B
from .test_audit_services import approve_development, reject_serious, review_context
from .test_flow import approve, gold_blind, review_all

pytestmark = pytest.mark.django_db

ROLE_PAGES = ["/review/", "/review/agreement/", "/review/accounting/", "/review/audit/", "/review/signoff/"]
EXPECTED = {  # role → statuses of ROLE_PAGES
    "annotator": [403, 403, 403, 403, 403],
    "source_reviewer": [403, 403, 403, 403, 403],
    "probe_reviewer": [200, 403, 403, 403, 403],
    "adjudicator": [200, 200, 200, 403, 403],
    "admin": [200, 200, 200, 200, 200],
}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


@pytest.mark.parametrize("role", sorted(EXPECTED))
def test_review_pages_per_role(batch, django_user_model, role):
    user = make_user(django_user_model, f"who_{role}", role)
    client = client_for(user)
    assert [client.get(url).status_code for url in ROLE_PAGES] == EXPECTED[role]
    campaign = services.audit_campaign_create(actor=None)
    assert client.get(f"/review/audit/{campaign.pk}/").status_code == (200 if role == "admin" else 403)
    assert client.post("/review/audit/").status_code == (302 if role == "admin" else 403)
    assert Client().get("/review/audit/").status_code == 302  # anonymous → login


def _wrong_blind(probe: Probe) -> services.BlindAnswerIn:
    aliases = sorted(probe.key.key["candidate_map"])
    wrong = [a for a in aliases if a not in probe.key.gold_aliases][:1]
    return services.BlindAnswerIn(
        binding=wrong, read={r["anchor_alias"]: r["expected"] for r in probe.key.key["read_targets"]}
    )


def test_audit_and_signoff_pages_drive_campaign_plan_assessment_and_export(batch):
    approve_development(batch)
    admin = client_for(batch["admin"])
    response = admin.post("/review/audit/")
    campaign = AuditCampaign.objects.get()
    assert response.status_code == 302 and response.url == f"/review/audit/{campaign.pk}/"
    page = text(admin.get(response.url))
    assert "No plan yet" in page and "Draw round 1 plan" in page
    admin.post(response.url, {"action": "plan"})
    plan = AuditPlan.objects.get()
    page = text(admin.get(response.url))
    assert (
        "Candidates N 2" in page
        and "Random sample n 2" in page
        and "Pending primary / secondary 6 / 6" in page
    )
    assert "PRIMARY_INCOMPLETE" in page
    # the reviewers take the audit from their queue page
    queue = text(client_for(batch["alice"]).get("/review/"))
    assert "round 1" in queue and "Primary (2 waiting)" in queue
    target = plan.blind_first[A]

    def alice_blind(probe):
        return _wrong_blind(probe) if probe.logical_probe_id == target else gold_blind(probe)

    for _ in range(2):
        slot = services.review_claim(reviewer=batch["alice"], role=Role.PRIMARY, context=plan.context)
        review_all(slot, batch["alice"], blind=alice_blind)
    review_context(plan, batch["bob"], Role.SECONDARY)
    admin.post(response.url, {"action": "assess", "plan": plan.pk})
    assessment = AuditAssessment.objects.get()
    assert assessment.accepted
    page = text(admin.get(response.url))
    assert "Assessment" in page and "accepted" in page and "Retained parents 2, excluded 0" in page
    assert "Remaining bound 0 / 2 — passes the 5% limit" in page
    assert "Draw round 2 plan" not in page  # an accepted round needs no second one

    # the locked blind answer reads as the reviewer wrote it, not as a Python dict
    blind = BlindAnswer.objects.filter(slot__context=plan.context, reviewer=batch["alice"]).first()
    body = client_for(batch["alice"]).get(
        f"/review/slots/{blind.slot_id}/probes/{blind.probe.logical_probe_id}/"
    )
    assert blind.display in body.content.decode() and "{&#x27;" not in body.content.decode()

    # signoff page: a missing confirmation is refused with its code; six confirmations sign; export gated by it
    form = {
        "mode": "audit",
        "assessment": assessment.pk,
        "evidence_ref": "audit " + campaign.campaign_id,
        **{f"confirm_{k}": "on" for k in SIGNOFF_KEYS[:-1]},
    }
    refused = admin.post("/review/signoff/", form, follow=True)
    assert "SIGNOFF_CONFIRMATIONS_INCOMPLETE" in refused.content.decode() and not Signoff.objects.exists()
    admin.post("/review/signoff/", {**form, f"confirm_{SIGNOFF_KEYS[-1]}": "on"})
    signoff = Signoff.objects.get()
    assert signoff.problem_ids == [A, B] and signoff.split == "test"
    done = admin.post("/review/signoff/", {"action": "export", "signoff": signoff.pk}, follow=True)
    assert "exported" in done.content.decode()
    release = Release.objects.get()
    assert Signoff.objects.get().release_id == release.pk and release.split == "test"
    assert "Export release" not in text(admin.get("/review/signoff/"))

    # agreement: alice's blind answer differs on one of six probes, bob's all match. Aliases are seeded per probe,
    # so the six gold answers are six distinct labels; alice's wrong label W may coincide with another probe's.
    bob_labels = {
        q: BlindAnswer.objects.get(
            slot__context=plan.context, reviewer=batch["bob"], probe__logical_probe_id=q
        ).display
        for q in plan.target_roots
    }
    assert len(set(bob_labels.values())) == 6
    wrong = BlindAnswer.objects.get(
        slot__context=plan.context, reviewer=batch["alice"], probe__logical_probe_id=target
    ).display
    assert wrong != bob_labels[target]
    shared = wrong in bob_labels.values()
    # Cohen: p_o = 5/6; p_e = Σ_c a_c·b_c / 36 = (alice ratings whose label bob uses) / 36 = 6/36 or 5/36
    cohen = (30 / 36 - 6 / 36) / (30 / 36) if shared else (30 / 36 - 5 / 36) / (31 / 36)
    # Fleiss, pooled over 12 ratings: W 3 + gold(target) 1 + four labels 2 each → P_e = 26/144, or W 1 +
    # gold 1 + five labels 2 each → 22/144; P̄ = 5/6 = 120/144
    fleiss = (120 - 26) / (144 - 26) if shared else (120 - 22) / (144 - 22)
    api = client_for(batch["carol"]).get("/api/review/agreement/", {"context": plan.context}).json()
    (pair,) = api["blind"]["pairs"]
    assert (pair["rater_a"], pair["rater_b"], pair["items"]) == ("alice", "bob", 6)
    assert pair["observed"] == pytest.approx(5 / 6)
    assert pair["kappa"] == pytest.approx(cohen)
    assert api["blind"]["fleiss"] == pytest.approx(fleiss)
    assert api["blind"]["mean_probe_agreement"] == pytest.approx(5 / 6)
    assert api["decision"]["pairs"][0]["observed"] == 1.0 and api["decision"]["pairs"][0]["kappa"] is None
    assert api["decision"]["fleiss"] is None  # every decision approved/none: κ undefined
    assert {r["reviewer"]: (r["correct"], r["answered"]) for r in api["accuracy"]} == {
        "alice": (5, 6),
        "bob": (6, 6),
    }
    assert [row["blind"] for row in api["per_probe"]].count(0.0) == 1
    page = text(client_for(batch["carol"]).get("/review/agreement/", {"context": plan.context}))
    assert f"Fleiss' κ: {fleiss:.3f}" in page and f"alice · bob 6 0.833 {cohen:.3f}" in page
    assert "alice 5 6 0.833" in page and "bob 6 6 1.000" in page
    dev = client_for(batch["admin"]).get("/api/review/agreement/").json()
    assert dev["blind"]["pairs"][0]["kappa"] is not None and dev["blind"]["pairs"][0]["observed"] == 1.0

    # accounting: everything approved, nothing withheld, the six audited probes passed first review
    tables = text(admin.get("/review/accounting/"))
    blocked = CompileIssue.objects.exclude(task_id="parent").count()
    assert "Approved by human review 9 " in tables and "Rejected by human review 0 " in tables
    assert f"Blocked at compilation (probe groups, latest run) {blocked} " in tables
    assert f"Total generated candidates {9 + blocked} " in tables
    assert "Withheld through risk isolation 0 " in tables and "Retained probes 9 " in tables
    assert "Recompiled probes re-reviewed by humans 0 " in tables
    assert "SYNTHETIC_UNIT_TEST 6 6 100.00" in tables and "Total 6 6 100.00" in tables
    assert "Passed first review without revision 6 100.00" in tables
    assert "Rejected or unresolved; excluded 0 0.00" in tables
    assert "Final accepted within audited set 6 100.00" in tables


def test_accounting_counts_a_confirmed_bad_parent_as_withheld_and_excluded(batch):
    approve_development(batch)
    admin_user = batch["admin"]
    plan = services.audit_plan_create(
        campaign=services.audit_campaign_create(actor=admin_user), actor=admin_user
    )
    target = plan.blind_first[A]

    def decide(probe):
        return reject_serious(probe) if probe.logical_probe_id == target else approve(probe)

    review_context(plan, batch["alice"], Role.PRIMARY, decide=decide)
    review_context(plan, batch["bob"], Role.SECONDARY, decide=decide)
    assert services.audit_assess(plan=plan, actor=admin_user).accepted
    tables = text(client_for(batch["carol"]).get("/review/accounting/"))
    assert "Approved by human review 8 " in tables and "Rejected by human review 1 " in tables
    assert "Further review required (pending or in adjudication) 0 " in tables
    assert "Withheld through risk isolation 2 " in tables and "Retained probes 6 " in tables
    assert "SYNTHETIC_UNIT_TEST 6 6 100.00" in tables
    assert "Passed first review without revision 5 83.33" in tables
    assert "Rejected or unresolved; excluded 1 16.67" in tables
    assert "Final accepted within audited set 5 83.33" in tables
    assert "Not yet reviewed 0 0.00" in tables
