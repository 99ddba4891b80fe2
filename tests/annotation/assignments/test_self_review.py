"""Nobody reviews their own pass, over HTTP: a reviewer who saved any version of the pass (not only the last
one), or who is its problem's assigned annotator, may neither approve nor reject it, on the review page or
through the API; an admin may; another reviewer may."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.assignments.services import assignment_assign
from annotation.models import PassDocument
from annotation.selectors import SourceQueueFilters
from annotation.source_reviews import source_review_next_for
from tests.factories import ParentProblemFactory

pytestmark = pytest.mark.django_db
REFUSAL = (
    "You cannot {verb} a pass you annotated (you edited it, saved a version of it or are its problem&#x27;s "
    "assigned annotator); ask another reviewer."
)


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def doc1(pid: str, marker: int) -> dict[str, Any]:
    return {"problem_id": pid, "visual_nodes": [], "ambiguities": [], "marker": marker}


def saved_by(pid: str, *users: Any) -> PassDocument:
    """Pass 1 of a new problem saved by each user in turn (one history version each), then submitted."""
    ParentProblemFactory(problem_id=pid)
    for version, user in enumerate(users):
        headers = {"If-Match": f'"{version}"'} if version else {}
        answer = api(user).put(
            f"/api/parents/{pid}/passes/1/",
            {"document": doc1(pid, version + 1)},
            format="json",
            headers=headers,
        )
        assert answer.status_code == 200, answer.json()
    doc = PassDocument.objects.get(parent__problem_id=pid, pass_no=1)
    PassDocument.objects.filter(pk=doc.pk).update(status="submitted")
    doc.refresh_from_db()
    assert list(doc.versions.order_by("version").values_list("saved_by__username", flat=True)) == [
        u.username for u in users
    ]
    return doc


def decide_api(user: Any, doc: PassDocument, decision: str):
    body = {"document_sha256": doc.document_sha256, "note": "R2 is the resistor."}
    return api(user).post(f"/api/parents/{doc.parent.problem_id}/passes/1/{decision}/", body, format="json")


def decide_page(client, user: Any, doc: PassDocument, decision: str):
    client.force_login(user)
    return client.post(
        f"/problems/{doc.parent.problem_id}/passes/1/review/",
        {"decision": decision, "document_sha256": doc.document_sha256, "note": "R2 is the resistor."},
    )


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_reviewer_who_saved_an_earlier_version_is_refused_on_the_api_and_the_page(client, people, decision):
    doc = saved_by("sr_01", people.both, people.ann_a)  # ``both`` is not the last editor, but saved v1
    refused = decide_api(people.both, doc, decision)
    assert refused.status_code == 403 and refused.json()["code"] == "self_review"
    assert refused.json()["message"] == REFUSAL.format(verb=decision).replace("&#x27;", "'")
    page = decide_page(client, people.both, doc, decision)
    assert page.status_code == 403
    assert REFUSAL.format(verb=decision) in page.content.decode()
    assert PassDocument.objects.get(pk=doc.pk).status == "submitted"

    decided = decide_api(people.rev, doc, decision)
    assert decided.status_code == 200, decided.json()
    assert decided.json()["status"] == {"approve": "approved", "reject": "rejected"}[decision]


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_assigned_annotator_is_refused_even_if_they_never_saved(client, people, decision):
    doc = saved_by("sr_02", people.ann_a)
    assignment_assign(parent_ids=[doc.parent_id], role="annotator", users=[people.both], actor=people.admin)
    assert decide_api(people.both, doc, decision).json()["code"] == "self_review"
    assert decide_page(client, people.both, doc, decision).status_code == 403
    assert PassDocument.objects.get(pk=doc.pk).status == "submitted"


def test_an_admin_who_saved_a_version_may_still_decide(people):
    doc = saved_by("sr_03", people.admin, people.ann_a)
    answer = decide_api(people.admin, doc, "approve")
    assert answer.status_code == 200 and answer.json()["status"] == "approved"


def test_the_queue_marks_the_reviewers_own_passes_and_next_skips_them(client, people):
    own = saved_by("sr_04", people.both, people.ann_a)
    other = saved_by("sr_05", people.ann_b)
    client.force_login(people.both)
    html = client.get("/source-review/").content.decode()
    rows = dict(re.findall(r'<th scope="row" class="cell-id">([^<]+)</th>(.*?)</tr>', html, re.S))
    assert "you annotated it: another reviewer decides" in rows["sr_04"]
    assert "you annotated it" not in rows["sr_05"]
    queue = SourceQueueFilters().queue()
    assert source_review_next_for(queue=queue, reviewer=people.both) == other
    assert source_review_next_for(queue=queue, reviewer=people.rev) == own
