"""Strict assignment over the pass API with valid bodies: on a strict source only the assigned annotator (and
admins) save, submit, revert and accept a draft; other annotators still read; an unassigned problem is the
admins' until assigned. An open source locks nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.assignments.services import assignment_assign, source_assignment_strict_set
from annotation.drafting.services import draft_execute, draft_run_create
from annotation.models import PassDocument
from tests.annotation.test_drafting import NODE, pass1, scripted
from tests.factories import (
    ParentProblemFactory,
    PassDocumentFactory,
    ProblemImageFactory,
    SourceFactory,
    png_bytes,
)

pytestmark = pytest.mark.django_db
ASSIGNED = "st_01 is assigned to ann_a, and its source uses strict assignment: only they (and admins) may edit its passes."


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def doc1(pid: str, marker: int = 0) -> dict[str, Any]:
    return {
        "problem_id": pid,
        "visual_nodes": [],
        "ambiguities": [],
        **({"marker": marker} if marker else {}),
    }


@pytest.fixture
def strict_problem(people):
    source = SourceFactory(name="StrictSrc")
    parent = ParentProblemFactory(problem_id="st_01", source=source)
    ParentProblemFactory(problem_id="st_02", source=source)  # nobody's
    assignment_assign(parent_ids=[parent.pk], role="annotator", users=[people.ann_a], actor=people.admin)
    source_assignment_strict_set(source=source, strict=True, actor=people.admin)
    return parent


def url(pid: str, action: str = "") -> str:
    return f"/api/parents/{pid}/passes/1/" + (f"{action}/" if action else "")


def test_another_annotator_cannot_save_submit_or_revert_but_reads(people, strict_problem):
    owner, other = api(people.ann_a), api(people.ann_b)
    created = owner.put(url("st_01"), {"document": doc1("st_01")}, format="json")
    assert created.status_code == 200, created.json()

    refused = other.put(
        url("st_01"), {"document": doc1("st_01", 2)}, format="json", headers={"If-Match": '"1"'}
    )
    assert refused.status_code == 403
    assert refused.json() == {"message": ASSIGNED, "code": "not_assignee", "extra": {}}
    submit = other.post(url("st_01", "submit"))
    assert submit.status_code == 403 and submit.json()["code"] == "not_assignee"
    revert = other.post(url("st_01", "versions/1/revert"), headers={"If-Match": '"1"'})
    assert revert.status_code == 403 and revert.json()["message"] == ASSIGNED
    stored = PassDocument.objects.get(parent=strict_problem, pass_no=1)
    assert (stored.version, stored.status, stored.document) == (1, "draft", doc1("st_01"))

    read = other.get(url("st_01"))
    assert read.status_code == 200 and read.json()["document"] == doc1("st_01")

    assert (
        owner.put(
            url("st_01"), {"document": doc1("st_01", 2)}, format="json", headers={"If-Match": '"1"'}
        ).status_code
        == 200
    )
    # the assignee's submit passes the assignment rule and reaches the validator (a diagram-less Pass 1 has issues)
    submitted = owner.post(url("st_01", "submit"))
    assert submitted.status_code == 400 and submitted.json()["code"] == "document_has_issues"


def test_an_unassigned_problem_of_a_strict_source_is_editable_by_admins_only(people, strict_problem):
    refused = api(people.ann_a).put(url("st_02"), {"document": doc1("st_02")}, format="json")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        "st_02 is not assigned to anyone, and its source uses strict assignment: only admins may edit it until an "
        "admin assigns it."
    )
    assert not PassDocument.objects.filter(parent__problem_id="st_02").exists()
    assert api(people.admin).put(url("st_02"), {"document": doc1("st_02")}, format="json").status_code == 200
    assert api(people.admin).put(url("st_01"), {"document": doc1("st_01")}, format="json").status_code == 200


def test_an_open_source_locks_nothing(people, strict_problem):
    source_assignment_strict_set(source=strict_problem.source, strict=False, actor=people.admin)
    assert api(people.ann_b).put(url("st_01"), {"document": doc1("st_01")}, format="json").status_code == 200
    assert api(people.ann_c).put(url("st_02"), {"document": doc1("st_02")}, format="json").status_code == 200


def test_accepting_an_llm_draft_follows_the_same_rule(people, strict_problem):
    ProblemImageFactory(parent=strict_problem, image_id="img_0", ordinal=0, data=png_bytes(300, 200))
    config = scripted("strict-script", default=json.dumps(pass1("st_01", NODE)))
    run = draft_run_create(
        pass_no=1, model_config=config, parents=[strict_problem], actor=None, dispatch=False
    )
    draft = draft_execute(draft_id=run.drafts.get().pk)
    PassDocumentFactory(parent=strict_problem, pass_no=1, document=doc1("st_01"))
    body = {"expected_version": 1}
    refused = api(people.ann_b).post(f"/api/drafts/{draft.pk}/accept/", body, format="json")
    assert refused.status_code == 403 and refused.json()["message"] == ASSIGNED
    assert PassDocument.objects.get(parent=strict_problem, pass_no=1).version == 1
    accepted = api(people.ann_a).post(f"/api/drafts/{draft.pk}/accept/", body, format="json")
    assert accepted.status_code == 200, accepted.json()
    assert PassDocument.objects.get(parent=strict_problem, pass_no=1).version == 2


def test_the_workspace_opens_read_only_with_the_reason_for_whoever_may_not_edit(
    client, people, strict_problem
):
    client.force_login(people.ann_b)
    page = client.get("/problems/st_01/passes/1/")
    assert page.status_code == 200
    assert page.context["payload"]["editable"] is False
    assert f"{ASSIGNED} It opens read-only here." in page.content.decode().replace("&#x27;", "'")
    client.force_login(people.ann_a)
    owner = client.get("/problems/st_01/passes/1/")
    assert (
        owner.context["payload"]["editable"] is True
        and 'data-testid="edit-refusal"' not in owner.content.decode()
    )
