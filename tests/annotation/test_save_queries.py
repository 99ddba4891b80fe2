"""An autosave costs the same queries whatever the document's size, and answers what a fresh read answers.

Issue 32 §1: the save path (``PUT /api/parents/<id>/passes/<n>/`` with If-Match, ``pass_document_save``) is what
a team of annotators hits several times a second; its query count must not grow with the regions drawn. The
save answers with the issues it found while storing (``PassDocument.checked_issues``); a later GET re-checks
the stored document, and both must say the same."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotation.assignments.services import assignment_assign
from annotation.models import PassDocumentVersion
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, SourceFactory

pytestmark = pytest.mark.django_db


def _node(i: int, image_id: str) -> dict[str, Any]:
    x = 10 + (i * 4) % 900
    y = 10 + (i * 7) % 900
    return {
        "id": f"v{i + 1:03d}",
        "type": "text_glyph" if i % 3 == 0 else "point_mark",
        "subtype": "label" if i % 3 == 0 else "focal_point",
        "text": f"L{i}" if i % 3 == 0 else "",
        "image_id": image_id,
        "bbox_1000": [x, y, x + 20, y + 20],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "keypoints_1000": [],
        "confidence": "high",
    }


def _save(client: APIClient, pid: str, document: dict[str, Any], version: int):
    return client.put(
        f"/api/parents/{pid}/passes/1/",
        {"document": document},
        format="json",
        headers={"If-Match": f'"{version}"'},
    )


def _queries_per_save(client: APIClient, pid: str, image_id: str, regions: int) -> tuple[int, dict[str, Any]]:
    document = {
        "problem_id": pid,
        "visual_nodes": [_node(i, image_id) for i in range(regions)],
        "ambiguities": [],
    }
    document["visual_nodes"][0]["text"] = ""  # a label glyph without its text: an issue to answer with
    first = _save(client, pid, document, 1)
    assert first.status_code == 200, first.content
    document["visual_nodes"][0]["bbox_1000"][0] += 1  # the next autosave: one region nudged
    with CaptureQueriesContext(connection) as queries:
        second = _save(client, pid, document, first.json()["version"])
    assert second.status_code == 200, second.content
    return len(queries.captured_queries), second.json()


def _with_empty_pass_1(problem_id, annotator, **parent_fields):
    """A parent with one image and an empty Pass 1 last saved by ``annotator``."""
    parent = ParentProblemFactory(problem_id=problem_id, **parent_fields)
    image = ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    PassDocumentFactory(
        parent=parent,
        pass_no=1,
        document={"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []},
        updated_by=annotator,
    )
    return parent, image


def test_queries_per_save_are_flat_in_the_documents_size_under_strict_assignment(annotator, admin_user_role):
    source = SourceFactory(name="strict", assignment_strict=True)
    client = APIClient()
    client.force_login(annotator)
    counts = {}
    for regions in (2, 200):
        parent, image = _with_empty_pass_1(f"p_save_{regions}", annotator, source=source)
        assignment_assign(parent_ids=[parent.pk], role="annotator", users=[annotator], actor=admin_user_role)
        counts[regions], answered = _queries_per_save(client, parent.problem_id, image.image_id, regions)
        fresh = client.get(f"/api/parents/{parent.problem_id}/passes/1/").json()
        assert answered["validation_errors"] and answered["validation_errors"] == fresh["validation_errors"]
        assert (
            answered["version"] == fresh["version"]
            and answered["document_sha256"] == fresh["document_sha256"]
        )
    assert counts[2] == counts[200], counts
    assert counts[200] <= 21, counts  # the response reuses the issues the save found (no second check)


def test_a_save_resent_after_its_reply_was_lost_is_answered_as_stored_not_as_a_conflict(
    annotator, role_users
):
    """A gunicorn worker killed after the commit, or a dropped connection: the workspace resends the same
    document with the If-Match it first sent. Stored once, answered 200; a different document, or the same one
    from somebody else, is still a conflict."""
    parent, image = _with_empty_pass_1("p_resent", annotator)
    client = APIClient()
    client.force_login(annotator)
    document = {
        "problem_id": parent.problem_id,
        "visual_nodes": [_node(0, image.image_id)],
        "ambiguities": [],
    }
    first = _save(client, parent.problem_id, document, 1)
    assert first.status_code == 200 and first.json()["version"] == 2
    resent = _save(client, parent.problem_id, document, 1)  # the reply to the first was lost
    assert resent.status_code == 200, resent.content
    assert (
        resent.json()["version"] == 2 and resent.json()["document_sha256"] == first.json()["document_sha256"]
    )
    assert PassDocumentVersion.objects.filter(pass_document__parent=parent).count() == 1

    changed = {**document, "visual_nodes": [_node(1, image.image_id)]}
    assert _save(client, parent.problem_id, changed, 1).json()["code"] == "version_conflict"
    other = APIClient()
    other.force_login(role_users["admin"])
    assert _save(other, parent.problem_id, document, 1).status_code == 409
