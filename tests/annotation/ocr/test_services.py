"""OCR runs and decisions: through the services and over HTTP, with the roles that are refused."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.demo.generator import generate_problem
from annotation.models import OcrProposal, OcrRun, PassDocument, PassDocumentVersion
from annotation.ocr.services import OcrDecision, ocr_proposals_decide, ocr_run_create
from annotation.services import pass_document_save
from audit.models import Event
from physalign_site.errors import ApplicationError, ConflictError
from tests.factories import ParentProblemFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def parent():
    problem = ParentProblemFactory(problem_id="ocr_incline")
    ProblemImageFactory(
        parent=problem, image_id="img_0", ordinal=0, data=generate_problem(seed=2027, index=0).png
    )
    return problem


def _run(parent, actor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run, created = ocr_run_create(actor=actor, parent=parent)
    assert created
    run.refresh_from_db()
    return run


def _by_text(parent):
    return {p.text: p for p in OcrProposal.objects.filter(parent=parent)}


def test_a_run_reads_the_image_and_stores_its_proposals(
    parent, annotator, django_capture_on_commit_callbacks
):
    run = _run(parent, annotator, django_capture_on_commit_callbacks)
    assert (run.status, run.total, run.done, run.error) == ("done", 1, 1, "")
    assert run.options["preprocessing"]["scale"] == 2 and run.options["engine"] == "tesseract"
    assert sorted(_by_text(parent)) == ["37°", "4.0 kg", "A", "mg"]
    assert _by_text(parent)["A"].bbox_1000 == [364, 343, 386, 383]
    assert set(OcrProposal.objects.values_list("status", flat=True)) == {"proposed"}
    assert Event.objects.filter(verb="ocr_run.done", object_id=str(run.pk)).count() == 1


def test_a_second_run_replaces_undecided_proposals_and_skips_labels_pass1_has(
    parent, annotator, django_capture_on_commit_callbacks
):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    a = _by_text(parent)["A"]
    ocr_proposals_decide(
        parent=parent, decisions=[OcrDecision(a.pk, "accept")], actor=annotator, expected_version=None
    )
    _run(parent, annotator, django_capture_on_commit_callbacks)
    statuses = sorted(OcrProposal.objects.filter(parent=parent).values_list("text", "status"))
    assert statuses == [("37°", "proposed"), ("4.0 kg", "proposed"), ("A", "accepted"), ("mg", "proposed")]
    assert OcrRun.objects.filter(parent=parent).count() == 2


def test_accept_saves_a_pass1_text_glyph_through_the_versioned_save(
    parent, annotator, django_capture_on_commit_callbacks
):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    a = _by_text(parent)["A"]
    decided = ocr_proposals_decide(
        parent=parent, decisions=[OcrDecision(a.pk, "accept")], actor=annotator, expected_version=0
    )
    doc = PassDocument.objects.get(parent=parent, pass_no=1)
    assert decided.doc.pk == doc.pk and doc.version == 1
    assert doc.document["visual_nodes"] == [
        {
            "id": "v001",
            "type": "text_glyph",
            "subtype": "label",
            "text": "A",
            "image_id": "img_0",
            "bbox_1000": [364, 343, 386, 383],
            "keypoints_1000": [],
            "center_1000": [-1, -1],
            "radius_1000": -1,
            "confidence": "high",
        }
    ]
    a.refresh_from_db()
    assert (a.status, a.visual_id, a.final_text, a.final_bbox_1000, a.decided_by) == (
        "accepted",
        "v001",
        "A",
        [364, 343, 386, 383],
        annotator,
    )
    assert PassDocumentVersion.objects.get(pass_document=doc).note == "OCR: accepted v001"
    event = Event.objects.get(verb="ocr_proposals.decide")
    assert event.after["decisions"] == [
        {"proposal": a.pk, "status": "accepted", "visual_id": "v001", "text": "A"}
    ]


def test_a_stale_version_is_a_409_and_nothing_changes(parent, annotator, django_capture_on_commit_callbacks):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    doc = pass_document_save(
        parent=parent,
        pass_no=1,
        document={"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []},
        actor=annotator,
        expected_version=None,
    )
    PassDocument.objects.filter(pk=doc.pk).update(version=5)
    a = _by_text(parent)["A"]
    events = Event.objects.count()
    with pytest.raises(ConflictError) as refused:
        ocr_proposals_decide(
            parent=parent, decisions=[OcrDecision(a.pk, "accept")], actor=annotator, expected_version=1
        )
    assert refused.value.extra["current_version"] == 5
    a.refresh_from_db()
    assert (a.status, a.visual_id, a.decided_by) == ("proposed", "", None)
    doc.refresh_from_db()
    assert doc.document["visual_nodes"] == [] and doc.version == 5
    assert Event.objects.count() == events


def test_edit_and_drop_in_one_batch_make_one_save(parent, annotator, django_capture_on_commit_callbacks):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    found = _by_text(parent)
    decided = ocr_proposals_decide(
        parent=parent,
        decisions=[
            OcrDecision(found["4.0 kg"].pk, "edit", text="4.0 kg", bbox_1000=[275, 195, 361, 240]),
            OcrDecision(found["mg"].pk, "edit", text="mg"),  # nothing changed: counts as accepted
            OcrDecision(found["37°"].pk, "drop"),
            OcrDecision(found["A"].pk, "accept"),
        ],
        actor=annotator,
        expected_version=None,
    )
    assert decided.doc.version == 1
    nodes = {n["id"]: (n["text"], n["bbox_1000"]) for n in decided.doc.document["visual_nodes"]}
    assert nodes == {
        "v001": ("4.0 kg", [275, 195, 361, 240]),
        "v002": ("mg", [423, 501, 463, 536]),
        "v003": ("A", [364, 343, 386, 383]),
    }
    statuses = {p.text: (p.status, p.visual_id) for p in OcrProposal.objects.filter(parent=parent)}
    assert statuses == {
        "4.0 kg": ("edited", "v001"),
        "mg": ("accepted", "v002"),
        "37°": ("dropped", ""),
        "A": ("accepted", "v003"),
    }
    with pytest.raises(ApplicationError, match="Already decided") as again:
        ocr_proposals_decide(
            parent=parent, decisions=[OcrDecision(found["A"].pk, "drop")], actor=annotator, expected_version=1
        )
    assert again.value.status_code == 409


def test_only_drops_on_a_problem_without_pass1_write_no_document(
    parent, annotator, django_capture_on_commit_callbacks
):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    decided = ocr_proposals_decide(
        parent=parent,
        decisions=[OcrDecision(p.pk, "drop") for p in OcrProposal.objects.filter(parent=parent)],
        actor=annotator,
        expected_version=None,
    )
    assert decided.doc is None and not PassDocument.objects.filter(parent=parent).exists()
    assert set(OcrProposal.objects.values_list("status", flat=True)) == {"dropped"}


def test_an_unreadable_image_fails_the_run_with_the_reason(annotator, django_capture_on_commit_callbacks):
    problem = ParentProblemFactory(problem_id="ocr_broken")
    image = ProblemImageFactory(parent=problem, image_id="img_0", ordinal=0)
    with open(image.file.path, "wb") as handle:
        handle.write(b"not a png any more")
    run = _run(problem, annotator, django_capture_on_commit_callbacks)
    assert run.status == "failed"
    assert run.error.startswith("ocr_broken/img_0: The image cannot be read")
    assert not OcrProposal.objects.filter(parent=problem).exists()


# --- over HTTP -----------------------------------------------------------------------------------------


def _start(client, parent):
    return client.post(reverse("ocr:parent-run-create", args=[parent.problem_id]), {}, format="json")


def test_http_journey_start_poll_list_decide(
    parent, annotator, api_client, django_capture_on_commit_callbacks
):
    api_client.force_authenticate(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        started = _start(api_client, parent)
    assert started.status_code == 202
    run = api_client.get(reverse("ocr:run-detail", args=[started.data["id"]])).data
    assert (run["status"], run["done"], run["total"], run["problem_id"]) == ("done", 1, 1, "ocr_incline")
    listed = api_client.get(reverse("ocr:proposal-list", args=[parent.problem_id]), {"status": "proposed"})
    assert [p["text"] for p in listed.data["results"]] == ["4.0 kg", "A", "mg", "37°"]
    assert listed.data["next"] is None
    ids = [p["id"] for p in listed.data["results"]]
    decided = api_client.post(
        reverse("ocr:proposal-decide", args=[parent.problem_id]),
        {"expected_version": 0, "decisions": [{"proposal_id": ids[1], "action": "edit", "text": "B"}]},
        format="json",
    )
    assert decided.status_code == 200, decided.data
    assert decided.headers["ETag"] == '"1"'
    assert decided.data["pass_state"]["version"] == 1
    assert decided.data["pass_state"]["document"]["visual_nodes"][0]["text"] == "B"
    assert [(p["status"], p["visual_id"], p["final_text"]) for p in decided.data["proposals"]] == [
        ("edited", "v001", "B")
    ]
    stale = api_client.post(
        reverse("ocr:proposal-decide", args=[parent.problem_id]),
        {"expected_version": 0, "decisions": [{"proposal_id": ids[0], "action": "accept"}]},
        format="json",
    )
    assert stale.status_code == 409 and stale.data["code"] == "version_conflict"
    assert OcrProposal.objects.get(pk=ids[0]).status == "proposed"
    bad = api_client.post(
        reverse("ocr:proposal-decide", args=[parent.problem_id]),
        {
            "expected_version": 1,
            "decisions": [{"proposal_id": ids[0], "action": "edit", "bbox_1000": [5, 5, 1, 1]}],
        },
        format="json",
    )
    assert bad.status_code == 400 and bad.data["code"] == "ocr_decision_invalid"


@pytest.mark.parametrize("role", ["source_reviewer", "probe_reviewer", "adjudicator"])
def test_roles_that_may_not_edit_pass1_cannot_start_or_decide(
    parent, role_users, role, api_client, annotator, django_capture_on_commit_callbacks
):
    _run(parent, annotator, django_capture_on_commit_callbacks)
    proposal = OcrProposal.objects.filter(parent=parent).first()
    api_client.force_authenticate(role_users[role])
    assert _start(api_client, parent).status_code == 403
    decided = api_client.post(
        reverse("ocr:proposal-decide", args=[parent.problem_id]),
        {"expected_version": 0, "decisions": [{"proposal_id": proposal.pk, "action": "accept"}]},
        format="json",
    )
    assert decided.status_code == 403
    assert OcrRun.objects.count() == 1
    proposal.refresh_from_db()
    assert proposal.status == "proposed" and not PassDocument.objects.exists()
    listed = api_client.get(reverse("ocr:proposal-list", args=[parent.problem_id]))
    assert listed.status_code == (200 if role == "source_reviewer" else 403)


def test_a_source_run_is_for_admins_only(parent, role_users, api_client, django_capture_on_commit_callbacks):
    url = reverse("ocr:source-run-create", args=[parent.source_id])
    api_client.force_authenticate(role_users["annotator"])
    assert api_client.post(url, {}, format="json").status_code == 403
    assert not OcrRun.objects.exists()
    api_client.force_authenticate(role_users["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        started = api_client.post(url, {}, format="json")
    assert started.status_code == 202
    run = OcrRun.objects.get()
    assert (run.status, run.source_id, run.parent_id, run.total, run.done) == (
        "done",
        parent.source_id,
        None,
        1,
        1,
    )
    assert OcrProposal.objects.filter(parent=parent).count() == 4


def test_the_source_run_page_is_for_admins(parent, role_users, client, django_capture_on_commit_callbacks):
    client.force_login(role_users["annotator"])
    assert client.get(reverse("ocr:runs")).status_code == 403
    assert client.post(reverse("ocr:runs"), {"source_id": parent.source_id}).status_code == 403
    assert not OcrRun.objects.exists()
    client.force_login(role_users["admin"])
    page = client.get(reverse("ocr:runs"))
    assert page.status_code == 200 and parent.source.name in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("ocr:runs"), {"source_id": parent.source_id})
    assert started.status_code == 302
    assert OcrRun.objects.get().status == "done"
    assert client.post(reverse("ocr:runs"), {"source_id": "x"}).status_code == 400
