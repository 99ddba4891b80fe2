"""A pass approval is bound to the passes it builds on (Pass 2 on 1, Pass 3 on 1–2, Pass 4 on 1–3): a change
upstream makes every downstream approval stale, in Python and in SQL, on the pages that show freshness and to
the compiler, until a source reviewer approves again."""

from __future__ import annotations

import pytest

from annotation.binding import APPROVAL_UNBOUND_UPSTREAM, upstream_digest
from annotation.models import FRESH_APPROVAL, STALE_APPROVAL, ParentProblem, PassDocument
from annotation.selectors import parent_passes_approved, stale_approvals
from annotation.services import pass_document_approve, pass_document_save
from kit.canonical import digest
from probes.compiler.errors import CompileError
from probes.selectors import parent_source_for
from tests.factories import ParentProblemFactory, PassDocumentFactory
from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def _document(parent, pass_no, revision=0):
    return {"problem_id": parent.problem_id, "pass": pass_no, "revision": revision}


@pytest.fixture
def approved(role_users):
    """A parent with Passes 1–4 approved by the source reviewer on the review path."""
    parent = ParentProblemFactory(problem_id="up_1")
    for pass_no in (1, 2, 3, 4):
        document = _document(parent, pass_no)
        doc = PassDocumentFactory(
            parent=parent,
            pass_no=pass_no,
            document=document,
            document_sha256=digest(document),
            status=PassDocument.Status.SUBMITTED,
        )
        pass_document_approve(
            doc=doc, actor=role_users["source_reviewer"], document_sha256=doc.document_sha256
        )
    return parent


def _state(parent):
    """pass → (Python fresh, SQL fresh, SQL stale, reasons, upstream passes named), read afresh."""
    docs = PassDocument.objects.select_related("parent").filter(parent=parent).order_by("pass_no")
    return {
        doc.pass_no: (
            doc.approval_is_fresh,
            PassDocument.objects.filter(FRESH_APPROVAL, pk=doc.pk).exists(),
            PassDocument.objects.filter(STALE_APPROVAL, pk=doc.pk).exists(),
            doc.approval_stale_reasons,
            doc.approval_upstream_changed,
        )
        for doc in docs
    }


FRESH = (True, True, False, [], [])


def test_approvals_on_record_are_bound_to_what_they_build_on(approved):
    assert _state(approved) == {n: FRESH for n in (1, 2, 3, 4)}
    hashes = dict(PassDocument.objects.filter(parent=approved).values_list("pass_no", "document_sha256"))
    for doc in PassDocument.objects.filter(parent=approved):
        assert doc.upstream_sha256 == doc.approved_upstream_sha256 == upstream_digest(doc.pass_no, hashes)
    assert parent_passes_approved(parent=approved)


def test_a_change_to_pass_1_makes_passes_2_to_4_stale_and_compile_refuses(approved, role_users):
    pass_document_save(
        parent=approved,
        pass_no=1,
        document=_document(approved, 1, revision=1),
        actor=role_users["annotator"],
        expected_version=PassDocument.objects.get(parent=approved, pass_no=1).version,
    )
    state = _state(approved)
    stale_upstream = (False, False, True, ["upstream"], [1])
    assert state[2] == state[3] == state[4] == stale_upstream
    assert {d.pass_no for d in stale_approvals().filter(parent=approved)} == {2, 3, 4}
    assert not parent_passes_approved(parent=approved)
    with pytest.raises(CompileError) as refused:
        parent_source_for(ParentProblem.objects.prefetch_related("passes", "images").get(pk=approved.pk))
    assert refused.value.code in ("SOURCE_REVIEW_NOT_APPROVED", "SOURCE_REVIEW_HASH_STALE")

    # Pass 1 reviewed again, then Pass 2: Pass 2 is fresh; Pass 3 still builds on the Pass 1 it was not approved on
    reviewer = role_users["source_reviewer"]
    # the annotator submits the new Pass 1 (its document is no Kit document: submit's own checks are not the point)
    PassDocument.objects.filter(parent=approved, pass_no=1).update(status=PassDocument.Status.SUBMITTED)
    for pass_no in (1, 2):
        doc = PassDocument.objects.get(parent=approved, pass_no=pass_no)
        pass_document_approve(doc=doc, actor=reviewer, document_sha256=doc.document_sha256)
    state = _state(approved)
    assert state[1] == state[2] == FRESH
    assert state[3][:4] == state[4][:4] == (False, False, True, ["upstream"])
    for pass_no in (3, 4):
        doc = PassDocument.objects.get(parent=approved, pass_no=pass_no)
        pass_document_approve(doc=doc, actor=reviewer, document_sha256=doc.document_sha256)
    assert _state(approved) == {n: FRESH for n in (1, 2, 3, 4)}
    assert parent_passes_approved(parent=approved)


def test_a_change_to_pass_3_leaves_passes_1_and_2_fresh(approved, role_users):
    pass_document_save(
        parent=approved,
        pass_no=3,
        document=_document(approved, 3, revision=1),
        actor=role_users["annotator"],
        expected_version=PassDocument.objects.get(parent=approved, pass_no=3).version,
    )
    state = _state(approved)
    assert state[1] == state[2] == FRESH
    assert state[4] == (False, False, True, ["upstream"], [3])


def test_the_pages_say_which_pass_changed(client, approved, role_users):
    pass_document_save(
        parent=approved,
        pass_no=1,
        document=_document(approved, 1, revision=1),
        actor=role_users["annotator"],
        expected_version=PassDocument.objects.get(parent=approved, pass_no=1).version,
    )
    client.force_login(role_users["source_reviewer"])
    review = client.get(f"/problems/{approved.problem_id}/passes/2/review/").content.decode()
    assert "Approval is stale: Pass 1, which it builds on, changed after it was approved." in review
    queue = client.get("/source-review/").content.decode()
    for pass_no in (2, 3, 4):
        assert f'href="/problems/{approved.problem_id}/passes/{pass_no}/review/"' in queue
    detail = client.get(f"/problems/{approved.problem_id}/").content.decode()
    assert "Stale: Pass 1, which it builds on, changed after it was approved" in detail
    client.force_login(role_users["admin"])
    board = client.get("/").content.decode()
    assert '<a href="/source-review/#stale-heading">1 with a stale approval</a>' in board
    api = client.get(f"/api/parents/{approved.problem_id}/passes/4/").json()
    assert api["approval_is_fresh"] is False
    assert api["approval_stale_reasons"] == ["upstream"] and api["approval_upstream_changed"] == [1]


BEFORE = ("annotation", "0009_approval_bound_to_parent_content")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_the_migration_keeps_consistent_approvals_fresh_and_marks_those_approved_before_an_upstream_change():
    from datetime import timedelta

    from django.utils import timezone

    old = apps_at(migrate_to([BEFORE]), [BEFORE])
    source = old.get_model("annotation", "Source").objects.create(name="Old")
    parents = old.get_model("annotation", "ParentProblem")
    documents = old.get_model("annotation", "PassDocument")
    versions = old.get_model("annotation", "PassDocumentVersion")
    now = timezone.now()
    made = {}
    for name, pass1_saved in (("consistent", now - timedelta(days=2)), ("changed", now)):
        parent = parents.objects.create(
            problem_id=f"mig_{name}",
            source=source,
            source_split="s",
            source_sample_id=name,
            language="en",
            answer_type="choice",
        )
        for pass_no in (1, 2):
            document = {"problem_id": parent.problem_id, "pass": pass_no}
            doc = documents.objects.create(
                parent=parent,
                pass_no=pass_no,
                document=document,
                document_sha256=digest(document),
                status="approved",
                approved_sha256=digest(document),
                approved_parent_sha256="c" * 64,
                approved_at=now - timedelta(days=1),
            )
            version = versions.objects.create(
                pass_document=doc, version=1, document=document, document_sha256=digest(document)
            )
            saved = pass1_saved if pass_no == 1 else now - timedelta(days=3)
            versions.objects.filter(pk=version.pk).update(saved_at=saved)
            made[(name, pass_no)] = doc.pk

    migrate_to_latest()

    def stored(name, pass_no):
        return PassDocument.objects.get(pk=made[(name, pass_no)])

    assert stored("consistent", 2).approved_upstream_sha256 == stored("consistent", 2).upstream_sha256 != ""
    assert stored("changed", 2).approved_upstream_sha256 == APPROVAL_UNBOUND_UPSTREAM
    assert (
        stored("changed", 1).approved_upstream_sha256 == stored("changed", 1).upstream_sha256
    )  # builds on none
