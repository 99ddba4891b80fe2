"""What an approval is bound to (DESIGN §5, issue 25 item 2): the document's hash and the problem's content.

One rule, asked in Python (``PassDocument.approval_is_fresh``) and in SQL (``FRESH_APPROVAL``/``STALE_APPROVAL``);
the parent's content hash is kept current by every save of the parent and of its images; the migration binds the
approvals on record to today's content.
"""

from __future__ import annotations

import pytest

from annotation.binding import parent_content_sha256
from annotation.models import FRESH_APPROVAL, STALE_APPROVAL, ParentProblem, PassDocument, ProblemImage
from annotation.services import pass_document_approve, pass_document_submit, source_update
from audit.models import Event
from kit.canonical import digest
from physalign_site.errors import ApplicationError, ConflictError
from tests.factories import (
    ParentProblemFactory,
    PassDocumentFactory,
    ProblemImageFactory,
    SourceFactory,
    png_bytes,
)
from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def parent():
    parent = ParentProblemFactory(options=[{"id": "A", "text": "mg"}, {"id": "B", "text": "2mg"}])
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=png_bytes(40, 30))
    return parent


def _approved(parent, pass_no=1, reviewer=None):
    document = {"problem_id": parent.problem_id, "n": pass_no}
    return PassDocumentFactory(
        parent=parent,
        pass_no=pass_no,
        document=document,
        document_sha256=digest(document),
        status=PassDocument.Status.APPROVED,
        approved_sha256=digest(document),
        approved_by=reviewer,
    )


def _fresh_both_ways(doc: PassDocument) -> tuple[bool, bool, bool]:
    """(Python rule, SQL fresh, SQL stale) for one document, read afresh."""
    stored = PassDocument.objects.select_related("parent").get(pk=doc.pk)
    return (
        stored.approval_is_fresh,
        PassDocument.objects.filter(FRESH_APPROVAL, pk=doc.pk).exists(),
        PassDocument.objects.filter(STALE_APPROVAL, pk=doc.pk).exists(),
    )


def test_the_parent_content_hash_follows_statement_question_options_and_image_bytes(parent):
    def current() -> str:
        stored = ParentProblem.objects.get(pk=parent.pk)
        assert stored.content_sha256 == parent_content_sha256(stored)  # the stored hash is the content's
        return stored.content_sha256

    seen = {current()}
    for name, value in (
        ("stem", parent.stem + " More."),
        ("query", "What else?"),
        ("raw_question", "Other raw text."),
        ("options", [{"id": "A", "text": "mg"}]),
    ):
        setattr(parent, name, value)
        parent.save()
        seen.add(current())
    image = parent.images.get()
    image.sha256 = "0" * 64  # another file's bytes
    image.save()
    seen.add(current())
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1)
    seen.add(current())
    ProblemImage.objects.filter(parent=parent, image_id="img_1").delete()
    assert current() in seen  # back to the earlier content, back to its hash
    assert len(seen) == 7
    unchanged = current()
    parent.domain, parent.status = "optics", ParentProblem.Status.IN_ANNOTATION  # not content
    parent.save()
    assert current() == unchanged


@pytest.mark.parametrize(
    "change, reasons",
    [
        (None, []),
        (
            lambda doc, parent: PassDocument.objects.filter(pk=doc.pk).update(document_sha256="1" * 64),
            ["document"],
        ),
        (lambda doc, parent: setattr(parent, "stem", "Edited.") or parent.save(), ["problem"]),
        (lambda doc, parent: setattr(parent, "options", []) or parent.save(), ["problem"]),
        (
            lambda doc, parent: ProblemImage.objects.get(parent=parent).__class__.save(
                _with(ProblemImage.objects.get(parent=parent), sha256="2" * 64)
            ),
            ["problem"],
        ),
        (
            lambda doc, parent: PassDocument.objects.filter(pk=doc.pk).update(approved_parent_sha256=""),
            ["problem"],
        ),
    ],
    ids=["fresh", "document", "stem", "options", "image", "unbound"],
)
def test_python_and_sql_agree_on_freshness(parent, change, reasons):
    doc = _approved(parent)
    assert doc.approved_parent_sha256 == ParentProblem.objects.get(pk=parent.pk).content_sha256
    if change is not None:
        change(doc, parent)
    fresh = not reasons
    assert _fresh_both_ways(doc) == (fresh, fresh, not fresh)
    assert PassDocument.objects.select_related("parent").get(pk=doc.pk).approval_stale_reasons == reasons


def _with(obj, **values):
    for name, value in values.items():
        setattr(obj, name, value)
    return obj


def test_approving_binds_the_problem_content_and_a_stale_approval_can_be_reviewed_again(parent, role_users):
    reviewer = role_users["source_reviewer"]
    doc = PassDocumentFactory(
        parent=parent, status=PassDocument.Status.SUBMITTED, updated_by=role_users["annotator"]
    )
    seen = ParentProblem.objects.get(pk=parent.pk).content_sha256

    doc = pass_document_approve(
        doc=doc, actor=reviewer, document_sha256=doc.document_sha256, parent_content_sha256=seen
    )
    assert doc.approved_parent_sha256 == seen and doc.approval_is_fresh
    event = Event.objects.filter(verb="pass_document.approve").latest("pk")
    assert event.after["approved_parent_sha256"] == seen
    with pytest.raises(ApplicationError) as already:
        pass_document_submit(doc=doc, actor=role_users["annotator"])
    assert already.value.code == "already_approved"

    parent.stem += " Changed."  # an admin edit, e.g. on the admin site
    parent.save()
    doc.refresh_from_db()
    assert not doc.approval_is_fresh and doc.status == PassDocument.Status.APPROVED
    with pytest.raises(ConflictError) as outdated:  # what the reviewer saw is not what is there now
        pass_document_approve(
            doc=doc, actor=reviewer, document_sha256=doc.document_sha256, parent_content_sha256=seen
        )
    assert outdated.value.code == "parent_changed"

    renewed = pass_document_approve(doc=doc, actor=reviewer, document_sha256=doc.document_sha256)
    assert renewed.approval_is_fresh
    assert renewed.approved_parent_sha256 == ParentProblem.objects.get(pk=parent.pk).content_sha256 != seen


def test_an_annotator_may_resubmit_a_document_whose_approval_went_stale(parent, role_users):
    from tests.annotation.test_importers import kit_passes

    document = {**kit_passes()[1], "problem_id": parent.problem_id}
    document["visual_nodes"][0]["image_id"] = "img_0"
    doc = PassDocumentFactory(
        parent=parent,
        pass_no=1,
        document=document,
        document_sha256=digest(document),
        status=PassDocument.Status.APPROVED,
        approved_sha256=digest(document),
    )
    parent.query = "Another question?"
    parent.save()

    submitted = pass_document_submit(doc=PassDocument.objects.get(pk=doc.pk), actor=role_users["annotator"])

    assert submitted.status == PassDocument.Status.SUBMITTED
    assert submitted.approved_sha256 == doc.approved_sha256  # the old approval stays on record


def test_source_fields_change_only_by_an_admin_and_every_change_is_audited(role_users):
    source = SourceFactory(name="Src", license="CC BY 4.0")
    with pytest.raises(ApplicationError) as refused:
        source_update(source=source, actor=role_users["annotator"], changes={"license": "MINE"})
    assert refused.value.status_code == 403
    source.refresh_from_db()
    assert source.license == "CC BY 4.0" and not Event.objects.filter(verb="source.update").exists()

    source_update(
        source=source, actor=role_users["admin"], changes={"license": "CC0", "url": "https://x.org"}
    )

    source.refresh_from_db()
    assert (source.license, source.url) == ("CC0", "https://x.org")
    event = Event.objects.get(verb="source.update")
    assert event.before == {"license": "CC BY 4.0", "url": ""}
    assert event.after == {"license": "CC0", "url": "https://x.org"}


def test_a_source_changed_on_the_admin_site_is_in_the_audit_log(client, django_user_model):
    source = SourceFactory(name="Src", license="CC BY 4.0")
    staff = django_user_model.objects.create_superuser(username="root", password="pw-root")
    client.force_login(staff)

    response = client.post(
        f"/admin/annotation/source/{source.pk}/change/",
        {"name": "Src", "license": "CC BY-NC 4.0", "url": ""},
    )

    assert response.status_code == 302, response.content[:500]
    event = Event.objects.get(verb="source.update")
    assert (event.actor, event.before, event.after) == (
        staff,
        {"license": "CC BY 4.0"},
        {"license": "CC BY-NC 4.0"},
    )


BEFORE = ("annotation", "0008_draft_claims")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_the_migration_binds_existing_approvals_to_todays_content_so_they_stay_fresh():
    old = apps_at(migrate_to([BEFORE]), [BEFORE])
    source = old.get_model("annotation", "Source").objects.create(name="Old")
    parent = old.get_model("annotation", "ParentProblem").objects.create(
        problem_id="old_1",
        source=source,
        source_split="s",
        source_sample_id="1",
        language="en",
        stem="A ball falls.",
        query="How long?",
        raw_question="A ball falls. How long?",
        options=[{"id": "A", "text": "1 s"}],
        answer_type="choice",
    )
    old.get_model("annotation", "ProblemImage").objects.create(
        parent=parent,
        image_id="img_0",
        ordinal=0,
        file="problems/aa/a.png",
        media_type="image/png",
        width=2,
        height=2,
        byte_size=10,
        sha256="a" * 64,
        pixels_sha256="b" * 64,
    )
    documents = old.get_model("annotation", "PassDocument")
    document = {"problem_id": "old_1"}
    approved = documents.objects.create(
        parent=parent,
        pass_no=1,
        document=document,
        document_sha256=digest(document),
        status="approved",
        approved_sha256=digest(document),
    )
    draft = documents.objects.create(
        parent=parent, pass_no=2, document=document, document_sha256=digest(document)
    )

    migrate_to_latest()

    stored = ParentProblem.objects.get(pk=parent.pk)
    assert stored.content_sha256 == parent_content_sha256(stored)
    fresh = PassDocument.objects.select_related("parent").get(pk=approved.pk)
    assert fresh.approved_parent_sha256 == stored.content_sha256 and fresh.approval_is_fresh
    assert PassDocument.objects.get(pk=draft.pk).approved_parent_sha256 == ""
    stored.stem = "A ball falls twice as far."  # and from now on, a change makes it stale
    stored.save()
    assert not PassDocument.objects.select_related("parent").get(pk=approved.pk).approval_is_fresh


def test_a_reviewer_renews_a_stale_approval_from_the_review_page(client, parent, role_users):
    """The page says why the approval is stale and offers the decision again, bound to what the page showed."""
    doc = _approved(parent, reviewer=role_users["source_reviewer"])
    parent.stem += " Changed on the admin site."
    parent.save()
    client.force_login(role_users["source_reviewer"])
    url = f"/problems/{parent.problem_id}/passes/1/review/"
    page = client.get(url).content.decode()
    assert "the problem's statement, question, options or images changed" in page
    assert 'name="parent_content_sha256"' in page
    shown = ParentProblem.objects.get(pk=parent.pk).content_sha256
    parent.query += " (edited again)"  # changed after the page was loaded: the approval is refused
    parent.save()
    refused = client.post(
        url, {"decision": "approve", "document_sha256": doc.document_sha256, "parent_content_sha256": shown}
    )
    assert refused.status_code in (400, 409)
    doc.refresh_from_db()
    assert not doc.approval_is_fresh
    current = ParentProblem.objects.get(pk=parent.pk).content_sha256
    renewed = client.post(
        url, {"decision": "approve", "document_sha256": doc.document_sha256, "parent_content_sha256": current}
    )
    assert renewed.status_code == 302
    doc.refresh_from_db()
    assert doc.approval_is_fresh and doc.approved_parent_sha256 == current
