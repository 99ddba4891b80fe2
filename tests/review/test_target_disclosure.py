"""Who may know a target (DESIGN §5), attacked over HTTP: an admin without the key-holder permission sees scores
and parsed answers but no target, and whoever was shown a probe's target (or a score beside an answer) is never
handed its parent to review blind."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from audit.models import Disclosure
from evaluation.models import EvalRequest, EvalRun
from models_registry.models import ModelConfig
from probes.models import Probe
from review.models import BlindAnswer, ReviewSlot
from tests.conftest import make_user


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _private_strings(probes: list[Probe]) -> list[str]:
    """Strings only a probe's key holds: the entity ids behind its aliases."""
    strings = set()
    for probe in probes:
        strings |= set(probe.key.view.alias_to_entity.values())
    assert strings
    return sorted(strings)


def _key_holder(django_user_model, name: str):
    user = make_user(django_user_model, name, "admin")
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return user


@pytest.mark.django_db
def test_an_admin_without_the_key_reads_no_target_and_is_then_never_blind_on_that_parent(
    demo_probes, reviewers, django_user_model, eager, django_capture_on_commit_callbacks
):
    admin = reviewers["admin"]
    assert not admin.has_perm("probes.view_private_mapping")
    ModelConfig.objects.create(name="sim", provider="simulated", model="s", extra={"seed": 1})
    client = _client(admin)
    with django_capture_on_commit_callbacks(execute=True):
        launched = client.post(
            "/runs/", {"name": "peek", "models": ["sim"], "conditions": ["raw"], "resamples": 20}
        )
    assert launched.status_code == 302, launched.content
    run = EvalRun.objects.get(name="peek")
    assert run.status == EvalRun.Status.COMPLETED
    secrets = _private_strings(demo_probes)
    for row in EvalRequest.objects.filter(run=run):
        page = client.get(f"/eval-requests/{row.pk}/")
        assert page.status_code == 200
        html = page.content.decode()
        assert "C / G / J" in html and 'data-testid="parsed-answer"' in html  # scores and the parsed answer
        assert 'data-testid="targets-withheld"' in html and "Expected (private key)" not in html
        assert not [s for s in secrets if s in html]
        for target in row.probe.key.view.read_targets:
            assert f"<code>{target['expected']}</code>" not in html
    assert client.get(f"/runs/{run.pk}/download/items/").status_code == 403
    # the pages were read: every probe of the parent is recorded as disclosed to this admin
    seen = set(Disclosure.objects.filter(user=admin).values_list("logical_probe_id", flat=True))
    assert seen == {p.logical_probe_id for p in demo_probes}
    # ... so the queue never hands that parent to them, over the API or the page, and nothing is claimed
    claim = client.post("/api/review/queue/", {"role": "primary", "context": "development"}, format="json")
    assert claim.status_code == 404 and claim.json()["code"] == "QUEUE_EMPTY"
    assert "shown targets" in claim.json()["message"]
    page_claim = client.post("/review/claim/", {"role": "primary", "context": "development"})
    assert page_claim.status_code == 302
    assert not ReviewSlot.objects.filter(reviewer=admin).exists()
    assert not BlindAnswer.objects.exists()
    # a reviewer who was shown nothing gets the same parent
    fresh = _client(reviewers["alice"]).post(
        "/api/review/queue/", {"role": "primary", "context": "development"}, format="json"
    )
    assert fresh.status_code == 201


@pytest.mark.django_db
def test_a_claimed_slot_cannot_be_answered_blind_after_its_target_was_shown(
    demo_probes, reviewers, eager, django_capture_on_commit_callbacks
):
    admin = reviewers["admin"]
    client = _client(admin)
    claim = client.post("/api/review/queue/", {"role": "primary", "context": "development"}, format="json")
    assert claim.status_code == 201
    slot = claim.json()["id"]
    ModelConfig.objects.create(name="sim", provider="simulated", model="s", extra={"seed": 1})
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/runs/", {"name": "peek", "models": ["sim"], "conditions": ["raw"], "resamples": 20})
    row = EvalRequest.objects.filter(run__name="peek").first()
    assert client.get(f"/eval-requests/{row.pk}/").status_code == 200
    first = ReviewSlot.objects.get(pk=slot).blind_first_probe_id
    probe = Probe.objects.select_related("key").get(logical_probe_id=first)
    blind = client.post(
        f"/api/review/slots/{slot}/probes/{first}/blind/",
        {"binding": probe.key.gold_aliases},
        format="json",
    )
    assert blind.status_code == 403 and blind.json()["code"] == "TARGETS_SEEN"
    assert not BlindAnswer.objects.exists()


@pytest.mark.django_db
def test_a_key_holder_who_loses_the_permission_is_still_not_blind_on_what_they_saw(
    demo_probes, reviewers, django_user_model
):
    holder = _key_holder(django_user_model, "kim")
    holder.groups.add(*reviewers["alice"].groups.all())  # also a probe reviewer
    client = _client(holder)
    probe = demo_probes[0]
    page = client.get(f"/probes/{probe.logical_probe_id}/")
    assert page.status_code == 200 and probe.key.view.gold_entity_ids[0][:20] in page.content.decode()
    api = client.get(f"/api/probes/{probe.logical_probe_id}/")
    assert "private" in api.json()
    refused = client.post("/api/review/queue/", {"role": "primary", "context": "development"}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == "KEY_HOLDER_CANNOT_REVIEW"
    assert Disclosure.objects.filter(user=holder, logical_probe_id=probe.logical_probe_id).count() == 1
    holder.user_permissions.clear()
    holder = django_user_model.objects.get(pk=holder.pk)  # a new request: no cached permissions
    again = _client(holder).post(
        "/api/review/queue/", {"role": "primary", "context": "development"}, format="json"
    )
    assert again.status_code == 404 and again.json()["code"] == "QUEUE_EMPTY"
    assert not ReviewSlot.objects.filter(reviewer=holder).exists()


@pytest.mark.django_db
def test_answer_and_solution_are_for_key_holders_and_recorded(demo_probes, reviewers, django_user_model):
    parent = demo_probes[0].parent
    parent.answer, parent.solution = "ANSWER-ONLY-KEY-HOLDERS", "SOLUTION-ONLY-KEY-HOLDERS"
    parent.save(update_fields=["answer", "solution"])
    admin = reviewers["admin"]
    for url in (f"/problems/{parent.problem_id}/", f"/api/parents/{parent.problem_id}/"):
        body = _client(admin).get(url).content.decode()
        assert "ANSWER-ONLY-KEY-HOLDERS" not in body and "SOLUTION-ONLY-KEY-HOLDERS" not in body
    assert not Disclosure.objects.filter(user=admin).exists()
    holder = _key_holder(django_user_model, "kim")
    data = _client(holder).get(f"/api/parents/{parent.problem_id}/").json()
    assert data["answer"] == "ANSWER-ONLY-KEY-HOLDERS"
    assert Disclosure.objects.filter(user=holder, parent=parent, logical_probe_id="").exists()
