"""The workspace page in an annotator's journey (issue 15 items 4, 5 and 10): opening never writes, the
rejection note is shown where the annotator edits, the page says what happens after submitting, the domain
starts from the problem's own, and submitting refuses what the workspace's checks report."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ParentProblem, PassDocument
from annotation.services import (
    pass_document_approve,
    pass_document_reject,
    pass_document_save,
    pass_document_submit,
)
from annotation.workspace import kit_domain_for
from audit.models import Event
from kit.canonical import digest
from kit.passes.validator import TEXT_GLYPH_TEXT_EMPTY
from physalign_site.errors import ApplicationError
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _glyph(text: str) -> dict[str, Any]:
    return {
        "id": "v001",
        "type": "text_glyph",
        "subtype": "",
        "text": text,
        "image_id": "img_0",
        "bbox_1000": [100, 100, 200, 200],
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }


def _pass1(parent: ParentProblem, text: str = "F") -> dict[str, Any]:
    return {"problem_id": parent.problem_id, "visual_nodes": [_glyph(text)], "ambiguities": []}


@pytest.fixture
def parent():
    parent = ParentProblemFactory(problem_id="ws_open", domain="optics", stem="A lens.", query="")
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0)
    return parent


def _state(parent: ParentProblem) -> tuple[list[tuple[int, int]], str, int]:
    parent.refresh_from_db()
    docs = list(PassDocument.objects.filter(parent=parent).values_list("pass_no", "version"))
    return sorted(docs), parent.status, Event.objects.count()


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4, 5])
def test_opening_a_pass_with_no_document_writes_nothing(annotator, parent, pass_no):
    before = _state(parent)
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, pass_no]))
    assert response.status_code == (409 if pass_no == 5 else 200)  # Pass 5: locked until 1–4 are approved
    assert _state(parent) == before == ([], ParentProblem.Status.NEW, 0)


def test_opening_every_pass_when_pass5_is_unlocked_writes_nothing(annotator, source_reviewer, parent):
    for pass_no in (1, 2, 3, 4):
        document = {"problem_id": parent.problem_id}
        PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            status=PassDocument.Status.APPROVED,
            approved_sha256=digest(document),
            approved_by=source_reviewer,
            updated_by=annotator,
        )
    before = _state(parent)
    client = _client(annotator)
    for pass_no in (1, 2, 3, 4, 5):
        url = reverse("annotation:pass_workspace", args=[parent.problem_id, pass_no])
        assert client.get(url).status_code == 200, pass_no
    assert _state(parent) == before
    assert not PassDocument.objects.filter(parent=parent, pass_no=5).exists()


def _rejected(parent, annotator, source_reviewer, note="Region v001 reads “F”, the diagram says “F₁”."):
    doc = pass_document_save(
        parent=parent, pass_no=1, document=_pass1(parent), actor=annotator, expected_version=None
    )
    doc = pass_document_submit(doc=doc, actor=annotator)
    return pass_document_reject(
        doc=doc, actor=source_reviewer, document_sha256=doc.document_sha256, note=note
    )


def test_the_editable_workspace_shows_the_rejection_note_with_who_and_when(
    annotator, source_reviewer, parent
):
    doc = _rejected(parent, annotator, source_reviewer)
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 1]))
    body = response.content.decode()
    assert response.context["payload"]["editable"] is True
    rejection = response.context["rejection"]
    assert (rejection["note"], rejection["by"], rejection["edited_since"]) == (
        doc.review_note,
        source_reviewer.username,
        False,
    )
    assert 'data-testid="review-note"' in body
    assert f"Rejected by {source_reviewer.username} on <time" in body
    assert "Region v001 reads “F”, the diagram says “F₁”." in body
    # the note sits above the grid, before the records and the canvas
    assert body.index('data-testid="review-note"') < body.index('class="ws-grid"')


def test_the_note_stays_after_the_first_edit_and_goes_with_the_next_approval(
    annotator, source_reviewer, parent, role_users
):
    doc = _rejected(parent, annotator, source_reviewer)
    doc = pass_document_save(
        parent=parent,
        pass_no=1,
        document=_pass1(parent, "F_1"),
        actor=annotator,
        expected_version=doc.version,
    )
    assert doc.status == PassDocument.Status.DRAFT
    url = reverse("annotation:pass_workspace", args=[parent.problem_id, 1])
    response = _client(annotator).get(url)
    assert response.context["rejection"]["edited_since"] is True
    assert "You have edited this pass since the rejection" in response.content.decode()
    doc = pass_document_submit(doc=doc, actor=annotator)
    pass_document_approve(
        doc=doc, actor=role_users["admin"], document_sha256=doc.document_sha256, note="Good now."
    )
    response = _client(annotator).get(url)
    assert response.context["rejection"] is None
    assert 'data-testid="review-note"' not in response.content.decode()
    assert "Approved by user_admin" in response.content.decode()


def test_an_imported_rejection_shows_its_note_without_an_account(annotator, parent):
    PassDocumentFactory(
        parent=parent,
        pass_no=1,
        document=_pass1(parent),
        status=PassDocument.Status.REJECTED,
        review_note="Re-draw the lens.",
        updated_by=annotator,
    )
    body = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 1])).content
    assert "Rejected by a source reviewer (recorded in an imported review file)" in body.decode()
    assert "Re-draw the lens." in body.decode()


def test_a_submitted_pass_says_what_happens_next(annotator, parent):
    doc = pass_document_save(
        parent=parent, pass_no=1, document=_pass1(parent), actor=annotator, expected_version=None
    )
    url = reverse("annotation:pass_workspace", args=[parent.problem_id, 1])
    draft_body = _client(annotator).get(url).content.decode()
    assert 'id="ws-next-submitted" data-testid="next-steps" hidden' in draft_body  # there for the banner only
    pass_document_submit(doc=doc, actor=annotator)
    response = _client(annotator).get(url)
    body = response.content.decode()
    assert 'id="ws-next-submitted" data-testid="next-steps">' in body
    assert "Until they decide, it is read-only here." in body
    assert "A rejection reopens it for editing" in body
    assert "You can go on with Pass 2 meanwhile" in body
    assert "Pass 5 opens once Passes 1–4 are all approved." in body
    assert response.context["payload"]["state"]["status"] == "submitted"


@pytest.mark.parametrize(
    ("domain", "kit"),
    [
        ("mechanics", "mechanics"),
        ("optics", "electromagnetism"),
        ("waves_acoustics", "mechanics"),
        ("Electricity", "electromagnetism"),
        ("thermodynamics", ""),
        ("", ""),
    ],
)
def test_pass4_starts_at_the_kit_domain_of_the_problems_own_domain(annotator, domain, kit):
    assert kit_domain_for(domain) == kit
    parent = ParentProblemFactory(domain=domain)
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 4]))
    payload = json.loads(json.dumps(response.context["payload"]))
    assert payload["consolidated"]["domain"] == kit  # never a silent "mechanics"
    assert payload["document"]["domain"] == kit
    assert (payload["problem"]["domain"], payload["problem"]["kit_domain"]) == (domain, kit)
    domain_issues = [i for i in payload["issues"] if i["path"] == "domain"]
    assert [i["code"] for i in domain_issues] == ([] if kit else ["ENUM_INVALID"])


def test_submitting_is_refused_while_a_workspace_check_reports_an_issue(annotator, parent):
    doc = pass_document_save(
        parent=parent, pass_no=1, document=_pass1(parent, " "), actor=annotator, expected_version=None
    )
    with pytest.raises(ApplicationError) as refused:
        pass_document_submit(doc=doc, actor=annotator)
    assert refused.value.code == "document_has_issues"
    assert [(i["code"], i["path"]) for i in refused.value.extra["errors"]] == [
        (TEXT_GLYPH_TEXT_EMPTY, "visual_nodes[0].text")
    ]
    doc.refresh_from_db()
    assert doc.status == PassDocument.Status.DRAFT
    page = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 1]))
    assert [i["code"] for i in page.context["payload"]["issues"]] == [TEXT_GLYPH_TEXT_EMPTY]
