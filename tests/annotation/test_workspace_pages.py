"""Workspace, source review and history pages and their API: answer-blind, history/diff/revert, scale."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.demo.generator import generate_problem
from annotation.history import pass_version_record
from annotation.models import PassDocument
from annotation.services import pass_document_save, pass_document_submit
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db

SECRETS = ("SECRET-ANSWER", "SECRET-SOLUTION")


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def generated(annotator, source_reviewer):
    """A generated problem with valid Passes 1–4 (approved) and the factories' secret answer."""
    gen = generate_problem(seed=2027, index=3)
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(
        problem_id=gen.problem_id,
        stem=segments["stem"],
        query=segments["query"],
        language=gen.manifest_row["language"],
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    for pass_no, document in enumerate(gen.passes[:4], start=1):
        doc = PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(document),
            approved_by=source_reviewer,
            updated_by=annotator,
        )
        pass_version_record(doc=doc, actor=annotator)
    return parent


def test_every_workspace_response_for_passes_1_to_4_is_answer_blind(role_users, generated):
    pid = generated.problem_id
    urls = []
    for n in (1, 2, 3, 4):
        urls += [
            reverse("annotation:pass_workspace", args=[pid, n]),
            reverse("annotation:pass_review", args=[pid, n]),
            reverse("annotation:pass_history", args=[pid, n]),
            reverse("annotation-api:pass-detail", args=[pid, n]),
            reverse("annotation-api:pass-version-list", args=[pid, n]),
            reverse("annotation-api:pass-version-detail", args=[pid, n, 1]),
            f"{reverse('annotation-api:pass-diff', args=[pid, n])}?from=0&to=1",
        ]
    for role in ("annotator", "source_reviewer", "admin"):
        client, api = _client(role_users[role]), _api(role_users[role])
        for url in urls:
            response = (api if url.startswith("/api/") else client).get(url)
            assert response.status_code == 200, (role, url, response.status_code)
            body = response.content.decode()
            assert not any(secret in body for secret in SECRETS), (role, url)


def test_workspace_payload_has_earlier_passes_and_issues(annotator, generated):
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[generated.problem_id, 4]))
    payload = json.loads(response.context["payload"] and json.dumps(response.context["payload"]))
    assert set(payload["earlier"]) == {"pass1", "pass2", "pass3"}
    assert payload["issues"] == []
    assert payload["consolidated"]["visual_nodes"] == payload["earlier"]["pass1"]["visual_nodes"]
    assert "solution" not in payload


def test_pass5_shows_the_solution_only_when_unlocked(annotator, generated):
    client = _client(annotator)
    url = reverse("annotation:pass_workspace", args=[generated.problem_id, 5])
    response = client.get(url)
    assert response.status_code == 200
    assert "SECRET-SOLUTION" in response.content.decode()
    doc = PassDocument.objects.get(parent=generated, pass_no=2)
    doc.document = {**doc.document, "ambiguities": []}
    doc.approved_sha256 = "0" * 64  # stale approval locks Pass 5 again
    doc.save()
    locked = client.get(url)
    assert locked.status_code == 409
    assert "SECRET-SOLUTION" not in locked.content.decode()


def test_history_diff_and_revert_through_the_api(annotator, settings):
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = 0  # one version per save (see test_version_coalescing.py)
    parent = ParentProblemFactory()
    doc = {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []}
    saved = pass_document_save(parent=parent, pass_no=1, document=doc, actor=annotator, expected_version=None)
    changed = {
        **doc,
        "ambiguities": [
            {
                "id": "u001",
                "scope": "owner",
                "description": "x",
                "candidate_ids": [],
                "evidence_visual_ids": [],
                "evidence_mention_ids": [],
            }
        ],
    }
    saved = pass_document_save(
        parent=parent, pass_no=1, document=changed, actor=annotator, expected_version=1
    )
    api = _api(annotator)
    versions = api.get(reverse("annotation-api:pass-version-list", args=[parent.problem_id, 1])).json()
    assert [v["version"] for v in versions["results"]] == [2, 1] and versions["next"] is None
    first = api.get(reverse("annotation-api:pass-version-list", args=[parent.problem_id, 1]) + "?page_size=1")
    assert [v["version"] for v in first.json()["results"]] == [2]
    assert [v["version"] for v in api.get(first.json()["next"]).json()["results"]] == [1]
    diff = api.get(reverse("annotation-api:pass-diff", args=[parent.problem_id, 1]) + "?from=1&to=2").json()
    assert diff["counts"] == {"added": 1, "removed": 0, "changed": 0}
    assert diff["changes"][0]["record_id"] == "u001"
    revert_url = reverse("annotation-api:pass-revert", args=[parent.problem_id, 1, 1])
    stale = api.post(revert_url, HTTP_IF_MATCH='"1"')
    assert stale.status_code == 409
    assert PassDocument.objects.get(pk=saved.pk).version == 2
    response = api.post(revert_url, HTTP_IF_MATCH='"2"')
    assert response.status_code == 200
    assert response.json()["version"] == 3 and response.json()["document"] == doc
    notes = [
        v["note"]
        for v in api.get(reverse("annotation-api:pass-version-list", args=[parent.problem_id, 1])).json()[
            "results"
        ]
    ]
    assert notes[0] == "reverted to v1"


def test_revert_is_refused_for_a_source_reviewer(source_reviewer, annotator):
    parent = ParentProblemFactory()
    doc = {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []}
    pass_document_save(parent=parent, pass_no=1, document=doc, actor=annotator, expected_version=None)
    response = _api(source_reviewer).post(
        reverse("annotation-api:pass-revert", args=[parent.problem_id, 1, 1]), HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 403


def test_history_page_shows_the_diff_and_reverts(annotator, settings):
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = 0  # one version per save
    parent = ParentProblemFactory()
    doc = {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []}
    pass_document_save(parent=parent, pass_no=1, document=doc, actor=annotator, expected_version=None)
    pass_document_save(
        parent=parent,
        pass_no=1,
        document={
            **doc,
            "ambiguities": [
                {
                    "id": "u001",
                    "scope": "s",
                    "description": "d",
                    "candidate_ids": [],
                    "evidence_visual_ids": [],
                    "evidence_mention_ids": [],
                }
            ],
        },
        actor=annotator,
        expected_version=1,
    )
    client = _client(annotator)
    page = client.get(reverse("annotation:pass_history", args=[parent.problem_id, 1]))
    assert "v1 → v2: 1 added, 0 removed, 0 changed" in page.content.decode()
    client.post(reverse("annotation:pass_revert", args=[parent.problem_id, 1, 1]), {"expected_version": "2"})
    assert PassDocument.objects.get(parent=parent, pass_no=1).document == doc


def test_source_review_page_approves_the_hash_it_showed_and_shows_stale(
    annotator, source_reviewer, generated
):
    doc = PassDocument.objects.get(parent=generated, pass_no=1)
    doc.status = PassDocument.Status.SUBMITTED
    doc.approved_sha256 = ""
    doc.save()
    client = _client(source_reviewer)
    url = reverse("annotation:pass_review", args=[generated.problem_id, 1])
    page = client.get(url)
    assert doc.document_sha256 in page.content.decode()
    refused = client.post(url, {"decision": "approve", "document_sha256": "f" * 64})
    assert refused.status_code == 409
    client.post(url, {"decision": "approve", "document_sha256": doc.document_sha256, "note": "ok"})
    doc.refresh_from_db()
    assert doc.status == PassDocument.Status.APPROVED and doc.approval_is_fresh
    edited = {**doc.document, "ambiguities": []}
    edited["visual_nodes"] = [dict(n) for n in edited["visual_nodes"]]
    edited["visual_nodes"][0]["confidence"] = (
        "low" if edited["visual_nodes"][0]["confidence"] != "low" else "high"
    )
    pass_document_save(
        parent=generated, pass_no=1, document=edited, actor=annotator, expected_version=doc.version
    )
    assert "An earlier approval is stale" in client.get(url).content.decode()


def test_submit_is_refused_while_the_validator_reports_issues(annotator):
    parent = ParentProblemFactory()
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    doc = pass_document_save(
        parent=parent,
        pass_no=1,
        document={"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []},
        actor=annotator,
        expected_version=None,
    )
    response = _api(annotator).post(reverse("annotation-api:pass-submit", args=[parent.problem_id, 1]))
    assert response.status_code == 400
    assert any(e["code"] == "VISUAL_NODES_EMPTY" for e in response.json()["extra"]["errors"])
    with pytest.raises(Exception):  # noqa: B017 - the service refuses the same way
        pass_document_submit(doc=doc, actor=annotator)


def _two_hundred_regions(parent) -> dict[str, Any]:
    nodes = []
    for i in range(200):
        x, y = (i % 20) * 50, (i // 20) * 100
        nodes.append(
            {
                "id": f"v{i + 1:03d}",
                "type": "text_glyph",
                "subtype": "",
                "text": f"F_{i}",
                "image_id": "img_0",
                "bbox_1000": [x, y, x + 40, y + 80],
                "keypoints_1000": [],
                "center_1000": [-1, -1],
                "radius_1000": -1,
                "confidence": "high",
            }
        )
    return {"problem_id": parent.problem_id, "visual_nodes": nodes, "ambiguities": []}


@pytest.mark.parametrize("regions", [1, 200])
def test_workspace_query_count_does_not_grow_with_regions(annotator, django_assert_max_num_queries, regions):
    parent = ParentProblemFactory()
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    document = _two_hundred_regions(parent)
    document["visual_nodes"] = document["visual_nodes"][:regions]
    pass_document_save(parent=parent, pass_no=1, document=document, actor=annotator, expected_version=None)
    client = _client(annotator)
    api = _api(annotator)
    page_url = reverse("annotation:pass_workspace", args=[parent.problem_id, 1])
    api_url = reverse("annotation-api:pass-detail", args=[parent.problem_id, 1])
    client.get(page_url)  # warm up
    # 10: one of them reads the last source review's record comments (annotation.source_reviews), one the problems
    # the annotator annotates a second time (annotation.double.blind)
    with django_assert_max_num_queries(10):
        assert client.get(page_url).status_code == 200
    with django_assert_max_num_queries(10):
        assert api.get(api_url).status_code == 200
    with django_assert_max_num_queries(20):  # save = locks, validation context, version row, event
        response = api.put(
            api_url,
            {
                "document": {**document, "ambiguities": []}
                | {"visual_nodes": [{**n, "confidence": "low"} for n in document["visual_nodes"]]}
            },
            format="json",
            HTTP_IF_MATCH='"1"',
        )
        assert response.status_code == 200
