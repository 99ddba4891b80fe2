"""Applying a curation (annotation.curation.services.curation_apply): the curated document saved as a new version of
the first annotator's pass, submitted when it validates, audited choice by choice; refusals change nothing."""

from __future__ import annotations

import copy

import pytest

from annotation.curation.merge import Choice
from annotation.curation.services import curation_apply
from annotation.models import Curation, IndependentPassDocument, PassDocument, PassDocumentVersion
from annotation.services import pass_document_save
from audit.models import Event
from kit.canonical import digest
from physalign_site.errors import ApplicationError, ConflictError
from tests.annotation.curation.conftest import EXTRA_REGION

pytestmark = pytest.mark.django_db

TAKE_BATTERY = Choice("visual_nodes", "v001", "v001", "second")


def _apply(world, pass_no, choices, *, actor=None, version=None, **kwargs):
    doc = PassDocument.objects.get(parent=world["parent"], pass_no=pass_no)
    return curation_apply(
        parent=world["parent"],
        pass_no=pass_no,
        choices=choices,
        curator=actor or world["curator"],
        expected_version=doc.version if version is None else version,
        **kwargs,
    )


def test_take_second_saves_a_new_version_under_the_first_ids_and_submits_it(curation_world):
    w = curation_world
    before = PassDocument.objects.get(pk=w["docs"][1].pk)
    outcome = _apply(w, 1, [TAKE_BATTERY])

    doc = PassDocument.objects.get(pk=before.pk)
    expected = copy.deepcopy(before.document)
    expected["visual_nodes"][0]["bbox_1000"] = [135, 475, 200, 516]
    assert doc.document == expected
    assert (doc.version, doc.status, doc.updated_by) == (before.version + 1, "submitted", w["curator"])
    assert outcome.submitted is True and outcome.issues == []
    assert outcome.result.taken == ("v001",)
    newest = PassDocumentVersion.objects.filter(pass_document=doc).order_by("-version").first()
    assert newest.note == "curated with the second annotation by cur_second"
    assert newest.saved_by == w["curator"]

    curation = Curation.objects.get()
    assert curation == outcome.curation
    assert (curation.parent, curation.pass_no, curation.curator) == (w["parent"], 1, w["curator"])
    assert curation.first_sha256 == before.document_sha256
    assert curation.second_sha256 == w["seconds"][1].document_sha256
    assert curation.result_sha256 == doc.document_sha256 == digest(expected)
    assert [c["keep"] for c in curation.choices] == ["second", *["first"] * 9, "drop"]
    assert curation.choices[0] == {
        "collection": "visual_nodes",
        "first_id": "v001",
        "second_id": "v001",
        "keep": "second",
    }


def test_every_choice_is_in_the_audit_log(curation_world):
    w = curation_world
    first_v001 = copy.deepcopy(w["docs"][1].document["visual_nodes"][0])
    outcome = _apply(w, 1, [TAKE_BATTERY])
    events = Event.objects.filter(
        object_type="annotation.curation", object_id=str(outcome.curation.pk)
    ).order_by("id")
    assert [e.verb for e in events] == ["curation.choice"] * 11 + ["curation.apply"]
    assert all(e.actor == w["curator"] for e in events)
    battery = events[0]
    assert battery.before == {"collection": "visual_nodes", "first_id": "v001", "record": first_v001}
    assert battery.after["keep"] == "second"
    assert battery.after["score"] == pytest.approx(0.831, abs=1e-3)
    assert battery.after["curated_id"] == "v001"
    assert battery.after["record"]["bbox_1000"] == [135, 475, 200, 516]
    assert battery.after["second_record"] == w["seconds"][1].document["visual_nodes"][0]
    r2_label = events[8]  # v009 "R2", only in the first: kept
    assert (r2_label.before["first_id"], r2_label.after["keep"], r2_label.after["curated_id"]) == (
        "v009",
        "first",
        "v009",
    )
    extra = events[10]  # the second's own region, not added
    assert (extra.before, extra.after["keep"], extra.after["curated_id"], extra.after["record"]) == (
        {"collection": "visual_nodes", "first_id": None, "record": None},
        "drop",
        None,
        None,
    )
    applied = events[11]
    assert applied.before["version"] == w["docs"][1].version
    assert applied.after["version"] == w["docs"][1].version + 1
    assert applied.after["status"] == "submitted"
    assert (
        applied.after["taken"] == ["v001"] and applied.after["dropped"] == [] and applied.after["added"] == {}
    )
    # the save itself is audited as every save is
    assert Event.objects.filter(verb="pass_document.save", actor=w["curator"]).count() == 1


def test_adding_a_second_only_region_gives_it_the_next_id(curation_world):
    w = curation_world
    outcome = _apply(w, 1, [Choice("visual_nodes", None, "v010", "second")])
    doc = outcome.doc
    assert doc.document["visual_nodes"][-1] == {**EXTRA_REGION, "id": "v011"}
    assert len(doc.document["visual_nodes"]) == 11
    assert outcome.result.added == {"v010": "v011"}
    assert doc.status == "submitted"
    event = Event.objects.filter(verb="curation.choice").order_by("id").last()
    assert (event.after["keep"], event.after["curated_id"], event.after["record"]["id"]) == (
        "second",
        "v011",
        "v011",
    )


def test_a_stale_version_is_a_409_and_nothing_changes(curation_world):
    w = curation_world
    doc = w["docs"][1]
    events = Event.objects.count()
    with pytest.raises(ConflictError) as raised:
        _apply(w, 1, [TAKE_BATTERY], version=doc.version - 1)
    assert raised.value.code == "version_conflict"
    assert raised.value.extra["current_version"] == doc.version
    assert PassDocument.objects.get(pk=doc.pk).document_sha256 == doc.document_sha256
    assert (Curation.objects.count(), Event.objects.count()) == (0, events)


def test_a_second_document_saved_since_is_a_409(curation_world):
    w = curation_world
    with pytest.raises(ConflictError) as raised:
        _apply(w, 1, [TAKE_BATTERY], second_version=w["seconds"][1].version + 1)
    assert raised.value.code == "second_version_conflict"
    assert Curation.objects.count() == 0


def test_if_match_is_required(curation_world):
    w = curation_world
    with pytest.raises(ApplicationError) as raised:
        curation_apply(parent=w["parent"], pass_no=1, choices=[], curator=w["curator"], expected_version=None)
    assert (raised.value.status_code, raised.value.code) == (428, "precondition_required")


def test_dropping_a_region_a_later_pass_uses_is_refused_and_nothing_changes(curation_world):
    w = curation_world
    before = PassDocument.objects.get(pk=w["docs"][1].pk)
    with pytest.raises(ApplicationError) as raised:
        _apply(w, 1, [Choice("visual_nodes", "v009", None, "drop")])
    assert (raised.value.status_code, raised.value.code) == (409, "later_passes_refer")
    assert raised.value.message == (
        "Later passes refer to records this curation drops or renumbers: v009 (dropped) is used by Pass 2 b007, "
        "Pass 2 p004, Pass 3 p004; v010 (renumbered to v009) is used by Pass 2 b008, Pass 2 p005. Keep those "
        "records, or change the later passes first."
    )
    assert raised.value.extra["references"] == {
        "v009": ["Pass 2 b007", "Pass 2 p004", "Pass 3 p004"],
        "v010": ["Pass 2 b008", "Pass 2 p005"],
    }
    after = PassDocument.objects.get(pk=before.pk)
    assert (after.version, after.document_sha256) == (before.version, before.document_sha256)
    assert Curation.objects.count() == 0


def test_a_choice_that_fits_no_pair_is_a_400(curation_world):
    w = curation_world
    with pytest.raises(ApplicationError) as raised:
        _apply(w, 1, [Choice("visual_nodes", "v001", "v002", "second")])
    assert (raised.value.status_code, raised.value.code) == (400, "choice_invalid")
    assert Curation.objects.count() == 0


def test_a_curated_document_with_issues_stays_a_draft(curation_world):
    w = curation_world
    second = w["seconds"][1]
    second.document["visual_nodes"][-1]["text"] = ""  # a text glyph without its text
    second.document_sha256 = digest(second.document)
    second.save()
    outcome = _apply(w, 1, [Choice("visual_nodes", None, "v010", "second")])
    assert outcome.submitted is False
    assert outcome.doc.status == "draft"
    assert [(i["code"], i["path"]) for i in outcome.issues] == [
        ("TEXT_GLYPH_TEXT_EMPTY", "visual_nodes[10].text")
    ]
    applied = Event.objects.get(verb="curation.apply")
    assert (applied.after["status"], applied.after["submitted"], applied.after["issue_count"]) == (
        "draft",
        False,
        1,
    )


def test_pass_2_take_second_entity_and_drop_its_label_binding(curation_world):
    w = curation_world
    outcome = _apply(
        w, 2, [Choice("physical_nodes", "p004", "p004", "second"), Choice("bindings", "b007", None, "drop")]
    )
    document = outcome.doc.document
    p004 = next(p for p in document["physical_nodes"] if p["id"] == "p004")
    assert p004["visual_anchor_ids"] == ["v006"]
    assert [(b["id"], b["from_id"], b["to_id"]) for b in document["bindings"]] == [
        ("b001", "v001", "p001"),
        ("b002", "v003", "p002"),
        ("b003", "v004", "p002"),
        ("b004", "v005", "p003"),
        ("b005", "v007", "p003"),
        ("b006", "v006", "p004"),
        (
            "b007",
            "v010",
            "p005",
        ),  # the wire's: renumbered after the drop, on the first's region id (not v009)
    ]
    assert outcome.result.renamed == {"b008": "b007"}
    assert outcome.result.dropped == ("b007",)
    assert outcome.doc.status == "submitted"


def test_unchanged_choices_record_the_curation_without_a_new_version(curation_world):
    w = curation_world
    before = PassDocument.objects.get(pk=w["docs"][1].pk)
    outcome = _apply(w, 1, [])
    after = PassDocument.objects.get(pk=before.pk)
    assert (after.version, after.status, after.updated_by) == (before.version, "submitted", w["first"])
    assert outcome.curation.result_sha256 == before.document_sha256 == outcome.curation.first_sha256


def test_the_second_annotator_and_the_last_editor_may_not_curate(curation_world, django_user_model):
    w = curation_world
    with pytest.raises(ApplicationError) as raised:
        _apply(w, 1, [TAKE_BATTERY], actor=w["second"])
    assert (raised.value.status_code, raised.value.code) == (403, "curation_forbidden")
    w["first"].groups.add(w["curator"].groups.get())  # the first annotator, made a source reviewer too
    del w["first"]._physalign_roles
    with pytest.raises(ApplicationError) as raised:
        _apply(w, 1, [TAKE_BATTERY], actor=django_user_model.objects.get(pk=w["first"].pk))
    assert raised.value.status_code == 403
    assert (
        raised.value.message
        == "You edited the first annotation of this pass last; ask another source reviewer to curate it."
    )
    assert Curation.objects.count() == 0
    _apply(w, 1, [TAKE_BATTERY], actor=w["admin"])  # an admin may
    assert Curation.objects.get().curator == w["admin"]


def test_a_pass_without_the_second_document_is_a_404(curation_world):
    w = curation_world
    with pytest.raises(ApplicationError) as raised:
        _apply(w, 3, [])
    assert (raised.value.status_code, raised.value.code) == (404, "no_second_document")
    assert (
        raised.value.message
        == f"The second annotator (cur_second) has no Pass 3 document of {w['parent'].problem_id} yet."
    )


def test_pass_4_curates_too(curation_world):
    w = curation_world
    document = w["gen"].passes[3]
    pass_document_save(
        parent=w["parent"], pass_no=4, document=document, actor=w["first"], expected_version=None
    )
    second = copy.deepcopy(document)
    second["quantities"][0]["unit_latex"] = "kV"  # a wrong unit
    IndependentPassDocument.objects.create(
        second=w["second_annotation"], pass_no=4, document=second, document_sha256=digest(second)
    )
    outcome = _apply(w, 4, [Choice("quantities", "q001", "q001", "second")])
    assert outcome.doc.document["quantities"][0]["unit_latex"] == "kV"
    assert outcome.result.taken == ("q001",)
    assert outcome.doc.status == "submitted"
