"""The assignments API with valid bodies (and the refusals with the page's own messages): list with filters in
cursor pages, assign in bulk by ids or by filter, one user or spread, delete, a source's strict flag."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.assignments.services import assignment_assign
from annotation.models import Assignment
from audit.models import Event
from tests.factories import ParentProblemFactory

pytestmark = pytest.mark.django_db
URL = "/api/assignments/"


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_assign_listed_problems_evenly_then_list_and_filter_them(people, seven):
    client = api(people.admin)
    response = client.post(
        URL,
        {
            "role": "annotator",
            "problem_ids": [p.problem_id for p in reversed(seven)],
            "users": ["ann_c", "ann_a", "ann_b"],
            "due_date": "2026-07-01",
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "role": "annotator",
        "created": 7,
        "replaced": 0,
        "unchanged": 0,
        "shares": [
            {"user": "ann_a", "problems": 3},
            {"user": "ann_b", "problems": 2},
            {"user": "ann_c", "problems": 2},
        ],
    }
    listed = client.get(URL, {"user": "ann_b"}).json()
    assert set(listed) == {"next", "previous", "results"}
    assert [(r["problem_id"], r["user"], r["due_date"]) for r in listed["results"]] == [
        ("as_02", "ann_b", "2026-07-01"),
        ("as_05", "ann_b", "2026-07-01"),
    ]
    row = listed["results"][0]
    assert row["role"] == "annotator" and row["source_name"] == "SeePhys" and row["assigned_by"] == "boss"
    page = client.get(URL, {"page_size": 2}).json()
    assert len(page["results"]) == 2 and page["next"]
    assert client.get(URL, {"problem_id": "as_07"}).json()["results"][0]["user"] == "ann_a"
    assert client.get(URL, {"role": "source_reviewer"}).json()["results"] == []
    assert client.get(URL, {"user": "nobody"}).json()["results"] == []
    assert len(client.get(URL, {"due_before": "2026-07-02"}).json()["results"]) == 7
    assert client.get(URL, {"due_before": "2026-07-01"}).json()["results"] == []
    assert client.get(URL, {"role": "boss"}).status_code == 400
    assert client.get(URL, {"due_before": "soon"}).status_code == 400


def test_assign_every_match_of_a_filter_to_everyone_holding_the_role(people, seven):
    ParentProblemFactory(problem_id="zz_optics", source=seven[0].source, domain="optics")
    assignment_assign(
        parent_ids=[seven[0].pk], role="source_reviewer", users=[people.rev], actor=people.admin
    )
    response = api(people.admin).post(
        URL,
        {
            "role": "source_reviewer",
            "filter": {"domain": "mechanics", "unassigned": "source_reviewer"},
            "everyone": True,
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["shares"] == [
        {"user": "both", "problems": 2},
        {"user": "rev", "problems": 2},
        {"user": "rev2", "problems": 2},
    ]
    assert not Assignment.objects.filter(parent__problem_id="zz_optics").exists()


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"role": "annotator", "problem_ids": ["as_01"], "users": ["rev"]}, 400, "assignee_lacks_role"),
        ({"role": "annotator", "problem_ids": ["as_01"], "users": ["ghost"]}, 400, "assignee_unknown"),
        ({"role": "annotator", "problem_ids": ["as_01", "nope"], "users": ["ann_a"]}, 400, "problem_unknown"),
        (
            {"role": "annotator", "problem_ids": ["as_01"], "filter": {}, "users": ["ann_a"]},
            400,
            "validation_error",
        ),
        ({"role": "annotator", "problem_ids": ["as_01"]}, 400, "validation_error"),
        (
            {"role": "annotator", "problem_ids": ["as_01"], "users": ["ann_a"], "everyone": True},
            400,
            "validation_error",
        ),
        ({"role": "adjudicator", "problem_ids": ["as_01"], "users": ["ann_a"]}, 400, "validation_error"),
        (
            {"role": "annotator", "filter": {"domain": "none-such"}, "users": ["ann_a"]},
            400,
            "problems_required",
        ),
        (
            {"role": "source_reviewer", "problem_ids": ["as_01"], "users": ["both"]},
            400,
            "assignment_self_review",
        ),
    ],
)
def test_refused_bodies_change_nothing(people, seven, body, status, code):
    assignment_assign(parent_ids=[seven[0].pk], role="annotator", users=[people.both], actor=people.admin)
    before = Event.objects.count()
    response = api(people.admin).post(URL, body, format="json")
    assert response.status_code == status and response.json()["code"] == code, response.json()
    assert Assignment.objects.count() == 1 and Event.objects.count() == before


def test_retrieve_and_delete_one_assignment(people, seven):
    assignment_assign(parent_ids=[seven[0].pk], role="annotator", users=[people.ann_a], actor=people.admin)
    row = Assignment.objects.get()
    client = api(people.admin)
    assert client.get(f"{URL}{row.pk}/").json()["problem_id"] == "as_01"
    assert client.delete(f"{URL}{row.pk}/").status_code == 204
    assert not Assignment.objects.exists()
    assert Event.objects.filter(verb="assignment.remove", object_id=str(row.pk)).count() == 1
    assert client.delete(f"{URL}{row.pk}/").status_code == 404


def test_a_sources_strict_flag_over_the_api(people, source):
    client = api(people.admin)
    url = f"/api/sources/{source.pk}/assignment/"
    assert client.get(url).json() == {"source_id": source.pk, "name": "SeePhys", "assignment_strict": False}
    changed = client.patch(url, {"assignment_strict": True}, format="json")
    assert changed.status_code == 200 and changed.json()["assignment_strict"] is True
    source.refresh_from_db()
    assert source.assignment_strict is True
    assert client.patch(url, {"assignment_strict": "maybe"}, format="json").status_code == 400
    assert (
        client.patch(
            "/api/sources/999999/assignment/", {"assignment_strict": True}, format="json"
        ).status_code
        == 404
    )
    assert Event.objects.filter(verb="source.assignment_strict").count() == 1


@pytest.mark.parametrize("who", ["ann_a", "rev", "both"])
def test_every_operation_is_refused_to_non_admins(people, seven, who):
    assignment_assign(parent_ids=[seven[0].pk], role="annotator", users=[people.ann_a], actor=people.admin)
    row = Assignment.objects.get()
    client = api(getattr(people, who))
    body = {"role": "annotator", "problem_ids": ["as_02"], "users": ["ann_a"]}
    answers = [
        client.get(URL).status_code,
        client.post(URL, body, format="json").status_code,
        client.get(f"{URL}{row.pk}/").status_code,
        client.delete(f"{URL}{row.pk}/").status_code,
        client.patch(
            f"/api/sources/{seven[0].source_id}/assignment/", {"assignment_strict": True}, format="json"
        ).status_code,
    ]
    assert answers == [403] * 5
    assert list(Assignment.objects.values_list("parent__problem_id", flat=True)) == ["as_01"]
    assert APIClient().get(URL).status_code == 401
