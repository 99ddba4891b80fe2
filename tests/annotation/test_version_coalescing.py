"""Autosaves coalesce into the author's working version (issue 28 item 5); the If-Match save counter does not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db.models import F
from rest_framework.test import APIClient

from annotation.coalescing import IncomingSave, WorkingVersion, joins_working_version
from annotation.history import pass_version_record
from annotation.models import ParentProblem, PassDocument, PassDocumentVersion
from annotation.services import (
    pass_document_approve,
    pass_document_reject,
    pass_document_revert,
    pass_document_save,
    pass_document_submit,
)
from audit.models import Event
from physalign_site.errors import ConflictError
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory
from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def _doc(parent: ParentProblem, n: int) -> dict[str, Any]:
    """A Pass 1 document that differs per edit ``n`` (0: the empty one, which passes the validator)."""
    ambiguities = [
        {
            "id": "u001",
            "scope": "owner",
            "description": f"edit {n}",
            "candidate_ids": [],
            "evidence_visual_ids": [],
            "evidence_mention_ids": [],
        }
    ]
    return {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": ambiguities if n else []}


def _save(parent: ParentProblem, n: int, actor: Any) -> PassDocument:
    current = PassDocument.objects.filter(parent=parent, pass_no=1).first()
    return pass_document_save(
        parent=parent,
        pass_no=1,
        document=_doc(parent, n),
        actor=actor,
        expected_version=current.version if current else None,
    )


def _history(parent: ParentProblem) -> list[tuple[int, str | None, int, int]]:
    """(version, author, save_count, document_version), oldest first."""
    return [
        (v.version, v.saved_by.username if v.saved_by else None, v.save_count, v.document_version)
        for v in PassDocumentVersion.objects.filter(pass_document__parent=parent).order_by("version")
    ]


def _age(parent: ParentProblem, minutes: float) -> None:
    """Move the newest version's saves ``minutes`` into the past."""
    newest = PassDocumentVersion.objects.filter(pass_document__parent=parent).order_by("-version")[:1]
    gap = timedelta(minutes=minutes)
    PassDocumentVersion.objects.filter(pk__in=list(newest.values_list("pk", flat=True))).update(
        saved_at=F("saved_at") - gap, last_saved_at=F("last_saved_at") - gap
    )


@pytest.fixture
def parent() -> ParentProblem:
    return ParentProblemFactory()


@pytest.fixture
def imported(parent, role_users) -> PassDocument:
    """Pass 1 as an admin's import left it: version 1, save counter 1."""
    doc = PassDocumentFactory(parent=parent, pass_no=1, document=_doc(parent, 0), version=1)
    pass_version_record(doc=doc, actor=role_users["admin"])
    return doc


def test_ten_saves_by_one_user_within_the_window_make_one_version_holding_the_last_document(
    parent, imported, annotator
):
    for n in range(1, 11):
        saved = _save(parent, n, annotator)
    assert _history(parent) == [(1, "user_admin", 1, 1), (2, "user_annotator", 10, 11)]
    working = PassDocumentVersion.objects.get(pass_document=imported, version=2)
    assert working.document == _doc(parent, 10) == saved.document
    assert working.document_sha256 == saved.document_sha256
    assert working.last_saved_at > working.saved_at
    assert (saved.version, saved.history_version) == (11, 2)  # the save counter moved on every save
    assert PassDocument.objects.get(pk=imported.pk).history_version == 2
    # the audit log still has every save, each naming the version it went into
    saves = Event.objects.filter(verb="pass_document.save", object_id=str(imported.pk)).order_by("pk")
    assert [(e.after["version"], e.after["history_version"], e.after["coalesced"]) for e in saves] == [
        (2, 2, False),
        *[(n, 2, True) for n in range(3, 12)],
    ]


def test_the_first_save_of_a_new_pass_is_its_working_version(parent, annotator):
    for n in range(0, 3):
        _save(parent, n, annotator)
    assert _history(parent) == [(1, "user_annotator", 3, 3)]


def test_a_save_by_another_user_starts_a_new_version_and_history_names_each_author(
    parent, imported, annotator, django_user_model
):
    other = make_user(django_user_model, "ann2", "annotator")
    _save(parent, 1, annotator)
    _save(parent, 2, annotator)
    _save(parent, 3, other)
    _save(parent, 4, annotator)
    assert _history(parent) == [
        (1, "user_admin", 1, 1),
        (2, "user_annotator", 2, 3),
        (3, "ann2", 1, 4),
        (4, "user_annotator", 1, 5),
    ]
    assert PassDocumentVersion.objects.get(pass_document=imported, version=2).document == _doc(parent, 2)


def test_a_submit_starts_a_new_version(parent, annotator):
    _save(parent, 0, annotator)
    pass_document_submit(doc=PassDocument.objects.get(parent=parent), actor=annotator)
    _save(parent, 1, annotator)  # un-submits it (the API still lets a save through)
    _save(parent, 2, annotator)
    assert _history(parent) == [(1, "user_annotator", 1, 1), (2, "user_annotator", 2, 3)]


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_review_decision_starts_a_new_version(parent, annotator, source_reviewer, decision):
    _save(parent, 0, annotator)
    doc = pass_document_submit(doc=PassDocument.objects.get(parent=parent), actor=annotator)
    if decision == "approve":
        pass_document_approve(doc=doc, actor=source_reviewer, document_sha256=doc.document_sha256)
    else:
        pass_document_reject(doc=doc, actor=source_reviewer, document_sha256=doc.document_sha256, note="fix")
    _save(parent, 1, annotator)
    _save(parent, 2, annotator)
    assert _history(parent) == [(1, "user_annotator", 1, 1), (2, "user_annotator", 2, 3)]
    assert PassDocumentVersion.objects.get(pass_document=doc, version=1).document == _doc(parent, 0)


def test_a_revert_starts_a_new_version_that_later_saves_do_not_join(parent, imported, annotator):
    _save(parent, 1, annotator)
    _save(parent, 2, annotator)
    doc = PassDocument.objects.get(pk=imported.pk)
    reverted = pass_document_revert(doc=doc, version=1, actor=annotator, expected_version=doc.version)
    assert reverted.document == _doc(parent, 0)
    _save(parent, 3, annotator)
    _save(parent, 4, annotator)
    assert _history(parent) == [
        (1, "user_admin", 1, 1),
        (2, "user_annotator", 2, 3),
        (3, "user_annotator", 1, 4),
        (4, "user_annotator", 2, 6),
    ]
    notes = dict(PassDocumentVersion.objects.filter(pass_document=doc).values_list("version", "note"))
    assert notes == {1: "", 2: "", 3: "reverted to v1", 4: ""}
    assert PassDocumentVersion.objects.get(pass_document=doc, version=3).document == _doc(parent, 0)


def test_saves_beyond_the_window_start_a_new_version_and_the_window_is_a_setting(
    parent, imported, annotator, settings
):
    assert settings.PHYSALIGN_VERSION_COALESCE_MINUTES == 5  # the default
    _save(parent, 1, annotator)
    _age(parent, 4)  # within five minutes of the last save: joins
    _save(parent, 2, annotator)
    _age(parent, 6)  # beyond: a new version
    _save(parent, 3, annotator)
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = 10
    _age(parent, 6)  # within ten
    _save(parent, 4, annotator)
    settings.PHYSALIGN_VERSION_COALESCE_MINUTES = 0  # off: one version per save
    _save(parent, 5, annotator)
    assert _history(parent) == [
        (1, "user_admin", 1, 1),
        (2, "user_annotator", 2, 3),
        (3, "user_annotator", 2, 5),
        (4, "user_annotator", 1, 6),
    ]


def test_an_accepted_draft_and_an_import_are_versions_of_their_own(parent, annotator):
    _save(parent, 1, annotator)
    doc = PassDocument.objects.get(parent=parent)
    doc.document, doc.version = _doc(parent, 2), doc.version + 1
    doc.save()
    pass_version_record(doc=doc, actor=annotator)  # as an import by the same user records it
    _save(parent, 3, annotator)
    assert _history(parent) == [
        (1, "user_annotator", 1, 1),
        (2, "user_annotator", 1, 2),
        (3, "user_annotator", 1, 3),
    ]


def test_a_stale_if_match_is_still_a_conflict_after_coalescing_and_changes_nothing(
    parent, imported, annotator
):
    for n in range(1, 4):
        _save(parent, n, annotator)
    before = _history(parent)
    for stale in (1, 2, 3):  # every save counter the user's own coalesced saves passed through
        with pytest.raises(ConflictError) as refused:
            pass_document_save(
                parent=parent, pass_no=1, document=_doc(parent, 9), actor=annotator, expected_version=stale
            )
        assert refused.value.code == "version_conflict"
        assert refused.value.extra["current_version"] == 4
    assert _history(parent) == before
    assert PassDocument.objects.get(pk=imported.pk).document == _doc(parent, 3)


def test_an_unchanged_document_is_no_save(parent, imported, annotator):
    _save(parent, 1, annotator)
    _save(parent, 1, annotator)
    assert _history(parent) == [(1, "user_admin", 1, 1), (2, "user_annotator", 1, 2)]


# --- over HTTP, with If-Match -----------------------------------------------------------------------------


def test_ten_puts_with_if_match_make_one_version_and_a_stale_if_match_is_a_409(parent, imported, annotator):
    api = APIClient()
    api.force_authenticate(annotator)
    url = f"/api/parents/{parent.problem_id}/passes/1/"
    etag = api.get(url)["ETag"]
    assert etag == '"1"'
    for n in range(1, 11):
        response = api.put(url, {"document": _doc(parent, n)}, format="json", HTTP_IF_MATCH=etag)
        assert response.status_code == 200
        assert response["ETag"] == f'"{n + 1}"'
        assert (response.json()["version"], response.json()["history_version"]) == (n + 1, 2)
        etag = response["ETag"]
    stale = api.put(url, {"document": _doc(parent, 99)}, format="json", HTTP_IF_MATCH='"10"')
    assert stale.status_code == 409
    assert stale.json()["code"] == "version_conflict"
    assert stale.json()["extra"]["current_version"] == 11
    versions = api.get(url + "versions/").json()["results"]
    assert [(v["version"], v["saved_by"], v["save_count"], v["document_version"]) for v in versions] == [
        (2, "user_annotator", 10, 11),
        (1, "user_admin", 1, 1),
    ]
    assert versions[0]["last_saved_at"] > versions[0]["saved_at"]
    detail = api.get(url + "versions/2/").json()
    assert detail["document"] == _doc(parent, 10)
    diff = api.get(url + "diff/?from=1&to=2").json()
    assert diff["counts"] == {"added": 1, "removed": 0, "changed": 0}
    # a revert names the history number in the path and the save counter in If-Match
    reverted = api.post(url + "versions/1/revert/", HTTP_IF_MATCH='"11"')
    assert reverted.status_code == 200
    assert (reverted.json()["version"], reverted.json()["history_version"]) == (12, 3)
    assert reverted.json()["document"] == _doc(parent, 0)


def test_the_history_page_lists_one_version_per_author_run_with_its_saves(parent, imported, annotator):
    from django.test import Client

    for n in range(1, 11):
        _save(parent, n, annotator)
    client = Client()
    client.force_login(annotator)
    page = client.get(f"/problems/{parent.problem_id}/passes/1/history/").content.decode()
    assert "Versions (2)" in page
    assert page.count('data-testid="version-row"') == 2
    assert "10 saves" in page
    assert 'data-testid="version-author">user_annotator<' in page
    assert 'data-testid="version-author">user_admin<' in page
    assert f'action="/problems/{parent.problem_id}/passes/1/history/1/revert/"' in page
    assert '<input type="hidden" name="expected_version" value="11">' in page  # the save counter


# --- the pure rule ----------------------------------------------------------------------------------------

T0 = datetime(2027, 1, 1, 12, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=5)
WORKING = WorkingVersion(author_id=7, last_saved_at=T0, document_version=4, absorbs_saves=True)


def _incoming(**changes: Any) -> IncomingSave:
    fields: dict[str, Any] = {
        "author_id": 7,
        "at": T0 + timedelta(minutes=1),
        "document_version_before": 4,
        "document_was_draft": True,
        "plain": True,
    }
    return IncomingSave(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "working", "joins"),
    [
        ({}, WORKING, True),
        ({"at": T0 + WINDOW}, WORKING, True),  # the window's edge is inside it
        ({"at": T0 + WINDOW + timedelta(microseconds=1)}, WORKING, False),
        ({"at": T0 - timedelta(seconds=1)}, WORKING, False),  # a clock that went back never joins
        ({"author_id": 8}, WORKING, False),
        ({"author_id": None}, WorkingVersion(None, T0, 4, True), False),  # nobody known: never
        ({"document_version_before": 5}, WORKING, False),  # something saved in between
        ({"document_was_draft": False}, WORKING, False),  # submitted or reviewed since
        ({"plain": False}, WORKING, False),  # a revert or an accepted draft
        ({}, WorkingVersion(7, T0, 4, False), False),  # a revert's, a draft's or an import's version
        ({}, None, False),
    ],
)
def test_joins_working_version(changes, working, joins):
    assert joins_working_version(working, _incoming(**changes), window=WINDOW) is joins
    assert joins_working_version(working, _incoming(**changes), window=timedelta(0)) is False


# --- the migration ----------------------------------------------------------------------------------------

BEFORE = ("annotation", "0011_source_reviews_and_record_comments")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_the_migration_keeps_each_old_version_as_one_save_and_numbers_the_history(annotator):
    old = apps_at(migrate_to([BEFORE]), [BEFORE])
    source = old.get_model("annotation", "Source").objects.create(name="Old")
    parent = old.get_model("annotation", "ParentProblem").objects.create(
        problem_id="mig_hist",
        source=source,
        source_split="s",
        source_sample_id="1",
        language="en",
        answer_type="choice",
    )
    documents = old.get_model("annotation", "PassDocument")
    versions = old.get_model("annotation", "PassDocumentVersion")
    doc = documents.objects.create(
        parent=parent, pass_no=1, document={"n": 3}, document_sha256="c" * 64, version=3
    )
    empty = documents.objects.create(
        parent=parent, pass_no=2, document={}, document_sha256="d" * 64, version=1
    )
    for n in (1, 2, 3):
        versions.objects.create(
            pass_document=doc,
            version=n,
            document={"n": n},
            document_sha256=str(n) * 64,
            saved_by_id=annotator.pk,
        )

    migrate_to_latest()

    rows = PassDocumentVersion.objects.filter(pass_document_id=doc.pk).order_by("version")
    assert [(r.version, r.document_version, r.save_count, r.absorbs_saves) for r in rows] == [
        (1, 1, 1, False),
        (2, 2, 1, False),
        (3, 3, 1, False),
    ]
    assert all(r.last_saved_at == r.saved_at for r in rows)
    assert PassDocument.objects.get(pk=doc.pk).history_version == 3
    assert PassDocument.objects.get(pk=empty.pk).history_version == 0
    # an old version takes no later save: the next one is v4, by whoever saves
    migrated = ParentProblem.objects.get(pk=parent.pk)
    pass_document_save(
        parent=migrated,
        pass_no=1,
        document={"problem_id": "mig_hist", "visual_nodes": [], "ambiguities": []},
        actor=annotator,
        expected_version=3,
    )
    assert list(
        PassDocumentVersion.objects.filter(pass_document_id=doc.pk).values_list("version", "save_count")
    ) == [
        (4, 1),
        (3, 1),
        (2, 1),
        (1, 1),
    ]
