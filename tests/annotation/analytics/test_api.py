"""``GET /api/annotation-analytics/``: the page's figures as JSON, admins only, the same period rule."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.annotation.analytics.world import build

pytestmark = pytest.mark.django_db

URL = "/api/annotation-analytics/"
DAY = {"from": "2026-11-10", "to": "2026-11-10"}


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"])
def test_only_admins_get_the_figures(role_users, django_user_model, role):
    build(django_user_model)
    client = APIClient()
    client.force_authenticate(role_users[role])
    response = client.get(URL, DAY)
    assert response.status_code == 403 and b"alice0" not in response.content
    assert APIClient().get(URL, DAY).status_code == 401


def test_an_annotator_with_a_token_cannot_read_another_annotators_figures(django_user_model):
    world = build(django_user_model)[0]
    client = APIClient(headers={"Authorization": f"Token {Token.objects.create(user=world.alice).key}"})
    response = client.get(URL, DAY)
    assert response.status_code == 403 and b"bob0" not in response.content


def test_the_figures_of_the_hand_checked_day(admin_user_role, django_user_model):
    world = build(django_user_model)[0]
    client = APIClient()
    client.force_authenticate(admin_user_role)
    body = client.get(URL, DAY).json()
    assert body["period"] == {"first_day": "2026-11-10", "last_day": "2026-11-10"}
    assert [(r["username"], r["pass_no"]) for r in body["annotators"]] == [
        ("alice0", 1),
        ("alice0", 3),
        ("bob0", 1),
    ]
    assert body["annotators"][0]["figures"] == {
        "documents": 1,
        "saves": 5,
        "active_seconds": 450,
        "submissions": 1,
        "rejections": 1,
        "drafts_accepted": 1,
        "drafts_edited": 0,
        "drafts_discarded": 0,
        "draft_acceptance_rate": 1.0,
        "draft_edit_rate": 0.0,
        "ocr_accepted": 2,
        "ocr_edited": 1,
        "ocr_dropped": 1,
        "ocr_acceptance_rate": 0.75,
        "ocr_edit_rate": 1 / 3,
        "checked_documents": 1,
        "physics_findings": 2,
        "findings_per_document": 2.0,
    }
    assert body["annotators"][1]["figures"]["ocr_acceptance_rate"] is None
    assert [
        (g["username"], g["pass_no"], g["figures"]["active_seconds"]) for g in body["annotator_totals"]
    ] == [
        ("alice0", None, 630),
        ("bob0", None, 300),
    ]
    assert [(g["name"], g["figures"]["saves"]) for g in body["sources"]] == [
        ("Generated-0", 3),
        ("OpenStax-0", 6),
    ]
    assert [g["name"] for g in body["domains"]] == ["(no domain)", "mechanics"]
    assert body["total"]["active_seconds"] == 930
    assert body["rejections"] == [
        {
            "rejected_at": "2026-11-10T09:40:00Z",
            "problem_id": world.d1.parent.problem_id,
            "pass_no": 1,
            "source": "OpenStax-0",
            "domain": "mechanics",
            "annotator": "alice0",
            "reviewer": "rita0",
            "note": "-ve sign on the normal force; =fix the unit",
            "comments": ["quantities:q001: 5 m is a length"],
        }
    ]


def test_a_bad_period_is_a_400_naming_the_field(admin_user_role):
    client = APIClient()
    client.force_authenticate(admin_user_role)
    response = client.get(URL, {"from": "2026-11-12", "to": "2026-11-10"})
    assert response.status_code == 400
    assert response.json() == {
        "message": "The period's first day comes after its last day.",
        "code": "period_invalid",
        "extra": {"fields": {"period": ["The period's first day comes after its last day."]}},
    }
    response = client.get(URL, {"from": "tomorrow"})
    assert response.status_code == 400 and response.json()["extra"]["fields"] == {
        "from": ["Enter a valid date."]
    }


@pytest.mark.parametrize("copies", [1, 10])
def test_the_api_is_flat_in_queries(admin_user_role, django_user_model, copies):
    build(django_user_model, copies)
    client = APIClient()
    client.force_authenticate(admin_user_role)
    with CaptureQueriesContext(connection) as captured:
        body = client.get(URL, DAY).json()
    assert len(body["annotators"]) == 3 * copies
    assert len(captured) == 9  # the user's roles, then the 8 of the figures
