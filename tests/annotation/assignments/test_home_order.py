"""Assigned work first: the annotator's home lists their assigned problems (overdue first, then by due date, none
last) with the pass to do next, before every problem's counts; the source reviewer's home and queue put the
reviews assigned to them first. Both stay flat in queries as assignments grow."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.assignments.services import assignment_assign
from annotation.models import PassDocument
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory

pytestmark = pytest.mark.django_db


def problem(pid: str, states: dict[int, str] | None = None):
    parent = ParentProblemFactory(problem_id=pid)
    for pass_no, state in (states or {}).items():
        document = {"problem_id": pid, "pass": pass_no}
        extra = {"approved_sha256": digest(document)} if state == "approved" else {}
        PassDocumentFactory(parent=parent, pass_no=pass_no, document=document, status=state, **extra)
    return parent


def assign(people, parent, user, due=None, role="annotator"):
    assignment_assign(parent_ids=[parent.pk], role=role, users=[user], actor=people.admin, due_date=due)


def test_the_annotator_sees_assigned_work_first_in_due_order_with_the_next_pass(client, people):
    today = timezone.localdate()
    approved = {n: "approved" for n in (1, 2, 3, 4)}
    assign(people, problem("h_nodate"), people.ann_a)
    assign(people, problem("h_soon", {1: "approved", 2: "rejected"}), people.ann_a, today + timedelta(days=2))
    assign(people, problem("h_late", {1: "draft"}), people.ann_a, today - timedelta(days=1))
    assign(
        people,
        problem("h_wait", {1: "submitted", 2: "submitted", 3: "submitted", 4: "submitted"}),
        people.ann_a,
        today,
    )
    assign(people, problem("h_done", {**approved, 5: "approved"}), people.ann_a, today - timedelta(days=9))
    assign(people, problem("h_pass5", approved), people.ann_a, today + timedelta(days=1))
    assign(people, problem("h_theirs"), people.ann_b)
    problem("h_free")

    client.force_login(people.ann_a)
    html = client.get("/").content.decode()
    rows = re.findall(
        r'data-testid="assigned-row" data-problem="([^"]+)"(?: class="row--error" data-overdue="1")?>.*?<td>([^<]+)</td>',
        html,
        re.S,
    )
    assert rows == [
        ("h_late", "Pass 1: continue"),
        ("h_wait", "Waiting for source review"),
        ("h_pass5", "Pass 5: start"),
        ("h_soon", "Pass 2: fix"),
        ("h_nodate", "Pass 1: start"),
    ]  # h_done (nothing left) and other people's problems are not listed
    late = re.search(r'data-problem="h_late".*?</tr>', html, re.S).group(0)
    assert 'data-overdue="1"' in late and "overdue</strong>" in late
    assert 'href="/problems/h_late/passes/1/"' in late
    assert re.findall(r'data-overdue="1"', html) == ['data-overdue="1"']  # h_done is overdue but done
    assert 'data-testid="assigned-overdue">1 assigned problem overdue.' in html
    # assigned work comes before the counts of every problem, which are as they were
    assert (
        html.index('data-testid="assigned-table"')
        < html.index("Every problem")
        < html.index("home-figures__value")
    )


def test_nothing_assigned_says_so_and_the_counts_stay(client, people):
    problem("h_free")
    client.force_login(people.ann_c)
    html = client.get("/").content.decode()
    assert re.search(
        r'data-testid="assigned-none">Nothing is assigned to you\. Every unassigned problem', html
    )
    assert "home-figures__value" in html


def test_the_source_reviewer_sees_assigned_reviews_first_on_home_and_in_the_queue(client, people):
    old = problem("r_old", {1: "submitted"})
    mine = problem("r_mine", {1: "submitted", 2: "submitted"})
    PassDocument.objects.filter(parent=old).update(updated_at=timezone.now() - timedelta(days=3))
    assign(people, mine, people.rev, timezone.localdate(), role="source_reviewer")
    client.force_login(people.rev)
    home = client.get("/").content.decode()
    listed = re.search(r'data-testid="review-assigned">(.*?)</ul>', home, re.S).group(1)
    assert re.findall(r">(r_\w+ · Pass \d)<", listed) == ["r_mine · Pass 1", "r_mine · Pass 2"]
    queue = client.get("/source-review/").content.decode()
    order = re.findall(
        r'<tr data-testid="queue-row"(?: class="row--warning" data-assigned="me")?>\s*<th scope="row" class="cell-id">([^<]+)<',
        queue,
    )
    assert order == ["r_mine", "r_mine", "r_old"]
    assert queue.count('data-assigned="me"') == 2
    client.force_login(people.rev2)  # not assigned: the queue's own order, and who the review is assigned to
    other = client.get("/source-review/").content.decode()
    assert re.findall(r'<th scope="row" class="cell-id">([^<]+)<', other)[:3] == ["r_old", "r_mine", "r_mine"]
    assert re.findall(r'data-testid="queue-assignee">([^<]+)<', other)[:3] == ["—", "rev", "rev"]


def _home_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/").status_code == 200
    return len(queries)


def test_the_home_pages_cost_the_same_queries_at_two_and_at_twenty_assignments(client, people):
    def grow(start: int, stop: int) -> None:
        for n in range(start, stop):
            parent = problem(f"g_{n:02d}", {1: "submitted", 2: "draft"})
            assign(people, parent, people.ann_a, timezone.localdate())
            assign(people, parent, people.rev, role="source_reviewer")

    grow(0, 2)
    client.force_login(people.ann_a)
    annotator_small = _home_queries(client)
    client.force_login(people.rev)
    reviewer_small = _home_queries(client)
    grow(2, 20)
    client.force_login(people.ann_a)
    assert _home_queries(client) == annotator_small
    client.force_login(people.rev)
    assert _home_queries(client) == reviewer_small


def test_the_admin_home_counts_unassigned_problems_and_links_to_them(client, people):
    assign(people, problem("a_1"), people.ann_a, timezone.localdate() - timedelta(days=1))
    problem("a_2")
    problem("a_3")
    client.force_login(people.admin)
    html = client.get("/").content.decode()
    card = re.search(r'data-testid="home-assignments">(.*?)</section>', html, re.S).group(1)
    figures = re.findall(
        r'<a href="([^"]+)"><span class="home-figures__value">(\d+)</span> <span class="home-figures__label">([^<]+)<',
        card,
    )
    assert figures == [
        ("/assignments/?unassigned=annotator", "2", "problems without an annotator"),
        ("/assignments/?unassigned=source_reviewer", "3", "problems without a source reviewer"),
        ("/assignments/", "1", "assignments past their due date"),
    ]
