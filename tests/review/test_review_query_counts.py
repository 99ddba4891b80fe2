"""The review pages (queue, agreement, accounting) run a number of queries that does not grow with the data
(issue 16 item 2): the same bound holds on a small campaign and on one with 10× the parents and probes. The
queue page writes nothing; the first claim makes the development slots."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from physalign_site.errors import ApplicationError
from probes.models import Probe
from review import services
from review.models import AuditPlan, ReviewSlot, Role
from review.selectors import my_slots, slot_work, unclaimed_counts
from tests.conftest import make_user
from tests.probes.conftest import make_demo_parent

from .conftest import compile_all
from .test_audit_services import reject_serious
from .test_flow import answer_all_blind, review_all

pytestmark = pytest.mark.django_db

SIZES = {"small": 1, "large": 10}  # development parents, and as many audit candidates; 3 probes each
PAGES = ("/review/", "/review/agreement/", "/review/accounting/")
# +1 for an admin: the menu asks the key-holder permission (one query for the user's permissions, per request)
BOUND = {"/review/": 14, "/review/agreement/": 8, "/review/accounting/": 13}


def _parents(django_user_model, prefix: str, n: int) -> list[str]:
    ids = []
    for i in range(n):
        pid = f"{prefix}{i:03d}"
        # distinct content: exact copies are dedup duplicates
        make_demo_parent(
            django_user_model, problem_id=pid, sample=f"{prefix}-S{i}", stem_suffix=f" Case {pid}."
        )
        ids.append(pid)
    return ids


def _drain(user, role: str, context: str, **kwargs) -> None:
    while True:
        try:
            slot = services.review_claim(reviewer=user, role=role, context=context)
        except ApplicationError as error:
            assert error.code == "QUEUE_EMPTY"
            return
        review_all(slot, user, **kwargs)


def build(django_user_model, n: int) -> dict[str, object]:
    """``n`` development parents reviewed by alice and bob, ``n`` audit candidates with a drawn plan whose
    primary alice and secondary bob reviewed (bob rejecting the first parent's probes, so carol adjudicates
    it: claimed, not yet decided), and one development parent compiled after, claimed and half answered."""
    users = {
        "alice": make_user(django_user_model, "alice", "probe_reviewer"),
        "bob": make_user(django_user_model, "bob", "probe_reviewer"),
        "carol": make_user(django_user_model, "carol", "adjudicator"),
        "admin": make_user(django_user_model, "boss", "admin"),
    }
    dev = _parents(django_user_model, "DEV", n)
    candidates = _parents(django_user_model, "CAND", n)
    compile_all()
    Probe.objects.filter(parent__problem_id__in=dev).update(split=Probe.Split.DEVELOPMENT)
    Probe.objects.filter(parent__problem_id__in=candidates).update(split=Probe.Split.UNASSIGNED)
    _drain(users["alice"], Role.PRIMARY, "development")
    _drain(users["bob"], Role.SECONDARY, "development")
    plan = services.audit_plan_create(campaign=services.audit_campaign_create(actor=None), actor=None)
    _drain(users["alice"], Role.PRIMARY, plan.context)
    first = min(plan.sample)
    while True:
        try:
            slot = services.review_claim(reviewer=users["bob"], role=Role.SECONDARY, context=plan.context)
        except ApplicationError:
            break
        review_all(
            slot, users["bob"], **({"decide": reject_serious} if slot.parent.problem_id == first else {})
        )
    services.review_claim(reviewer=users["carol"], role=Role.ADJUDICATOR, context=plan.context)
    late = _parents(django_user_model, "LATE", 1)
    compile_all()
    Probe.objects.filter(parent__problem_id__in=late).update(split=Probe.Split.DEVELOPMENT)
    slot = services.review_claim(reviewer=users["alice"], role=Role.PRIMARY, context="development")
    services.review_submit_blind(
        slot=slot,
        probe=slot_work(slot)[0],
        reviewer=users["alice"],
        given=services.BlindAnswerIn(binding=[], read={}, cannot_answer=True, reason="two owners fit"),
    )
    return users


def measure(user, url: str) -> tuple[int, float]:
    client = Client()
    client.force_login(user)
    client.get(url)  # warm caches (sessions, content types)
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - start
    assert response.status_code == 200, url
    return len(queries.captured_queries), elapsed


@pytest.fixture(params=sorted(SIZES))
def campaign(request, django_user_model):
    users = build(django_user_model, SIZES[request.param])
    assert Probe.objects.filter(parent__problem_id__startswith="DEV").count() == 3 * SIZES[request.param]
    return users


def test_review_pages_run_the_same_bounded_queries_at_10x(campaign, django_assert_max_num_queries):
    """Each page, for a reviewer with slots in every role and for the admin; then each slot's counts."""
    for url, who in [("/review/", "alice"), ("/review/", "carol"), *((u, "admin") for u in PAGES[1:])]:
        client = Client()
        client.force_login(campaign[who])
        client.get(url)
        with django_assert_max_num_queries(BOUND[url]):
            assert client.get(url).status_code == 200
        count, elapsed = measure(campaign[who], url)
        print(f"\n{url} {who} probes={Probe.objects.count()} queries={count} {elapsed * 1000:.0f} ms")
    assert ReviewSlot.objects.filter(role=Role.ADJUDICATOR).exclude(reviewer=None).exists()
    for user in campaign.values():
        rows = my_slots(user)
        assert len(rows) == ReviewSlot.objects.filter(reviewer=user).count()
        for row in rows:
            assert row["total"] == len(slot_work(row["slot"], include_done=True))
            assert row["remaining"] == len(slot_work(row["slot"]))
    assert any(row["remaining"] for row in my_slots(campaign["carol"]))
    assert any(row["remaining"] for row in my_slots(campaign["alice"]))


def _slot_counts() -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for context, role in ReviewSlot.objects.filter(reviewer__isnull=True).values_list("context", "role"):
        counts[(context, role)] = counts.get((context, role), 0) + 1
    return counts


def test_queue_get_writes_nothing_and_counts_parents_without_slots_as_waiting(django_user_model):
    users = build(django_user_model, SIZES["small"])
    waiting = unclaimed_counts()
    more = _parents(django_user_model, "NEW", 3)
    compile_all()
    Probe.objects.filter(parent__problem_id__in=more).update(split=Probe.Split.DEVELOPMENT)
    before = list(ReviewSlot.objects.order_by("pk").values_list("pk", "reviewer_id", "claimed_at"))
    expected = unclaimed_counts()
    for role in (Role.PRIMARY, Role.SECONDARY):
        assert expected[("development", role)] == waiting.get(("development", role), 0) + 3
    client = Client()
    client.force_login(users["bob"])
    page = client.get("/review/").content.decode()
    assert list(ReviewSlot.objects.order_by("pk").values_list("pk", "reviewer_id", "claimed_at")) == before
    for role in (Role.PRIMARY, Role.SECONDARY):
        assert f"{role.label} ({expected[('development', role)]} waiting)" in page
    # what the queue showed is what the slots are once they are made (the first claim makes them)
    assert services.review_slots_ensure_development() == 6
    assert _slot_counts() == expected == unclaimed_counts()
    slot = services.review_claim(reviewer=users["bob"], role=Role.SECONDARY, context="development")
    assert slot.reviewer == users["bob"]
    expected[("development", Role.SECONDARY)] -= 1
    assert _slot_counts() == expected == unclaimed_counts()


def test_a_reviewer_claims_right_after_a_compile(django_user_model):
    alice = make_user(django_user_model, "alice", "probe_reviewer")
    bob = make_user(django_user_model, "bob", "probe_reviewer")
    ids = _parents(django_user_model, "DEV", 2)
    compile_all()
    Probe.objects.filter(parent__problem_id__in=ids).update(split=Probe.Split.DEVELOPMENT)
    assert not ReviewSlot.objects.exists()  # nobody opened the queue
    slot = services.review_claim(reviewer=alice, role=Role.PRIMARY, context="development")
    assert slot.parent.problem_id == "DEV000" and slot.reviewer == alice
    assert ReviewSlot.objects.filter(context="development").count() == 4
    assert slot.blind_first_probe_id in {p.logical_probe_id for p in slot_work(slot)}
    work = answer_all_blind(slot, alice)
    assert len(work) == 3
    other = services.review_claim(reviewer=bob, role=Role.SECONDARY, context="development")
    assert other.parent.problem_id == "DEV000" and other.blind_first_probe_id == slot.blind_first_probe_id
    assert AuditPlan.objects.count() == 0
