"""A source reviewer's comments on single records and the changes since the last review (issue 28 item 7):
the pure naming and diff, the services, the review page, the workspace and the pass API, each as its user
calls it."""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from annotation.models import PassDocument, RecordComment, SourceReview
from annotation.record_comments import changes_since, document_records, parse_record_key
from annotation.services import pass_document_reject, pass_document_save
from annotation.source_reviews import RecordCommentIn, since_last_review
from physalign_site.errors import ApplicationError
from tests.probes import kit_demo
from tests.probes.conftest import make_demo_parent

PID = "SYNTHETIC_TEST_ONLY"


def test_records_are_named_by_collection_and_id_with_a_label():
    refs = document_records(kit_demo.pass4())
    keys = [r.key for r in refs]
    assert keys[:2] == ["bindings:b001", "bindings:b002"]  # the document's key order, then record order
    assert "visual_nodes:v001" in keys and "quantities:q001" in keys and "physical_nodes:p001" in keys
    entity = parse_record_key("physical_nodes:p001", kit_demo.pass4())
    assert entity is not None and entity.noun == "entity" and entity.label == "Block 1"
    assert parse_record_key("visual_nodes:v999", kit_demo.pass4()) is None
    assert parse_record_key("query_target:x", kit_demo.pass4()) is None


def test_changes_since_say_regions_added_moved_removed_and_records_changed():
    before = kit_demo.pass4()
    after = copy.deepcopy(before)
    after["visual_nodes"][0]["bbox_1000"] = [70, 400, 295, 705]  # geometry only: moved
    after["visual_nodes"][1]["text"] = "B"  # a field that is not geometry: changed
    removed = after["visual_nodes"].pop()
    after["visual_nodes"].append({**removed, "id": "v099"})
    after["quantities"][0]["value_latex"] = "2"
    changes = changes_since(before, after)
    assert [(line.noun, line.record_id, line.what) for line in changes.lines] == [
        ("quantity", "q001", "changed"),
        ("region", "v001", "moved"),
        ("region", "v002", "changed"),
        ("region", removed["id"], "removed"),
        ("region", "v099", "added"),
    ]
    assert (
        changes.summary
        == "1 quantity changed, 1 region moved, 1 region changed, 1 region removed, 1 region added"
    )
    assert changes_since(before, before).summary == "no change"


@pytest.fixture
def submitted_pass4(db, django_user_model, role_users):
    make_demo_parent(django_user_model)
    doc = PassDocument.objects.get(parent__problem_id=PID, pass_no=4)
    PassDocument.objects.filter(pk=doc.pk).update(
        status=PassDocument.Status.SUBMITTED, updated_by=role_users["annotator"]
    )
    doc.refresh_from_db()
    return doc


def _resubmitted(doc, annotator, change):
    document = copy.deepcopy(doc.document)
    change(document)
    saved = pass_document_save(
        parent=doc.parent, pass_no=4, document=document, actor=annotator, expected_version=doc.version
    )
    PassDocument.objects.filter(pk=saved.pk).update(status=PassDocument.Status.SUBMITTED)
    saved.refresh_from_db()
    return saved


@pytest.mark.django_db
def test_a_rejection_keeps_the_document_and_its_comments_and_the_next_review_sees_what_changed(
    submitted_pass4, role_users
):
    reviewer, annotator = role_users["source_reviewer"], role_users["annotator"]
    doc = pass_document_reject(
        doc=submitted_pass4,
        actor=reviewer,
        document_sha256=submitted_pass4.document_sha256,
        note="Block 1 is drawn too wide.",
        comments=[RecordCommentIn("visual_nodes:v001", "The box takes in the floor line.")],
    )
    review = SourceReview.objects.get()
    assert (review.decision, review.note, review.version) == (
        "rejected",
        "Block 1 is drawn too wide.",
        doc.version,
    )
    assert review.document_sha256 == submitted_pass4.document_sha256 and review.reviewer == reviewer
    assert [(c.collection, c.record_id, c.text) for c in RecordComment.objects.all()] == [
        ("visual_nodes", "v001", "The box takes in the floor line.")
    ]
    assert since_last_review(doc).changes.summary == "no change"

    def move(document):
        document["visual_nodes"][0]["bbox_1000"] = [80, 400, 285, 705]

    again = _resubmitted(doc, annotator, move)
    since = since_last_review(again)
    assert since is not None and since.review.pk == review.pk
    assert since.changes.summary == "1 region moved"


@pytest.mark.django_db
def test_a_comment_on_a_record_the_document_lacks_is_refused_and_nothing_changes(submitted_pass4, role_users):
    with pytest.raises(ApplicationError) as error:
        pass_document_reject(
            doc=submitted_pass4,
            actor=role_users["source_reviewer"],
            document_sha256=submitted_pass4.document_sha256,
            note="See the comments.",
            comments=[RecordCommentIn("visual_nodes:v404", "No such region.")],
        )
    assert error.value.code == "unknown_record"
    submitted_pass4.refresh_from_db()
    assert submitted_pass4.status == "submitted" and not SourceReview.objects.exists()


def _review_url(doc):
    return f"/problems/{PID}/passes/{doc.pass_no}/review/"


@pytest.mark.django_db
def test_the_review_page_takes_comments_and_the_annotator_sees_each_on_its_record(
    client, submitted_pass4, role_users
):
    reviewer, annotator = role_users["source_reviewer"], role_users["annotator"]
    client.force_login(reviewer)
    page = client.get(_review_url(submitted_pass4)).content.decode()
    assert '<option value="visual_nodes:v001">Region v001 · object_shape</option>' in page
    assert '<option value="physical_nodes:p001">Entity p001 · Block 1</option>' in page
    answer = client.post(
        _review_url(submitted_pass4),
        {
            "decision": "reject",
            "document_sha256": submitted_pass4.document_sha256,
            "note": "Two records need work.",
            "comment_record": ["visual_nodes:v001", "quantities:q001", ""],
            "comment_text": ["The box takes in the floor line.", "The mass has no value here.", ""],
        },
    )
    assert answer.status_code == 302
    assert sorted(RecordComment.objects.values_list("record_id", flat=True)) == ["q001", "v001"]

    # a refused comment keeps what the reviewer typed and stores nothing
    again = PassDocument.objects.get(pk=submitted_pass4.pk)
    PassDocument.objects.filter(pk=again.pk).update(status=PassDocument.Status.SUBMITTED)
    refused = client.post(
        _review_url(again),
        {
            "decision": "reject",
            "document_sha256": again.document_sha256,
            "note": "x",
            "comment_record": [""],
            "comment_text": ["A comment without its record."],
        },
    )
    assert refused.status_code == 400 and "has no record" in refused.content.decode()
    assert "A comment without its record." in refused.content.decode()
    assert SourceReview.objects.count() == 1
    PassDocument.objects.filter(pk=again.pk).update(status=PassDocument.Status.REJECTED)

    client.force_login(annotator)
    workspace = client.get(f"/problems/{PID}/passes/4/")
    assert workspace.status_code == 200
    listed = workspace.context["record_comments"]
    assert [(c["record_id"], c["noun"], c["text"], c["by"]) for c in listed] == [
        ("v001", "region", "The box takes in the floor line.", "user_source_reviewer"),
        ("q001", "quantity", "The mass has no value here.", "user_source_reviewer"),
    ]  # in the order the reviewer wrote them
    html = workspace.content.decode()
    assert 'data-rec-target="visual_nodes:v001"' in html and 'data-testid="record-comments"' in html
    assert (
        workspace.context["payload"]["record_comments"]["v001"][0]["text"]
        == "The box takes in the floor line."
    )


@pytest.mark.django_db
def test_the_pass_api_takes_and_returns_comments_for_each_role_that_may(submitted_pass4, role_users):
    url = f"/api/parents/{PID}/passes/4/"
    body = {
        "document_sha256": submitted_pass4.document_sha256,
        "note": "See the comment.",
        "comments": [{"record": "visual_nodes:v002", "text": "Block 2 is cut off on the right."}],
    }
    annotator = APIClient()
    annotator.force_authenticate(role_users["annotator"])
    assert annotator.post(url + "reject/", body, format="json").status_code == 403  # not a source reviewer
    reviewer = APIClient()
    reviewer.force_authenticate(role_users["source_reviewer"])
    bad = reviewer.post(
        url + "reject/", {**body, "comments": [{"record": "visual_nodes:v404", "text": "x"}]}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["code"] == "unknown_record"
    ok = reviewer.post(url + "reject/", body, format="json")
    assert ok.status_code == 200, ok.content
    expected = [
        {
            "record": "visual_nodes:v002",
            "text": "Block 2 is cut off on the right.",
            "by": "user_source_reviewer",
            "decision": "rejected",
        }
    ]
    assert ok.json()["record_comments"] == expected
    state = annotator.get(url)
    assert state.status_code == 200 and state.json()["record_comments"] == expected


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["source_reviewer", "admin"])
def test_an_approval_through_the_api_carries_comments_for_each_role_that_may_approve(
    submitted_pass4, role_users, role
):
    client = APIClient()
    client.force_authenticate(role_users[role])
    answer = client.post(
        f"/api/parents/{PID}/passes/4/approve/",
        {
            "document_sha256": submitted_pass4.document_sha256,
            "note": "Fine; one remark.",
            "comments": [{"record": "physical_nodes:p001", "text": "Block 1 could be named Block A."}],
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "approved"
    assert answer.json()["record_comments"] == [
        {
            "record": "physical_nodes:p001",
            "text": "Block 1 could be named Block A.",
            "by": f"user_{role}",
            "decision": "approved",
        }
    ]
    review = SourceReview.objects.get()
    assert (review.decision, review.reviewer, review.document_sha256) == (
        "approved",
        role_users[role],
        submitted_pass4.document_sha256,
    )
