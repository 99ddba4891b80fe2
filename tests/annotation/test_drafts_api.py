"""The drafts API as its users call it: every operation with a valid body as each role that may draft (an
annotator, an admin), with the exact answer, and refused (403) to every role that may not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.drafting.services import draft_execute, draft_run_create
from annotation.models import DraftRun, LLMDraft, PassDocument
from tests.annotation.test_drafting import NODE, pass1, scripted
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, png_bytes

DRAFTERS = ["annotator", "admin"]
REFUSED = ["source_reviewer", "probe_reviewer", "adjudicator", "no_role"]
NODE2 = {**NODE, "id": "v002", "text": "θ", "bbox_1000": [300, 300, 350, 350]}


@pytest.fixture
def parent(db):
    parent = ParentProblemFactory(problem_id="api-draft-1")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=png_bytes(300, 200, (250, 250, 250)))
    return parent


@pytest.fixture
def config(parent):
    return scripted("api-script", default=json.dumps(pass1(parent.problem_id, NODE, NODE2)))


@pytest.fixture
def draft(parent, config) -> LLMDraft:
    run = draft_run_create(pass_no=1, model_config=config, parents=[parent], actor=None, dispatch=False)
    return draft_execute(draft_id=run.drafts.get().pk)


def client_for(role: str, role_users: dict[str, Any], django_user_model) -> APIClient:
    user = role_users.get(role) or make_user(django_user_model, "user_no_role_api")
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_lists_a_pass_s_drafts_in_keyset_pages(role, role_users, django_user_model, draft, config):
    other = draft_run_create(
        pass_no=1, model_config=config, parents=[draft.parent], actor=None, dispatch=False
    ).drafts.get()
    client = client_for(role, role_users, django_user_model)
    first = client.get("/api/parents/api-draft-1/passes/1/drafts/?page_size=1")
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"next", "previous", "results"} and body["previous"] is None
    assert [row["id"] for row in body["results"]] == [other.pk]  # newest first
    assert body["results"][0]["status"] == "pending" and body["results"][0]["usage"] == {}
    second = client.get(body["next"]).json()
    assert [row["id"] for row in second["results"]] == [draft.pk] and second["next"] is None
    row = second["results"][0]
    assert row["problem_id"] == "api-draft-1" and row["pass_no"] == 1 and row["model"] == "api-script"
    assert row["status"] == "ready" and row["parsed_document"] == pass1("api-draft-1", NODE, NODE2)
    assert row["validation_errors"] == draft.validation_errors
    assert row["usage"] == draft.usage and row["attempts"] == draft.attempts
    assert row["request_record"]["prompt_version"] == "draft-p1-v1" and row["acceptance"] == {}
    assert client.get("/api/parents/api-draft-1/passes/2/drafts/").json()["results"] == []
    assert client.get("/api/parents/no-such-parent/passes/1/drafts/").status_code == 404
    assert client.get("/api/parents/api-draft-1/passes/1/drafts/?cursor=bad").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_starts_a_draft_run(role, role_users, django_user_model, parent, config):
    client = client_for(role, role_users, django_user_model)
    response = client.post(
        "/api/parents/api-draft-1/passes/1/drafts/", {"model": "api-script"}, format="json"
    )
    assert response.status_code == 202, response.data
    run = DraftRun.objects.get()
    assert response.json() == {
        "id": run.pk,
        "status": "queued",
        "pass_no": 1,
        "total": 1,
        "done": 0,
        "failed": 0,
        "finished": 0,
        "percent": 0,
        "cost_usd": "0",
        "model": "api-script",
        "finished_at": None,
    }
    assert run.created_by == role_users[role] and run.drafts.get().parent == parent
    missing = client.post("/api/parents/api-draft-1/passes/1/drafts/", {"model": "nope"}, format="json")
    assert missing.status_code == 404
    assert client.post("/api/parents/api-draft-1/passes/1/drafts/", {}, format="json").status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_reads_a_draft_against_the_current_document(role, role_users, django_user_model, draft):
    current = PassDocumentFactory(parent=draft.parent, pass_no=1, document=pass1("api-draft-1", NODE))
    client = client_for(role, role_users, django_user_model)
    response = client.get(f"/api/drafts/{draft.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == draft.pk and body["status"] == "ready" and body["current_version"] == current.version
    assert {row["key"]: row["state"] for row in body["comparison"]} == {
        "problem_id": "same",
        "visual_nodes/v001": "same",
        "visual_nodes/v002": "new",
    }
    new = next(row for row in body["comparison"] if row["key"] == "visual_nodes/v002")
    assert new == {"key": "visual_nodes/v002", "state": "new", "draft": NODE2, "current": None}
    assert client.get("/api/drafts/999999/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_accepts_chosen_records(role, role_users, django_user_model, draft):
    current = PassDocumentFactory(parent=draft.parent, pass_no=1, document=pass1("api-draft-1", NODE))
    client = client_for(role, role_users, django_user_model)
    url = f"/api/drafts/{draft.pk}/accept/"
    assert client.post(url, {"record_keys": ["visual_nodes/v002"]}, format="json").status_code == 428
    stale = client.post(url, {"expected_version": current.version + 1}, format="json")
    assert stale.status_code == 409 and stale.json()["code"] == "version_conflict"
    assert client.post(url, {"document": [1]}, format="json").status_code == 400
    response = client.post(
        url, {"expected_version": current.version, "record_keys": ["visual_nodes/v002"]}, format="json"
    )
    assert response.status_code == 200, response.data
    doc = PassDocument.objects.get(parent=draft.parent, pass_no=1)
    body = response.json()
    assert body["status"] == "accepted" and body["accepted_into"] == doc.pk
    assert {key: body["acceptance"][key] for key in ("added", "removed", "changed", "kept", "mode")} == {
        "added": 0,
        "removed": 0,
        "changed": 0,
        "kept": 3,
        "mode": "records",
    }
    assert body["acceptance"]["record_keys"] == ["visual_nodes/v002"]
    assert body["acceptance"]["version"] == doc.version == current.version + 1
    assert doc.document == pass1("api-draft-1", NODE, NODE2)
    again = client.post(url, {"expected_version": doc.version}, format="json")
    assert again.status_code == 400 and again.json()["code"] == "draft_not_acceptable"


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_accepts_an_edited_document(role, role_users, django_user_model, draft):
    client = client_for(role, role_users, django_user_model)
    edited = pass1("api-draft-1", NODE)
    response = client.post(f"/api/drafts/{draft.pk}/accept/", {"document": edited}, format="json")
    assert response.status_code == 200, response.data
    assert response.json()["acceptance"]["mode"] == "edited" and response.json()["acceptance"]["removed"] == 1
    assert PassDocument.objects.get(parent=draft.parent, pass_no=1).document == edited


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_discards_a_draft(role, role_users, django_user_model, draft):
    client = client_for(role, role_users, django_user_model)
    response = client.post(f"/api/drafts/{draft.pk}/discard/")
    assert response.status_code == 200
    assert response.json()["id"] == draft.pk and response.json()["status"] == "discarded"
    assert LLMDraft.objects.get(pk=draft.pk).status == LLMDraft.Status.DISCARDED
    again = client.post(f"/api/drafts/{draft.pk}/discard/")
    assert again.status_code == 400 and again.json()["code"] == "draft_not_discardable"


@pytest.mark.django_db
@pytest.mark.parametrize("role", DRAFTERS)
def test_a_drafter_follows_a_run(role, role_users, django_user_model, draft):
    client = client_for(role, role_users, django_user_model)
    run = draft.run
    response = client.get(f"/api/draft-runs/{run.pk}/")
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ("id", "status", "total", "done", "failed", "finished", "percent")} == {
        "id": run.pk,
        "status": "succeeded",
        "total": 1,
        "done": 1,
        "failed": 0,
        "finished": 1,
        "percent": 100,
    }
    assert body["model"] == "api-script" and body["finished_at"] is not None
    assert client.get("/api/draft-runs/999999/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("role", REFUSED)
def test_a_role_that_may_not_draft_is_refused_every_operation(role, role_users, django_user_model, draft):
    client = client_for(role, role_users, django_user_model)
    calls = [
        client.get("/api/parents/api-draft-1/passes/1/drafts/"),
        client.post("/api/parents/api-draft-1/passes/1/drafts/", {"model": "api-script"}, format="json"),
        client.get(f"/api/drafts/{draft.pk}/"),
        client.post(f"/api/drafts/{draft.pk}/accept/", {}, format="json"),
        client.post(f"/api/drafts/{draft.pk}/discard/"),
        client.get(f"/api/draft-runs/{draft.run_id}/"),
    ]
    assert [call.status_code for call in calls] == [403] * len(calls)
    assert DraftRun.objects.count() == 1 and LLMDraft.objects.get(pk=draft.pk).status == LLMDraft.Status.READY


@pytest.mark.django_db
def test_an_anonymous_caller_is_asked_for_a_token(draft):
    response = APIClient().get(f"/api/drafts/{draft.pk}/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
