"""REST API for sources, parents and pass documents: filters, privacy, optimistic locking, review."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import ImportJob, ParentProblem, PassDocument
from audit.models import Event
from kit.canonical import digest
from physalign_site.roles import ALL_ROLES
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

SECRET_ANSWER = "SECRET-ANSWER-mg-cos-theta"
SECRET_SOLUTION = "SECRET-SOLUTION-resolve-forces"

pytestmark = pytest.mark.django_db


def client_for(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def pass1_doc(pid: str, **extra: Any) -> dict[str, Any]:
    return {"problem_id": pid, "visual_nodes": [], "ambiguities": [], **extra}


def pass_url(pid: str, pass_no: int, action: str = "") -> str:
    return f"/api/parents/{pid}/passes/{pass_no}/" + (f"{action}/" if action else "")


@pytest.fixture
def parent() -> ParentProblem:
    return ParentProblemFactory(problem_id="prob_api", source=SourceFactory(name="SeePhys"))


@pytest.fixture
def draft(parent, annotator) -> PassDocument:
    return PassDocumentFactory(
        parent=parent, pass_no=1, document=pass1_doc(parent.problem_id), updated_by=annotator
    )


def approve_passes_1_to_4(parent: ParentProblem, reviewer: Any, annotator: Any) -> None:
    for pass_no in (1, 2, 3, 4):
        doc = {"problem_id": parent.problem_id, "marker": pass_no}
        PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=doc,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(doc),
            approved_by=reviewer,
            updated_by=annotator,
        )


# --- listing ------------------------------------------------------------------------------------------


def test_parent_list_filters_search_ordering_and_pagination(annotator):
    seephys, other = SourceFactory(name="SeePhys"), SourceFactory(name="PhysReason")
    ParentProblemFactory(problem_id="a_en", source=seephys, language="en", domain="mechanics")
    ParentProblemFactory(
        problem_id="b_zh",
        source=seephys,
        language="zh",
        domain="electromagnetism",
        stem="带电粒子在磁场中运动",
        status="in_annotation",
    )
    ParentProblemFactory(
        problem_id="c_en", source=other, language="en", domain="mechanics", stem="A pulley with two masses."
    )
    client = client_for(annotator)

    def ids(query: str) -> list[str]:
        response = client.get(f"/api/parents/{query}")
        assert response.status_code == 200, response.data
        return [row["problem_id"] for row in response.data["results"]]

    assert ids("") == ["a_en", "b_zh", "c_en"]
    assert ids("?source=SeePhys") == ["a_en", "b_zh"]
    assert ids("?language=zh") == ["b_zh"]
    assert ids("?domain=mechanics") == ["a_en", "c_en"]
    assert ids("?status=in_annotation") == ["b_zh"]
    assert ids("?search=pulley") == ["c_en"]
    assert ids("?ordering=-problem_id") == ["c_en", "b_zh", "a_en"]
    assert ids("?language=en&domain=mechanics&source=PhysReason") == ["c_en"]

    page = client.get("/api/parents/?page_size=2").data
    assert set(page) == {"next", "previous", "results"} and page["previous"] is None
    assert [r["problem_id"] for r in page["results"]] == ["a_en", "b_zh"]
    second = client.get(page["next"]).data
    assert [r["problem_id"] for r in second["results"]] == ["c_en"] and second["next"] is None
    assert [r["problem_id"] for r in client.get(second["previous"]).data["results"]] == ["a_en", "b_zh"]
    reverse = client.get("/api/parents/?ordering=-problem_id&page_size=2").data
    assert [r["problem_id"] for r in client.get(reverse["next"]).data["results"]] == ["a_en"]
    # only the unique key orders a cursor page: another field is ignored, not a slow page
    assert ids("?ordering=status") == ["a_en", "b_zh", "c_en"]
    assert client.get("/api/parents/?language=fr").status_code == 400


def test_parent_detail_has_images_and_pass_summary(annotator, parent, draft):
    image = ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    response = client_for(annotator).get(f"/api/parents/{parent.problem_id}/")
    assert response.status_code == 200
    assert response.data["source"]["name"] == "SeePhys"
    assert response.data["images"] == [
        {
            "image_id": "img_0",
            "width": 320,
            "height": 200,
            "sha256": image.sha256,
            "pixels_sha256": image.pixels_sha256,
            "media_type": "image/png",
            "url": f"/problems/{parent.problem_id}/images/img_0",
        }
    ]
    assert response.data["passes"] == [
        {
            "pass_no": 1,
            "status": "draft",
            "version": 1,
            "document_sha256": draft.document_sha256,
            "approval_is_fresh": False,
        }
    ]
    summary = client_for(annotator).get(f"/api/parents/{parent.problem_id}/passes/")
    assert summary.data == response.data["passes"]


# --- private fields -----------------------------------------------------------------------------------


def test_answer_and_solution_only_for_key_holders(role_users, key_holder, parent):
    response = client_for(key_holder).get(f"/api/parents/{parent.problem_id}/")
    assert response.data["answer"] == SECRET_ANSWER
    assert response.data["solution"] == SECRET_SOLUTION
    for role in ALL_ROLES:  # the admin role without the key-holder permission included
        body = client_for(role_users[role]).get(f"/api/parents/{parent.problem_id}/")
        assert body.status_code == 200
        assert "answer" not in body.data and "solution" not in body.data


def test_secret_text_appears_in_no_response_but_a_key_holders_detail(role_users, key_holder, parent, draft):
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    pid = parent.problem_id
    # The annotator writes (so PUT responses and events are covered), a reviewer approves.
    annotator_client = client_for(role_users["annotator"])
    put = annotator_client.put(
        pass_url(pid, 1),
        {"document": pass1_doc(pid, ambiguities=[{"id": "u001"}])},
        format="json",
        headers={"If-Match": "1"},
    )
    assert put.status_code == 200
    urls = [
        "/api/me/",
        "/api/sources/",
        f"/api/sources/{parent.source_id}/",
        "/api/parents/",
        f"/api/parents/?search={pid}",
        f"/api/parents/{pid}/",
        f"/api/parents/{pid}/passes/",
        pass_url(pid, 1),
        pass_url(pid, 5),
        "/api/events/",
        "/api/schema/",
    ]
    for role in ALL_ROLES:  # the admin role without the key-holder permission included
        client = client_for(role_users[role])
        for url in urls:
            body = client.get(url).content.decode()
            assert SECRET_ANSWER not in body, (role, url)
            assert SECRET_SOLUTION not in body, (role, url)
    for url in urls:  # a key holder sees the answer on the detail only, never through pass or list endpoints
        body = client_for(key_holder).get(url).content.decode()
        assert (SECRET_ANSWER in body) == (url == f"/api/parents/{pid}/"), url


# --- optimistic locking -------------------------------------------------------------------------------


def test_put_with_current_version_bumps_version_and_etag(annotator, parent, draft):
    client = client_for(annotator)
    get = client.get(pass_url(parent.problem_id, 1))
    assert get.status_code == 200 and get["ETag"] == '"1"'
    new_doc = {
        **pass1_doc(parent.problem_id),
        "ambiguities": [
            {
                "id": "u001",
                "scope": "diagram",
                "description": "label unclear",
                "candidate_ids": [],
                "evidence_visual_ids": [],
                "evidence_mention_ids": [],
            }
        ],
    }
    response = client.put(
        pass_url(parent.problem_id, 1),
        {"document": new_doc},
        format="json",
        headers={"If-Match": get["ETag"]},
    )
    assert response.status_code == 200, response.data
    assert response.data["version"] == 2
    assert response["ETag"] == '"2"'
    assert response.data["document"] == new_doc
    assert response.data["document_sha256"] == digest(new_doc)
    assert response.data["status"] == "draft"
    draft.refresh_from_db()
    assert (draft.version, draft.document_sha256, draft.updated_by) == (2, digest(new_doc), annotator)
    parent.refresh_from_db()
    assert parent.status == "in_annotation"
    # Bare If-Match works as well; an unchanged document is a no-op (no version bump).
    again = client.put(
        pass_url(parent.problem_id, 1), {"document": new_doc}, format="json", headers={"If-Match": "2"}
    )
    assert again.status_code == 200 and again.data["version"] == 2


def test_stale_if_match_is_409_and_nothing_changes(annotator, parent, draft):
    before = (draft.document, draft.version, draft.document_sha256)
    theirs = pass1_doc(parent.problem_id, ambiguities=[{"id": "u001"}])
    response = client_for(annotator).put(
        pass_url(parent.problem_id, 1), {"document": theirs}, format="json", headers={"If-Match": '"7"'}
    )
    assert response.status_code == 409
    assert response.data["code"] == "version_conflict"
    assert response.data["extra"]["current_version"] == 1
    assert response.data["extra"]["document_sha256"] == draft.document_sha256
    stored = PassDocument.objects.get(pk=draft.pk)
    assert (stored.document, stored.version, stored.document_sha256) == before
    assert not Event.objects.filter(verb="pass_document.save").exists()


def test_missing_if_match_is_428_for_existing_document(annotator, parent, draft):
    response = client_for(annotator).put(
        pass_url(parent.problem_id, 1),
        {"document": pass1_doc(parent.problem_id, ambiguities=[{}])},
        format="json",
    )
    assert response.status_code == 428
    assert response.data["code"] == "precondition_required"
    stored = PassDocument.objects.get(pk=draft.pk)
    assert stored.version == 1 and stored.document == pass1_doc(parent.problem_id)


def test_create_needs_no_if_match_and_keeps_draft_issues(annotator, parent):
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    response = client_for(annotator).put(
        pass_url(parent.problem_id, 1), {"document": pass1_doc(parent.problem_id)}, format="json"
    )
    assert response.status_code == 200, response.data
    assert response.data["version"] == 1 and response["ETag"] == '"1"'
    # An image exists but no visual node is drawn yet: saved as a draft, reported, not refused.
    assert [issue["code"] for issue in response.data["validation_errors"]] == ["VISUAL_NODES_EMPTY"]
    submit = client_for(annotator).post(pass_url(parent.problem_id, 1, "submit"))
    assert submit.status_code == 400 and submit.data["code"] == "document_has_issues"
    assert PassDocument.objects.get(parent=parent, pass_no=1).status == "draft"


def test_forbidden_key_deep_inside_is_refused_and_nothing_stored(annotator, parent, draft):
    bad = pass1_doc(parent.problem_id, ambiguities=[{"id": "u001", "notes": {"deep": [{"Solution": "x"}]}}])
    response = client_for(annotator).put(
        pass_url(parent.problem_id, 1), {"document": bad}, format="json", headers={"If-Match": "1"}
    )
    assert response.status_code == 400
    assert response.data["code"] == "document_invalid"
    assert [(e["code"], e["path"]) for e in response.data["extra"]["errors"]] == [
        ("FORBIDDEN_KEY", "ambiguities[0].notes.deep[0].Solution")
    ]
    stored = PassDocument.objects.get(pk=draft.pk)
    assert stored.version == 1 and stored.document == pass1_doc(parent.problem_id)
    assert "Solution" not in str(PassDocument.objects.values_list("document", flat=True)[0])
    # A brand-new pass with an answer key is not created either.
    fresh = client_for(annotator).put(
        pass_url(parent.problem_id, 2),
        {"document": {"problem_id": parent.problem_id, "answer": "mg"}},
        format="json",
    )
    assert fresh.status_code == 400
    assert not PassDocument.objects.filter(parent=parent, pass_no=2).exists()


@pytest.mark.parametrize("document", [["not", "an", "object"], {"problem_id": "someone_else"}])
def test_non_object_or_wrong_problem_is_refused(annotator, parent, draft, document):
    response = client_for(annotator).put(
        pass_url(parent.problem_id, 1), {"document": document}, format="json", headers={"If-Match": "1"}
    )
    assert response.status_code == 400 and response.data["code"] == "document_invalid"
    assert PassDocument.objects.get(pk=draft.pk).version == 1


# --- review -------------------------------------------------------------------------------------------


def test_submit_then_approve_is_bound_to_hash(annotator, source_reviewer, parent, draft):
    submit = client_for(annotator).post(pass_url(parent.problem_id, 1, "submit"))
    assert submit.status_code == 200 and submit.data["status"] == "submitted"
    reviewer = client_for(source_reviewer)
    stale = reviewer.post(
        pass_url(parent.problem_id, 1, "approve"), {"document_sha256": "0" * 64}, format="json"
    )
    assert stale.status_code == 409 and stale.data["code"] == "document_changed"
    assert PassDocument.objects.get(pk=draft.pk).status == "submitted"

    ok = reviewer.post(
        pass_url(parent.problem_id, 1, "approve"),
        {"document_sha256": draft.document_sha256, "note": "looks right"},
        format="json",
    )
    assert ok.status_code == 200, ok.data
    assert ok.data["status"] == "approved" and ok.data["approval_is_fresh"] is True
    assert ok.data["approved_by"] == source_reviewer.username

    # The annotator edits the approved document: the approval stays on record but is no longer fresh.
    edited = client_for(annotator).put(
        pass_url(parent.problem_id, 1),
        {"document": pass1_doc(parent.problem_id, ambiguities=[{"id": "u001"}])},
        format="json",
        headers={"If-Match": '"1"'},
    )
    assert edited.status_code == 200, edited.data
    assert edited.data["status"] == "draft" and edited.data["approval_is_fresh"] is False
    stored = PassDocument.objects.get(pk=draft.pk)
    assert stored.approved_sha256 == draft.document_sha256 != stored.document_sha256


def test_reject_needs_a_note(annotator, source_reviewer, parent, draft):
    draft.status = "submitted"
    draft.save()
    reviewer = client_for(source_reviewer)
    url = pass_url(parent.problem_id, 1, "reject")
    refused = reviewer.post(url, {"document_sha256": draft.document_sha256, "note": "  "}, format="json")
    assert refused.status_code == 400 and refused.data["code"] == "note_required"
    assert PassDocument.objects.get(pk=draft.pk).status == "submitted"
    rejected = reviewer.post(
        url, {"document_sha256": draft.document_sha256, "note": "Missing arrow."}, format="json"
    )
    assert rejected.status_code == 200
    assert rejected.data["status"] == "rejected" and rejected.data["review_note"] == "Missing arrow."


def test_reviewer_cannot_approve_own_edit_but_admin_can(django_user_model, role_users, parent):
    both = django_user_model.objects.create_user(username="both", password="pw-both")
    both.groups.add(Group.objects.get(name="annotator"), Group.objects.get(name="source_reviewer"))
    doc = PassDocumentFactory(
        parent=parent, pass_no=1, document=pass1_doc(parent.problem_id), updated_by=both, status="submitted"
    )
    refused = client_for(both).post(
        pass_url(parent.problem_id, 1, "approve"), {"document_sha256": doc.document_sha256}, format="json"
    )
    assert refused.status_code == 403 and refused.data["code"] == "self_review"
    assert PassDocument.objects.get(pk=doc.pk).status == "submitted"

    admin = role_users["admin"]
    doc.updated_by = admin
    doc.save()
    ok = client_for(admin).post(
        pass_url(parent.problem_id, 1, "approve"), {"document_sha256": doc.document_sha256}, format="json"
    )
    assert ok.status_code == 200 and ok.data["status"] == "approved"


def test_approving_pass_4_marks_parent_annotated_and_edits_reopen_it(annotator, source_reviewer, parent):
    approve_passes_1_to_4(parent, source_reviewer, annotator)
    doc4 = PassDocument.objects.get(parent=parent, pass_no=4)
    doc4.status = "submitted"
    doc4.save()
    response = client_for(source_reviewer).post(
        pass_url(parent.problem_id, 4, "approve"), {"document_sha256": doc4.document_sha256}, format="json"
    )
    assert response.status_code == 200
    parent.refresh_from_db()
    assert parent.status == "annotated"
    client_for(annotator).put(
        pass_url(parent.problem_id, 2),
        {"document": {"problem_id": parent.problem_id}},
        format="json",
        headers={"If-Match": "1"},
    )
    parent.refresh_from_db()
    assert parent.status == "in_annotation"


def test_pass5_locked_until_passes_1_to_4_approved(annotator, source_reviewer, parent):
    client = client_for(annotator)
    doc5 = {"problem_id": parent.problem_id, "solution_steps": [], "final_answer": "mg cos θ"}
    locked = client.put(pass_url(parent.problem_id, 5), {"document": doc5}, format="json")
    assert locked.status_code == 409 and locked.data["code"] == "pass5_locked"
    assert client.get(pass_url(parent.problem_id, 5)).status_code == 409
    assert not PassDocument.objects.filter(parent=parent, pass_no=5).exists()

    approve_passes_1_to_4(parent, source_reviewer, annotator)
    opened = client.put(pass_url(parent.problem_id, 5), {"document": doc5}, format="json")
    assert opened.status_code == 200, opened.data
    assert client.get(pass_url(parent.problem_id, 5)).data["document"] == doc5
    assert client_for(source_reviewer).get(pass_url(parent.problem_id, 5)).status_code == 403

    # An edit to pass 3 makes its approval stale, which locks pass 5 again.
    client.put(
        pass_url(parent.problem_id, 3),
        {"document": {"problem_id": parent.problem_id, "x": 1}},
        format="json",
        headers={"If-Match": "1"},
    )
    assert client.get(pass_url(parent.problem_id, 5)).status_code == 409


# --- auth, events, sources, schema ---------------------------------------------------------------------


def test_token_authentication(annotator, parent):
    anonymous = APIClient().get("/api/parents/")
    assert (anonymous.status_code, anonymous["WWW-Authenticate"]) == (401, "Token")
    got = APIClient().post(
        "/api/auth/token/", {"username": annotator.username, "password": "pw-user_annotator"}, format="json"
    )
    assert got.status_code == 200
    assert got.data["token"] == Token.objects.get(user=annotator).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {got.data['token']}")
    response = client.get("/api/parents/")
    assert response.status_code == 200
    assert [r["problem_id"] for r in response.data["results"]] == [parent.problem_id]
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    bad = client.get("/api/parents/")  # token auth comes first, so DRF answers with its challenge
    assert (bad.status_code, bad["WWW-Authenticate"], bad.data["code"]) == (
        401,
        "Token",
        "authentication_failed",
    )


def test_events_recorded_for_save_and_review(annotator, source_reviewer, admin_user_role, parent, draft):
    unchanged = client_for(annotator).put(
        pass_url(parent.problem_id, 1),
        {"document": pass1_doc(parent.problem_id)},
        format="json",
        headers={"If-Match": "1"},
    )
    assert unchanged.status_code == 200 and unchanged.data["version"] == 1
    # The document above equals the stored one: a no-op writes no event.
    new_doc = pass1_doc(parent.problem_id, ambiguities=[{"id": "u001"}])
    saved = client_for(annotator).put(
        pass_url(parent.problem_id, 1), {"document": new_doc}, format="json", headers={"If-Match": "1"}
    )
    assert saved.status_code == 200
    PassDocument.objects.filter(pk=draft.pk).update(status="submitted")
    client_for(source_reviewer).post(
        pass_url(parent.problem_id, 1, "reject"),
        {"document_sha256": digest(new_doc), "note": "fix u001"},
        format="json",
    )
    response = client_for(admin_user_role).get(
        f"/api/events/?object_type=annotation.passdocument&object_id={draft.pk}"
    )
    assert response.status_code == 200
    rows = response.data["results"]
    assert [(r["verb"], r["actor"]) for r in rows] == [
        ("pass_document.reject", source_reviewer.username),
        ("pass_document.save", annotator.username),
    ]
    save = rows[1]
    assert save["before"] == {"version": 1, "document_sha256": draft.document_sha256, "status": "draft"}
    assert save["after"]["version"] == 2 and save["after"]["document_sha256"] == digest(new_doc)
    assert client_for(admin_user_role).get("/api/events/?object_id=nope").data["results"] == []


def test_sources_create_admin_only(annotator, admin_user_role):
    assert client_for(annotator).post("/api/sources/", {"name": "X"}, format="json").status_code == 403
    created = client_for(admin_user_role).post(
        "/api/sources/",
        {"name": "PhysReason", "license": "MIT", "url": "https://example.org/pr"},
        format="json",
    )
    assert created.status_code == 201 and created.data["name"] == "PhysReason"
    duplicate = client_for(admin_user_role).post("/api/sources/", {"name": "PhysReason"}, format="json")
    assert duplicate.status_code == 409
    listed = client_for(annotator).get("/api/sources/")
    assert [s["name"] for s in listed.data["results"]] == ["PhysReason"] and listed.data["next"] is None
    assert Event.objects.filter(verb="source.create", object_id=str(created.data["id"])).count() == 1


def test_schema_lists_the_paths(annotator):
    response = client_for(annotator).get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/sources/",
        "/api/sources/{source_id}/",
        "/api/parents/",
        "/api/parents/{problem_id}/",
        "/api/parents/{problem_id}/passes/",
        "/api/parents/{problem_id}/passes/{pass_no}/",
        "/api/parents/{problem_id}/passes/{pass_no}/submit/",
        "/api/parents/{problem_id}/passes/{pass_no}/approve/",
        "/api/parents/{problem_id}/passes/{pass_no}/reject/",
        "/api/events/",
        "/api/imports/",
        "/api/imports/{job_id}/",
    ):
        assert path in paths, path
    assert set(paths["/api/parents/{problem_id}/passes/{pass_no}/"]) == {"get", "put"}


# --- imports ------------------------------------------------------------------------------------------


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_import_upload_is_queued_and_readable(annotator):
    upload = SimpleUploadedFile(
        "batch.zip", _zip_bytes({"manifest.jsonl": b""}), content_type="application/zip"
    )
    client = client_for(annotator)
    response = client.post("/api/imports/", {"kind": "problems", "file": upload}, format="multipart")
    assert response.status_code == 202, response.data
    assert response.data["kind"] == "problems" and response.data["status"] == "queued"
    status = client.get(f"/api/imports/{response.data['id']}/")
    assert status.status_code == 200
    assert {"status", "total", "done", "report"} <= set(status.data)


def test_import_refuses_a_non_zip(annotator):
    upload = SimpleUploadedFile("notes.txt", b"hello", content_type="text/plain")
    response = client_for(annotator).post(
        "/api/imports/", {"kind": "problems", "file": upload}, format="multipart"
    )
    assert response.status_code == 400 and response.data["code"] == "import_not_zip"
    assert not ImportJob.objects.exists()
