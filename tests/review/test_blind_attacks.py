"""Blind means blind for every probe of a parent (issue 12, items 3, 4, 6 and 8), tried through HTTP as the
probe reviewer who wants to learn a target before answering it.

The sibling-leak test collects each probe's private strings straight from its key (not through the app's own
redaction code), then walks every GET the reviewer can reach at every step of a review, in both blind orders,
and asserts that no private string of a probe the reviewer has not answered blind yet appears anywhere.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, connection, connections, transaction
from rest_framework.test import APIClient

from annotation.demo import generate_workspace
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem
from physalign_site.errors import ApplicationError
from probes.models import Probe
from review import services
from review.models import BlindAnswer, ReviewContextSetting, ReviewSlot, Role
from review.selectors import slot_work
from tests.conftest import make_user
from tests.probes.conftest import make_demo_parent

from .conftest import compile_all
from .test_flow import approve, gold_blind


def _key_strings(probe: Probe) -> set[str]:
    """A probe's private strings, read from its key: read targets, candidate→entity ids, gold ids, packet texts."""
    key = probe.key.key
    strings = {r["expected"] for r in key.get("read_targets", [])}
    strings |= {c["id"] for c in key["candidate_map"].values()} | {g["id"] for g in key["gold_targets"]}
    strings |= {e["text"] for e in probe.gold_view.get("recognition_packet", [])}
    return {s for s in strings if s.strip()}


def _typed_blind(probe: Probe, n: int) -> services.BlindAnswerIn:
    """A valid blind answer whose reads are made-up tokens, so what the reviewer typed is never a target."""
    contract = services.contract_of(probe)
    return services.BlindAnswerIn(
        binding=contract["aliases"][:1], read={a: f"typed-token-{n}-{a}" for a in contract["read_anchor_ids"]}
    )


# Per-request random tokens (CSP nonces, CSRF tokens) can contain any short string by chance, and ISO timestamps
# a short id such as "T2" between 20:00 and 23:59 ("…-01T20:13:51Z"); they are not content.
_RANDOM_TOKENS = re.compile(
    r'nonce="[^"]*"|"X-CSRFToken": "[^"]*"|name="csrfmiddlewaretoken" value="[^"]*"'
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)


class Walker:
    """Every GET a reviewer can reach for one slot: queue, slot, each probe's blind page and target page (HTML
    and API), the problem pages and the parent API."""

    def __init__(self, user, slot: ReviewSlot) -> None:
        self.client = APIClient()
        self.client.force_login(user)
        self.slot = slot

    def urls(self) -> list[str]:
        slot, pid = self.slot, self.slot.parent.problem_id
        urls = [
            "/review/",
            f"/review/slots/{slot.pk}/",
            "/api/review/queue/",
            f"/api/review/slots/{slot.pk}/",
            "/",
            f"/problems/{pid}/",
            f"/api/parents/{pid}/",
            "/api/parents/",
            f"/api/parents/{pid}/passes/",
            "/review/agreement/",
            "/api/review/agreement/",
            "/probes/",
            "/api/probes/",
        ]
        for probe in slot_work(slot, include_done=True):
            qid = probe.logical_probe_id
            urls += [
                f"/review/slots/{slot.pk}/probes/{qid}/",
                f"/review/slots/{slot.pk}/probes/{qid}/target/",
                f"/api/review/slots/{slot.pk}/probes/{qid}/",
                f"/api/review/slots/{slot.pk}/probes/{qid}/target/",
            ]
        return urls

    def bodies(self) -> dict[str, str]:
        found = {}
        for url in self.urls():
            response = self.client.get(url)
            assert response.status_code < 500, (url, response.status_code)
            found[url] = _RANDOM_TOKENS.sub("", response.content.decode())
        return found


def assert_no_sibling_leak(walker: Walker, reviewer, probes: list[Probe], public: str, step: str) -> int:
    answered = set(BlindAnswer.objects.filter(reviewer=reviewer).values_list("probe_id", flat=True))
    bodies = walker.bodies()
    checked = 0
    for probe in probes:
        if probe.pk in answered:
            continue
        for secret in _key_strings(probe) - {s for s in _key_strings(probe) if s in public}:
            checked += 1
            leaks = [
                url for url, body in bodies.items() if secret in body or json.dumps(secret)[1:-1] in body
            ]
            assert not leaks, (
                f"{step}: {secret!r} of unanswered {probe.logical_probe_id[:16]} leaked at {leaks}"
            )
    return checked


def _generated_parent(tmp_path: Path) -> None:
    generate_workspace(tmp_path / "ws", count=6, seed=2027)
    import_kit_workspace(workspace=tmp_path / "ws")
    compile_all()
    counts = {}
    for parent_id in Probe.objects.values_list("parent_id", flat=True):
        counts[parent_id] = counts.get(parent_id, 0) + 1
    biggest = max(counts, key=counts.get)
    Probe.objects.exclude(parent_id=biggest).delete()
    Probe.objects.update(split=Probe.Split.DEVELOPMENT)


@pytest.mark.django_db
@pytest.mark.parametrize("order", ["strict", "kit"])
@pytest.mark.parametrize("parent", ["kit_demo", "generated"])
def test_no_response_carries_a_private_string_of_an_unanswered_sibling(
    order, parent, tmp_path, django_user_model
):
    if parent == "kit_demo":
        make_demo_parent(django_user_model)
        compile_all()
    else:
        _generated_parent(tmp_path)
    probes = list(Probe.objects.select_related("key").exclude(state="superseded"))
    assert len(probes) >= 3
    if order == "kit":
        ReviewContextSetting.objects.create(context="development", blind_order="kit")
    reviewer = make_user(django_user_model, "eve", "probe_reviewer")
    slot = services.review_claim(reviewer=reviewer, role=Role.PRIMARY, context="development")
    walker = Walker(reviewer, slot)
    public = "\n".join(
        [
            *(f"{p.raw_messages['system']}\n{p.raw_messages['user']}" for p in probes),
            *(
                f"{q.problem_id} {q.raw_question} {q.stem} {q.query} {q.options}"
                for q in ParentProblem.objects.all()
            ),
        ]
    )  # every problem's public text
    secrets = set().union(*(_key_strings(p) for p in probes))
    assert secrets - {s for s in secrets if s in public}, "nothing to protect: the test would be vacuous"

    checked = assert_no_sibling_leak(walker, reviewer, probes, public, "claimed")
    assert checked > 0
    work = slot_work(slot)
    for n, probe in enumerate(work):
        services.review_submit_blind(slot=slot, probe=probe, reviewer=reviewer, given=_typed_blind(probe, n))
        assert_no_sibling_leak(walker, reviewer, probes, public, f"after blind answer {n + 1}")
        target = walker.client.get(f"/api/review/slots/{slot.pk}/probes/{probe.logical_probe_id}/target/")
        last = n == len(work) - 1
        if order == "strict" and not last:
            assert target.status_code == 403 and target.data["code"] == "BLIND_ORDER_STRICT"
            continue
        assert target.status_code == 200, target.data
        assert target.data["withheld"] is (not last)  # kit order: siblings' strings withheld until answered
        services.review_decide(
            slot=slot,
            probe=probe,
            reviewer=reviewer,
            given=services.DecisionIn(
                status="rejected",
                severity="serious",
                confirmations={},
                packet_state="rejected",
                note="[test] walking the review",
            ),
        )
        assert_no_sibling_leak(walker, reviewer, probes, public, f"after reveal and decision {n + 1}")
    if order == "strict":
        for probe in work[:-1]:  # everything answered: the other targets open too
            services.review_decide(
                slot=slot,
                probe=probe,
                reviewer=reviewer,
                given=services.DecisionIn(
                    status="rejected",
                    severity="serious",
                    confirmations={},
                    packet_state="rejected",
                    note="[test]",
                ),
            )
    # the strings collected are the real ones: once every probe is answered they do show on the target pages
    shown = "".join(walker.bodies().values())
    assert all(
        s in shown or json.dumps(s)[1:-1] in shown
        for p in probes
        for s in _key_strings(p)
        if s not in public and s in {r["expected"] for r in p.key.key["read_targets"]}
    )


@pytest.mark.django_db
def test_blind_forms_show_the_order_and_the_reveal_says_why_it_is_closed(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    client = APIClient()
    client.force_login(alice)
    first = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    other = next(p for p in demo_probes if p.pk != first.pk)
    page = client.get(f"/review/slots/{slot.pk}/probes/{other.logical_probe_id}/").content.decode()
    assert "<fieldset disabled>" in page and "Answer this parent&#x27;s blind-first probe first" in page
    assert (
        "<fieldset>"
        in client.get(f"/review/slots/{slot.pk}/probes/{first.logical_probe_id}/").content.decode()
    )
    closed = client.get(f"/review/slots/{slot.pk}/probes/{first.logical_probe_id}/target/")
    assert closed.status_code == 403
    assert "Submit your blind answer first." in closed.content.decode()
    assert "does not include this page" not in closed.content.decode()
    api = client.get(f"/api/review/slots/{slot.pk}/").data
    gates = {row["logical_probe_id"]: row for row in api["probes"]}
    assert gates[first.logical_probe_id]["answer"]["allowed"] is True
    assert gates[other.logical_probe_id]["answer"]["code"] == "AUDIT_BLIND_FIRST_ORDER_NOT_RESPECTED"
    assert api["blind_order"] == "strict"


# --- key holders (item 6) ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_key_holder_cannot_claim_a_review_slot(demo_probes, reviewers):
    scorer = reviewers["admin"]
    scorer.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    scorer = type(scorer).objects.get(pk=scorer.pk)
    client = APIClient()
    client.force_login(scorer)
    assert client.get(f"/api/probes/{demo_probes[0].logical_probe_id}/private/").status_code in (200, 404)
    response = client.post("/api/review/queue/", {"role": "primary", "context": "development"}, format="json")
    assert response.status_code == 403 and response.data["code"] == "KEY_HOLDER_CANNOT_REVIEW"
    assert not ReviewSlot.objects.filter(reviewer=scorer).exists()


@pytest.mark.django_db
def test_a_reviewer_who_gains_key_access_cannot_answer_blind_any_more(demo_probes, reviewers):
    boss = reviewers["admin"]
    slot = services.review_claim(reviewer=boss, role=Role.PRIMARY, context="development")
    boss.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    boss = type(boss).objects.get(pk=boss.pk)
    client = APIClient()
    client.force_login(boss)
    first = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    response = client.post(
        f"/api/review/slots/{slot.pk}/probes/{first.logical_probe_id}/blind/",
        {"binding": first.key.gold_aliases},
        format="json",
    )
    assert response.status_code == 403 and response.data["code"] == "KEY_HOLDER_CANNOT_REVIEW"
    assert not BlindAnswer.objects.exists()


# --- one slot per reviewer per parent, claims under concurrency, release (item 8) --------------------------------


@pytest.mark.django_db
def test_the_database_refuses_two_slots_of_one_reviewer_on_one_parent(demo_probes, reviewers):
    services.review_claim(reviewer=reviewers["alice"], role=Role.PRIMARY, context="development")
    secondary = ReviewSlot.objects.get(role=Role.SECONDARY)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewSlot.objects.filter(pk=secondary.pk).update(reviewer=reviewers["alice"])


def _run_together(*calls):
    """Run the calls in threads released by one barrier; each thread gets its own database connection."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            results[index] = call()
        except ApplicationError as error:
            results[index] = error.code
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def _slow_slot_work(real):
    def slow(slot, **kwargs):
        time.sleep(0.3)  # keep the claim's transaction open so the two claims overlap
        return real(slot, **kwargs)

    return slow


@pytest.mark.django_db(transaction=True)
def test_concurrent_primary_and_secondary_claims_by_one_reviewer_give_one_slot(django_user_model):
    assert connection.vendor == "postgresql"
    make_demo_parent(django_user_model)
    compile_all()
    alice = make_user(django_user_model, "alice", "probe_reviewer")
    with mock.patch("review.services.slots.slot_work", side_effect=_slow_slot_work(slot_work)):
        for _ in range(5):
            outcomes = _run_together(
                lambda: services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development").role,
                lambda: (
                    services.review_claim(reviewer=alice, role=Role.SECONDARY, context="development").role
                ),
            )
            assert sorted(map(str, outcomes)) in (["QUEUE_EMPTY", "primary"], ["QUEUE_EMPTY", "secondary"]), (
                outcomes
            )
            assert ReviewSlot.objects.filter(reviewer=alice).count() == 1
            ReviewSlot.objects.update(reviewer=None, claimed_at=None)


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_claiming_at_once_both_get_a_parent(django_user_model):
    for index, pid in enumerate(("P_ONE", "P_TWO")):
        make_demo_parent(django_user_model, problem_id=pid, sample=f"S{index}")
    compile_all()
    Probe.objects.update(split=Probe.Split.DEVELOPMENT)
    alice = make_user(django_user_model, "alice", "probe_reviewer")
    bob = make_user(django_user_model, "bob", "probe_reviewer")
    with mock.patch("review.services.slots.slot_work", side_effect=_slow_slot_work(slot_work)):
        outcomes = _run_together(
            lambda: services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development").parent_id,
            lambda: services.review_claim(reviewer=bob, role=Role.PRIMARY, context="development").parent_id,
        )
    assert "QUEUE_EMPTY" not in outcomes and len(set(outcomes)) == 2, outcomes


@pytest.mark.django_db
def test_a_reviewer_can_release_a_slot_until_their_first_blind_answer(demo_probes, reviewers):
    alice = reviewers["alice"]
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    client = APIClient()
    client.force_login(reviewers["bob"])
    assert client.post(f"/api/review/slots/{slot.pk}/release/").status_code == 403  # not bob's to give back
    client.force_login(alice)
    assert client.post(f"/api/review/slots/{slot.pk}/release/").status_code == 200
    assert ReviewSlot.objects.get(pk=slot.pk).reviewer is None
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    first = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    services.review_submit_blind(slot=slot, probe=first, reviewer=alice, given=gold_blind(first))
    refused = client.post(f"/api/review/slots/{slot.pk}/release/")
    assert refused.status_code == 409 and refused.data["code"] == "SLOT_HAS_BLIND_ANSWERS"
    assert ReviewSlot.objects.get(pk=slot.pk).reviewer == alice


@pytest.mark.django_db
def test_only_admins_choose_the_blind_order_and_the_kit_order_opens_one_probe_at_a_time(
    demo_probes, reviewers
):
    alice = reviewers["alice"]
    client = APIClient()
    client.force_login(alice)
    body = {"context": "development", "blind_order": "kit"}
    assert client.post("/api/review/blind-order/", body, format="json").status_code == 403
    assert not ReviewContextSetting.objects.exists()
    admin = APIClient()
    admin.force_login(reviewers["admin"])
    assert admin.post("/api/review/blind-order/", body, format="json").data == body
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    first = Probe.objects.get(logical_probe_id=slot.blind_first_probe_id)
    services.review_submit_blind(slot=slot, probe=first, reviewer=alice, given=gold_blind(first))
    opened = client.get(f"/api/review/slots/{slot.pk}/probes/{first.logical_probe_id}/target/")
    assert opened.status_code == 200
    services.review_decide(slot=slot, probe=first, reviewer=alice, given=approve(first))
