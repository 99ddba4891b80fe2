"""GET/POST /api/parents/<problem_id>/passes/<n>/curation/: both documents' pairs as JSON, and the choices applied
(If-Match), as each role with a valid body."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Curation, PassDocument
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

BODY = {
    "choices": [{"collection": "visual_nodes", "first_id": "v001", "second_id": "v001", "keep": "second"}]
}


def _api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _url(world, pass_no=1):
    return f"/api/parents/{world['parent'].problem_id}/passes/{pass_no}/curation/"


def _roles(world, django_user_model):
    return {
        "admin": world["admin"],
        "source_reviewer": world["curator"],
        "first_annotator": world["first"],
        "second_annotator": world["second"],
        "annotator": make_user(django_user_model, "cur_other_ann", "annotator"),
        "probe_reviewer": make_user(django_user_model, "cur_probe", "probe_reviewer"),
        "adjudicator": make_user(django_user_model, "cur_adj", "adjudicator"),
    }


ALLOWED = {"admin", "source_reviewer"}


def test_get_lists_both_documents_and_every_pair(curation_world):
    w = curation_world
    response = _api(w["curator"]).get(_url(w))
    assert response.status_code == 200
    assert response["ETag"] == f'"{w["docs"][1].version}"'
    data = response.json()
    assert (data["problem_id"], data["pass_no"]) == (w["parent"].problem_id, 1)
    assert data["first"]["document"] == w["docs"][1].document
    assert (data["first"]["version"], data["first"]["status"], data["first"]["annotator"]) == (
        w["docs"][1].version,
        "submitted",
        "cur_first",
    )
    assert data["second"]["document"] == w["seconds"][1].document
    assert data["second"]["annotator"] == "cur_second"
    assert len(data["pairs"]) == 11
    assert data["pairs"][0] == {
        "index": 0,
        "collection": "visual_nodes",
        "noun": "region",
        "first_id": "v001",
        "second_id": "v001",
        "score": 0.831,
        "kind": "matched",
        "allowed": ["first", "second"],
        "default": "first",
        "first_label": "component_symbol/battery [129, 475, 194, 516]",
        "second_label": "component_symbol/battery [135, 475, 200, 516]",
        "first_regions": ["v001"],
        "second_regions": ["v001"],
        "differs": ["bbox_1000"],
    }
    assert [
        (p["first_id"], p["second_id"], p["kind"], p["allowed"], p["default"]) for p in data["pairs"][8:]
    ] == [
        ("v009", None, "first_only", ["first", "drop"], "first"),
        ("v010", "v009", "matched", ["first", "second"], "first"),
        (None, "v010", "second_only", ["second", "drop"], "drop"),
    ]
    assert data["curations"] == []


@pytest.mark.parametrize(
    "role",
    [
        "admin",
        "source_reviewer",
        "first_annotator",
        "second_annotator",
        "annotator",
        "probe_reviewer",
        "adjudicator",
    ],
)
def test_get_and_post_as_each_role(curation_world, django_user_model, role):
    w = curation_world
    user = _roles(w, django_user_model)[role]
    version = w["docs"][1].version
    got = _api(user).get(_url(w))
    posted = _api(user).post(_url(w), BODY, format="json", HTTP_IF_MATCH=f'"{version}"')
    doc = PassDocument.objects.get(pk=w["docs"][1].pk)
    if role in ALLOWED:
        assert got.status_code == 200
        assert posted.status_code == 200, posted.json()
        body = posted.json()
        curation = Curation.objects.get()
        assert body == {
            "curation_id": curation.pk,
            "version": version + 1,
            "status": "submitted",
            "submitted": True,
            "document_sha256": doc.document_sha256,
            "issues": [],
            "taken": ["v001"],
            "added": {},
            "dropped": [],
            "renamed": {},
            "unresolved": [],
        }
        assert posted["ETag"] == f'"{version + 1}"'
        assert doc.document["visual_nodes"][0]["bbox_1000"] == [135, 475, 200, 516]
        assert curation.curator == user
    else:
        assert (got.status_code, posted.status_code) == (403, 403)
        assert "R2" not in got.content.decode()
        assert (doc.version, Curation.objects.count()) == (version, 0)
    if role == "second_annotator":
        assert got.json()["code"] == "independent_annotation_blind"  # refused before the view is reached


def test_anonymous_is_a_401(curation_world):
    assert APIClient().get(_url(curation_world)).status_code == 401


def test_a_stale_if_match_is_a_409_and_nothing_changes(curation_world):
    w = curation_world
    version = w["docs"][1].version
    response = _api(w["curator"]).post(_url(w), BODY, format="json", HTTP_IF_MATCH=f'"{version - 1}"')
    assert response.status_code == 409
    assert response.json() == {
        "message": "The first annotation was saved after you loaded it; reload and choose again.",
        "code": "version_conflict",
        "extra": {
            "current_version": version,
            "document_sha256": w["docs"][1].document_sha256,
            "your_version": version - 1,
        },
    }
    doc = PassDocument.objects.get(pk=w["docs"][1].pk)
    assert (doc.version, doc.document_sha256, Curation.objects.count()) == (
        version,
        w["docs"][1].document_sha256,
        0,
    )


def test_without_if_match_is_a_428(curation_world):
    w = curation_world
    response = _api(w["curator"]).post(_url(w), BODY, format="json")
    assert (response.status_code, response.json()["code"]) == (428, "precondition_required")


def test_an_add_and_a_second_version(curation_world):
    w = curation_world
    body = {
        "choices": [{"collection": "visual_nodes", "first_id": None, "second_id": "v010", "keep": "second"}],
        "second_version": w["seconds"][1].version,
    }
    response = _api(w["admin"]).post(_url(w), body, format="json", HTTP_IF_MATCH=str(w["docs"][1].version))
    assert response.status_code == 200
    assert response.json()["added"] == {"v010": "v011"}
    stale = {**body, "second_version": w["seconds"][1].version + 1}
    again = _api(w["admin"]).post(_url(w), stale, format="json", HTTP_IF_MATCH=str(w["docs"][1].version + 1))
    assert (again.status_code, again.json()["code"]) == (409, "second_version_conflict")


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "choices"),
        (
            {
                "choices": [
                    {"collection": "visual_nodes", "first_id": "v001", "second_id": "v001", "keep": "both"}
                ]
            },
            "choices",
        ),
        ({"choices": "all"}, "choices"),
    ],
)
def test_an_invalid_body_is_a_400(curation_world, body, field):
    w = curation_world
    response = _api(w["curator"]).post(_url(w), body, format="json", HTTP_IF_MATCH=str(w["docs"][1].version))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["extra"]["fields"]
    assert Curation.objects.count() == 0


def test_a_choice_for_no_pair_is_a_400_naming_it(curation_world):
    w = curation_world
    body = {
        "choices": [{"collection": "visual_nodes", "first_id": "v001", "second_id": "v005", "keep": "second"}]
    }
    response = _api(w["curator"]).post(_url(w), body, format="json", HTTP_IF_MATCH=str(w["docs"][1].version))
    assert response.status_code == 400
    assert response.json()["code"] == "choice_invalid"
    assert response.json()["message"].startswith("No record pair visual_nodes v001 / v005")


def test_get_404s_say_why(curation_world):
    w = curation_world
    response = _api(w["curator"]).get(_url(w, 3))
    assert response.status_code == 404
    assert response.json()["code"] == "no_second_document"
    assert _api(w["curator"]).get(_url(w, 5)).status_code == 404
    assert _api(w["curator"]).get("/api/parents/nope/passes/1/curation/").status_code == 404
