"""Imports cannot approve, and cannot touch private fields (issue 12, items 1 and 2).

Each test plays the attacker through HTTP (``POST /api/imports/`` with a zip, the Celery task run on
commit) and asserts both the refusal and that nothing it should not change changed.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.demo import generate_workspace
from annotation.models import ImportJob, ParentProblem, PassDocument
from audit.models import Event
from kit.canonical import digest, write_json_bytes
from tests.kit_workspace import rewrite_pass

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _zip(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def _upload(user, folder: Path, kind: str, capture) -> dict:
    upload = SimpleUploadedFile("batch.zip", _zip(folder), content_type="application/zip")
    with capture(execute=True):
        response = _client(user).post("/api/imports/", {"kind": kind, "file": upload}, format="multipart")
    assert response.status_code == 202, response.data
    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == "succeeded", job.report
    return job.report


def _forged_workspace(tmp_path: Path, *, count: int = 2, reviewer: str = "source_reviewer") -> Path:
    """A ``generate_problems`` workspace whose review state credits every stage to an existing account."""
    ws = tmp_path / "ws"
    generate_workspace(ws, count=count, seed=2027)
    state_path = ws / "reviews" / "state.json"
    state = json.loads(state_path.read_text())
    for problem in state["problems"].values():
        for stage in problem["stages"].values():
            stage["reviewer"] = reviewer
    state_path.write_bytes(write_json_bytes(state))
    return ws


@pytest.fixture
def people(django_user_model):
    def make(name: str, *roles: str):
        user = django_user_model.objects.create_user(username=name, password="pw-" + name)
        user.groups.add(*[Group.objects.get_or_create(name=r)[0] for r in roles])
        return user

    return {
        "annotator": make("annotator", "annotator"),
        "source_reviewer": make("source_reviewer", "source_reviewer"),
        "admin": make("admin", "admin"),
    }


def _passes() -> list[tuple]:
    return sorted(
        PassDocument.objects.values_list(
            "parent__problem_id", "pass_no", "status", "version", "approved_by__username", "approval_origin"
        )
    )


def test_an_annotator_cannot_approve_through_a_forged_review_state(
    tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path)

    report = _upload(people["annotator"], ws, "kit_workspace", django_capture_on_commit_callbacks)

    docs = PassDocument.objects.select_related("parent")
    assert docs.count() == 8
    assert set(docs.values_list("status", flat=True)) == {"submitted"}
    assert not docs.filter(approved_by__isnull=False).exists()
    assert set(docs.values_list("approved_sha256", flat=True)) == {""}
    assert set(ParentProblem.objects.values_list("status", flat=True)) == {
        "in_annotation"
    }  # Pass 5 stays locked
    warnings = [w["code"] for row in report["rows"] for w in row["warnings"]]
    assert warnings.count("SOURCE_REVIEW_NOT_IMPORTED") == 8
    pid = docs.first().parent.problem_id
    pass5 = _client(people["annotator"]).get(f"/api/parents/{pid}/passes/5/")
    assert pass5.status_code in (403, 409), pass5.data


def test_an_admin_upload_is_an_imported_approval_by_the_admin_never_a_link_to_the_named_account(
    tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path)

    _upload(people["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)

    docs = PassDocument.objects.all()
    assert set(
        docs.values_list("status", "approved_by__username", "approval_origin", "approval_provenance")
    ) == {("approved", "admin", "import", "source_reviewer")}
    assert not docs.filter(approved_by=people["source_reviewer"]).exists()
    assert all(doc.approval_is_fresh for doc in docs)
    assert set(ParentProblem.objects.values_list("status", flat=True)) == {"annotated"}
    shown = _client(people["admin"]).get(f"/api/parents/{docs.first().parent.problem_id}/passes/1/").data
    assert (shown["approved_by"], shown["approval_origin"], shown["approval_provenance"]) == (
        "admin",
        "import",
        "source_reviewer",
    )


@pytest.mark.parametrize("uploader", ["annotator", "admin"])  # neither may swap the content under an approval
def test_a_reimport_never_replaces_an_approved_document_silently(
    uploader, tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path, count=1)
    _upload(people["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)
    pid = ParentProblem.objects.get().problem_id
    approved = PassDocument.objects.get(pass_no=4)
    assert approved.approval_is_fresh

    edited = rewrite_pass(ws, pid, 4, lambda d: d.update(domain="electromagnetism"))
    report = _upload(people[uploader], ws, "kit_workspace", django_capture_on_commit_callbacks)

    doc = PassDocument.objects.get(pass_no=4)
    assert (doc.status, doc.version, doc.document) == ("submitted", 2, edited)
    assert doc.approved_sha256 == approved.document_sha256 and not doc.approval_is_fresh
    assert list(doc.versions.values_list("version", "document_sha256")) == [
        (2, digest(edited)),
        (1, approved.document_sha256),
    ]  # the approved version stays in the history
    assert ParentProblem.objects.get().status == "in_annotation"
    assert "APPROVED_DOCUMENT_REPLACED" in [w["code"] for w in report["rows"][0]["warnings"]]
    assert PassDocument.objects.filter(status="approved").count() == 3  # Passes 1–3 untouched


def test_a_document_with_validator_errors_is_never_stored_as_approved(
    tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path, count=1)
    pid = json.loads((ws / "blind" / "manifest.jsonl").read_text().splitlines()[0])["problem_id"]
    rewrite_pass(ws, pid, 1, lambda d: d["visual_nodes"][0].update(bbox_1000=[-50, -50, 5000, 5000]))

    report = _upload(people["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)

    doc = PassDocument.objects.get(pass_no=1)
    assert (doc.status, doc.approved_sha256, doc.approved_by) == ("draft", "", None)
    codes = {w["code"] for w in report["rows"][0]["warnings"] if w.get("pass_no") == 1}
    assert "SOURCE_REVIEW_DOCUMENT_INVALID" in codes
    assert ParentProblem.objects.get().status == "in_annotation"


def test_a_source_reviewer_cannot_approve_what_their_own_import_writes(
    tmp_path, people, django_user_model, django_capture_on_commit_callbacks
):
    both = django_user_model.objects.create_user(username="both", password="pw-both")
    both.groups.add(Group.objects.get(name="annotator"), Group.objects.get(name="source_reviewer"))
    ws = _forged_workspace(tmp_path, count=1, reviewer="both")

    report = _upload(both, ws, "kit_workspace", django_capture_on_commit_callbacks)

    assert set(PassDocument.objects.values_list("status", flat=True)) == {"submitted"}
    assert [w["code"] for w in report["rows"][0]["warnings"]].count("SOURCE_REVIEW_SELF_REVIEW") == 4


# --- private fields ------------------------------------------------------------------------------------------


def _problems_folder(tmp_path: Path, name: str, rows: list[dict]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "manifest.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


ROW = {
    "id": "guess_me",
    "source": "S",
    "source_id": "1",
    "statement": "A ball falls 5 m.",
    "question": "How long does it take?",
    "answer": "1.0 s",
    "solution": "t = sqrt(2h/g)",
}


def test_an_annotator_cannot_overwrite_or_probe_private_fields(
    tmp_path, people, django_capture_on_commit_callbacks
):
    _upload(
        people["admin"],
        _problems_folder(tmp_path, "first", [ROW]),
        "problems",
        django_capture_on_commit_callbacks,
    )
    stored = ParentProblem.objects.values("answer", "solution", "answer_type", "version").get()
    events = Event.objects.count()

    outcomes = []
    for name, answer in (("right", "1.0 s"), ("wrong", "7 s")):
        rows = [{**ROW, "answer": answer, "solution": "anything"}]
        report = _upload(
            people["annotator"],
            _problems_folder(tmp_path, name, rows),
            "problems",
            django_capture_on_commit_callbacks,
        )
        row = report["rows"][0]
        outcomes.append((row["outcome"], [w["code"] for w in row["warnings"]], report["counts"]))
        assert ParentProblem.objects.values("answer", "solution", "answer_type", "version").get() == stored

    assert outcomes[0] == outcomes[1]  # a right and a wrong guess look the same
    assert outcomes[0][0] == "unchanged" and "PRIVATE_FIELDS_KEPT" in outcomes[0][1]
    assert not Event.objects.filter(verb="parent.private_fields_changed").exists()
    assert Event.objects.count() == events + 2  # the two import_job.created events, nothing about the parent


def test_an_annotator_kit_answers_sidecar_keeps_private_fields(
    tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path, count=1)
    _upload(people["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)
    stored = ParentProblem.objects.values("answer", "solution", "answer_type").get()
    sidecar = ws / "private" / "answers.jsonl"
    row = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**row, "answer": "forged", "solution": "forged"}) + "\n")

    report = _upload(people["annotator"], ws, "kit_workspace", django_capture_on_commit_callbacks)

    assert ParentProblem.objects.values("answer", "solution", "answer_type").get() == stored
    assert report["rows"][0]["outcome"] == "unchanged"
    assert "PRIVATE_FIELDS_KEPT" in [w["code"] for w in report["rows"][0]["warnings"]]


def test_an_admin_may_update_private_fields_and_the_event_log_records_it(
    tmp_path, people, django_capture_on_commit_callbacks
):
    _upload(
        people["admin"],
        _problems_folder(tmp_path, "first", [ROW]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    report = _upload(
        people["admin"],
        _problems_folder(tmp_path, "second", [{**ROW, "answer": "1.01 s"}]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    assert report["rows"][0]["outcome"] == "updated"
    assert ParentProblem.objects.get().answer == "1.01 s"
    event = Event.objects.get(verb="parent.private_fields_changed")
    assert event.actor == people["admin"]
    assert set(event.before) == set(event.after) - {"import_job"} == {"answer"}
    assert event.before["answer"] != event.after["answer"]
    assert "1.01 s" not in json.dumps(event.after)  # digests only, even in the audit trail


# --- uploads and bad input (items 9 and 11) ----------------------------------------------------------------------


def _zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_bomb_is_refused_before_anything_is_queued(people):
    bomb = _zip_bytes({"manifest.jsonl": b"", "images/zeros.png": b"\0" * (60 * 1024 * 1024)})
    assert len(bomb) < 100_000
    upload = SimpleUploadedFile("bomb.zip", bomb, content_type="application/zip")
    response = _client(people["annotator"]).post(
        "/api/imports/", {"kind": "problems", "file": upload}, format="multipart"
    )
    assert response.status_code == 400 and response.data["code"] == "import_zip_ratio", response.data
    assert not ImportJob.objects.exists()


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("statement", json.dumps("x" * 50_001), "longer than the limit of 50,000"),
        ("question", json.dumps("bad \u0000 byte"), "NUL character"),
        ("solution", '"lone \\ud800 surrogate"', "unpaired surrogate"),
        ("meta", "[" * 3000 + "]" * 3000, "levels deep"),
    ],
)
def test_unstorable_rows_are_row_errors_and_nothing_is_imported(
    field, value, message, tmp_path, people, django_capture_on_commit_callbacks
):
    good = {**ROW, "id": "fine_row"}
    bad = json.dumps({**ROW, "id": "bad_row", field: "PLACEHOLDER"}).replace('"PLACEHOLDER"', value)
    folder = tmp_path / "rows"
    folder.mkdir()
    lines = [json.dumps(good), bad]
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    upload = SimpleUploadedFile("rows.zip", _zip(folder), content_type="application/zip")
    with django_capture_on_commit_callbacks(execute=True):
        response = _client(people["annotator"]).post(
            "/api/imports/", {"kind": "problems", "file": upload}, format="multipart"
        )
    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == "failed"
    assert not [e for e in job.report["errors"] if e["code"] == "IMPORT_CRASHED"]
    rows = {row["problem_id"] or row["row"]: row for row in job.report["rows"]}
    errors = [e for row in job.report["rows"] for e in row["errors"]]
    assert len(errors) == 1 and errors[0]["code"] == "JSON_INVALID" and message in errors[0]["message"], (
        errors
    )
    assert [r["outcome"] for r in rows.values()] == ["not_imported", "rejected"]
    assert not ParentProblem.objects.exists()


def test_an_over_long_label_in_a_pass_document_is_refused(
    tmp_path, people, django_capture_on_commit_callbacks
):
    ws = _forged_workspace(tmp_path, count=1)
    pid = json.loads((ws / "blind" / "manifest.jsonl").read_text().splitlines()[0])["problem_id"]
    rewrite_pass(ws, pid, 1, lambda d: d["visual_nodes"][0].update(text="m" * 1_000_000))
    upload = SimpleUploadedFile("ws.zip", _zip(ws), content_type="application/zip")
    with django_capture_on_commit_callbacks(execute=True):
        response = _client(people["admin"]).post(
            "/api/imports/", {"kind": "kit_workspace", "file": upload}, format="multipart"
        )
    job = ImportJob.objects.get(pk=response.data["id"])
    assert job.status == "failed"
    codes = [e["code"] for e in job.report["rows"][0]["errors"]]
    assert codes == ["PASS_JSON_INVALID"]
    assert not PassDocument.objects.exists()


def test_an_upload_is_deleted_once_its_job_ends(
    tmp_path, people, django_capture_on_commit_callbacks, settings
):
    for kind, folder in (
        ("problems", _problems_folder(tmp_path, "ok", [ROW])),
        ("problems", _problems_folder(tmp_path, "bad", [{**ROW, "id": "bad id"}])),
    ):
        upload = SimpleUploadedFile("batch.zip", _zip(folder), content_type="application/zip")
        with django_capture_on_commit_callbacks(execute=True):
            response = _client(people["annotator"]).post(
                "/api/imports/", {"kind": kind, "file": upload}, format="multipart"
            )
        job = ImportJob.objects.get(pk=response.data["id"])
        assert job.status in ("succeeded", "failed") and not job.upload
    assert list((Path(settings.MEDIA_ROOT) / "imports").glob("*")) == []
    assert sorted(ImportJob.objects.values_list("status", flat=True)) == ["failed", "succeeded"]


# --- issue 25, item 2: an import cannot change what was approved without making it stale -----------------------

TAMPER = " Ignore the figure: the block does not move."


def _tamper_content(ws: Path) -> tuple[str, str, str]:
    """Edit the stem and swap the diagram for one of the same size with other pixels (a new SHA-256), declaring
    the new hash as a forger would. Returns (problem id, new stem, new image sha256)."""
    import hashlib

    from PIL import Image

    manifest = ws / "blind" / "manifest.jsonl"
    row = json.loads(manifest.read_text().splitlines()[0])
    entry = row["images"][0]
    image_path = ws / "dataset" / entry["path"]
    with Image.open(image_path) as image:
        swapped = image.convert("RGB")
    swapped.putpixel((0, 0), (255, 0, 0) if swapped.getpixel((0, 0)) != (255, 0, 0) else (0, 0, 255))
    buffer = io.BytesIO()
    swapped.save(buffer, format="PNG")
    image_path.write_bytes(buffer.getvalue())
    entry["sha256"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    assert (swapped.width, swapped.height) == (entry["width"], entry["height"])
    row["segments"]["stem"] += TAMPER
    manifest.write_bytes(write_json_bytes(row))
    return row["problem_id"], row["segments"]["stem"], entry["sha256"]


def _approved_workspace(tmp_path: Path, admin, capture) -> tuple[Path, str]:
    ws = _forged_workspace(tmp_path, count=1)
    _upload(admin, ws, "kit_workspace", capture)
    parent = ParentProblem.objects.get()
    assert parent.status == "annotated"
    return ws, parent.problem_id


def _freshness_over_http(user, pid: str) -> dict[int, bool]:
    client = _client(user)
    return {n: client.get(f"/api/parents/{pid}/passes/{n}/").data["approval_is_fresh"] for n in (1, 2, 3, 4)}


def _stored_content(pid: str) -> dict:
    parent = ParentProblem.objects.get(problem_id=pid)
    image = parent.images.get()
    with image.file.open("rb") as handle:
        data = handle.read()
    return {
        "stem": parent.stem,
        "raw_question": parent.raw_question,
        "version": parent.version,
        "status": parent.status,
        "kit_source": parent.kit_source,
        "content_sha256": parent.content_sha256,
        "image": (image.sha256, image.file.name, digest_bytes(data)),
        "passes": _passes(),
    }


def digest_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _compile(pid: str):
    from probes.models import CompileIssue
    from probes.services import compile_run_create, compile_run_execute

    run = compile_run_execute(run_id=compile_run_create(actor=None, parent_ids=[pid], enqueue=False).pk)
    return run, sorted(CompileIssue.objects.filter(run=run).values_list("code", "detail"))


def test_an_annotator_cannot_change_the_stem_or_image_of_an_approved_problem(
    tmp_path, role_users, django_capture_on_commit_callbacks
):
    ws, pid = _approved_workspace(tmp_path, role_users["admin"], django_capture_on_commit_callbacks)
    before = _stored_content(pid)
    events = Event.objects.count()
    _, tampered_stem, tampered_sha = _tamper_content(ws)

    report = _upload(role_users["annotator"], ws, "kit_workspace", django_capture_on_commit_callbacks)

    row = report["rows"][0]
    assert row["outcome"] == "refused" and row["changed"] == []
    assert report["counts"]["refused"] == 1 and report["counts"]["unchanged"] == 0
    [refusal] = row["refused"]
    assert refusal["code"] == "APPROVED_CONTENT_CHANGE_REFUSED"
    assert refusal["fields"] == ["stem", "images"]
    assert pid in refusal["message"] and "stem" in refusal["message"] and "images" in refusal["message"]
    # nothing of that problem changed: text, image bytes and file, passes, approvals, status, Kit hashes
    assert _stored_content(pid) == before
    stored = ParentProblem.objects.get(problem_id=pid)
    assert stored.stem != tampered_stem and stored.images.get().sha256 != tampered_sha
    assert _freshness_over_http(role_users["annotator"], pid) == {1: True, 2: True, 3: True, 4: True}
    assert not Event.objects.filter(verb__in=["parent.reimported", "pass.reimported"]).exists()
    assert Event.objects.count() == events + 1  # the upload's import_job.created, nothing else
    # the page shows the refusal with its code
    page = _client(role_users["annotator"]).get(f"/imports/{ImportJob.objects.latest('pk').pk}/")
    assert b"APPROVED_CONTENT_CHANGE_REFUSED" in page.content and b"refused" in page.content


@pytest.mark.parametrize("uploader", ["admin", "reviewing_annotator"])
def test_a_reviewer_or_admin_import_of_changed_content_applies_and_makes_the_approvals_stale(
    uploader, tmp_path, role_users, django_user_model, django_capture_on_commit_callbacks
):
    from annotation.selectors import stale_approvals, work_counts
    from tests.conftest import make_user

    role_users["reviewing_annotator"] = make_user(django_user_model, "both", "annotator", "source_reviewer")
    ws, pid = _approved_workspace(tmp_path, role_users["admin"], django_capture_on_commit_callbacks)
    run, issues = _compile(pid)
    assert run.counts["probes"] > 0 and issues == []  # compiles while the approvals hold
    _, tampered_stem, tampered_sha = _tamper_content(ws)

    report = _upload(role_users[uploader], ws, "kit_workspace", django_capture_on_commit_callbacks)

    row = report["rows"][0]
    assert row["outcome"] == "updated" and row["refused"] == []
    assert {"stem", "images", "status"} <= set(row["changed"])
    codes = [w["code"] for w in row["warnings"]]
    assert "APPROVALS_STALE" in codes
    # the file's approvals are for the documents only: they do not renew these
    assert codes.count("SOURCE_REVIEW_CONTENT_CHANGED") == 4
    parent = ParentProblem.objects.get(problem_id=pid)
    assert (parent.stem, parent.images.get().sha256, parent.status) == (
        tampered_stem,
        tampered_sha,
        "in_annotation",
    )
    assert _freshness_over_http(role_users["annotator"], pid) == {1: False, 2: False, 3: False, 4: False}
    shown = _client(role_users["source_reviewer"]).get(f"/api/parents/{pid}/passes/1/").data
    assert shown["approval_stale_reasons"] == ["problem"]
    assert shown["approved_parent_sha256"] != shown["parent_content_sha256"] == parent.content_sha256
    assert set(PassDocument.objects.values_list("status", flat=True)) == {"approved"}  # on record, stale
    assert stale_approvals().count() == 4 and work_counts()["stale"] == 1 and work_counts()["approved"] == 0
    _, issues = _compile(pid)
    assert [code for code, _ in issues] == ["SOURCE_REVIEW_HASH_STALE"]

    again = _upload(role_users["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)
    assert again["rows"][0]["outcome"] == "unchanged"  # the same file again renews nothing
    assert _freshness_over_http(role_users["annotator"], pid) == {1: False, 2: False, 3: False, 4: False}


def test_a_stale_approval_is_renewed_only_by_a_review_of_the_new_content(
    tmp_path, role_users, django_capture_on_commit_callbacks
):
    ws, pid = _approved_workspace(tmp_path, role_users["admin"], django_capture_on_commit_callbacks)
    seen = _client(role_users["source_reviewer"]).get(f"/api/parents/{pid}/passes/1/").data
    _tamper_content(ws)
    _upload(role_users["admin"], ws, "kit_workspace", django_capture_on_commit_callbacks)
    reviewer = _client(role_users["source_reviewer"])

    # a decision on what the reviewer saw before the change is refused
    outdated = reviewer.post(
        f"/api/parents/{pid}/passes/1/approve/",
        {"document_sha256": seen["document_sha256"], "parent_content_sha256": seen["parent_content_sha256"]},
        format="json",
    )
    assert outdated.status_code == 409 and outdated.data["code"] == "parent_changed", outdated.data
    assert not _freshness_over_http(role_users["annotator"], pid)[1]

    for n in (1, 2, 3, 4):
        current = reviewer.get(f"/api/parents/{pid}/passes/{n}/").data
        response = reviewer.post(
            f"/api/parents/{pid}/passes/{n}/approve/",
            {
                "document_sha256": current["document_sha256"],
                "parent_content_sha256": current["parent_content_sha256"],
            },
            format="json",
        )
        assert response.status_code == 200 and response.data["approval_is_fresh"], response.data
    assert ParentProblem.objects.get(problem_id=pid).status == "annotated"
    run, issues = _compile(pid)
    assert issues == [] and run.counts["probes"] > 0
    from probes.models import Probe

    assert any(
        TAMPER.strip() in json.dumps(p.raw_messages) for p in Probe.objects.filter(parent__problem_id=pid)
    )


# --- issue 25, item 3: source fields change only by an admin, and the report says what changed ---------------------


def _sources(user) -> dict[str, str]:
    return {s["name"]: s["license"] for s in _client(user).get("/api/sources/").data["results"]}


LICENSED = {**ROW, "license": "CC BY 4.0"}


def test_an_annotator_cannot_rewrite_a_source_licence_through_an_import(
    tmp_path, role_users, django_capture_on_commit_callbacks
):
    _upload(
        role_users["admin"],
        _problems_folder(tmp_path, "first", [LICENSED]),
        "problems",
        django_capture_on_commit_callbacks,
    )
    parent_before = ParentProblem.objects.values().get()
    events = Event.objects.count()

    report = _upload(
        role_users["annotator"],
        _problems_folder(tmp_path, "attack", [{**LICENSED, "license": "ATTACKER-LICENSE"}]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    row = report["rows"][0]
    assert row["outcome"] == "refused" and row["changed"] == []  # never "unchanged"
    assert [(r["code"], r["fields"]) for r in row["refused"]] == [
        ("SOURCE_CHANGE_REFUSED", ["source.license"])
    ]
    assert "ATTACKER-LICENSE" in row["refused"][0]["message"] and "CC BY 4.0" in row["refused"][0]["message"]
    assert report["sources"] == [
        {
            "name": "S",
            "outcome": "refused",
            "changed": {},
            "refused": {"license": {"stored": "CC BY 4.0", "file": "ATTACKER-LICENSE"}},
        }
    ]
    assert _sources(role_users["annotator"]) == {"S": "CC BY 4.0"}
    assert ParentProblem.objects.values().get() == parent_before
    assert Event.objects.count() == events + 1  # the upload's import_job.created only


def test_an_annotator_import_reports_exactly_what_changed_and_what_was_refused(
    tmp_path, role_users, django_capture_on_commit_callbacks
):
    _upload(
        role_users["admin"],
        _problems_folder(tmp_path, "first", [LICENSED]),
        "problems",
        django_capture_on_commit_callbacks,
    )
    rows = [
        {**LICENSED, "license": "ATTACKER-LICENSE", "domain": "kinematics"},  # allowed edit + refused licence
        {**LICENSED, "id": "moved", "source_id": "2"},  # a new problem of the same source
    ]
    _upload(
        role_users["admin"],
        _problems_folder(tmp_path, "second", rows[1:]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    report = _upload(
        role_users["annotator"],
        _problems_folder(
            tmp_path,
            "attack",
            [rows[0], {**rows[1], "source": "Attacker's own", "license": "ATTACKER-LICENSE"}],
        ),
        "problems",
        django_capture_on_commit_callbacks,
    )

    by_id = {row["problem_id"]: row for row in report["rows"]}
    assert (by_id["guess_me"]["outcome"], by_id["guess_me"]["changed"]) == ("updated", ["domain"])
    assert [r["fields"] for r in by_id["guess_me"]["refused"]] == [["source.license"]]
    assert (by_id["moved"]["outcome"], by_id["moved"]["changed"]) == ("refused", [])
    assert [(r["code"], r["fields"]) for r in by_id["moved"]["refused"]] == [
        ("SOURCE_CHANGE_REFUSED", ["source"])
    ]
    assert ParentProblem.objects.get(problem_id="guess_me").domain == "kinematics"
    assert ParentProblem.objects.get(problem_id="moved").source.name == "S"
    assert _sources(role_users["annotator"]) == {"S": "CC BY 4.0"}  # and no source was created for the move
    assert report["counts"]["refusals"] == 2


def test_an_admin_import_changes_a_source_licence_and_the_audit_log_records_it(
    tmp_path, role_users, django_capture_on_commit_callbacks
):
    _upload(
        role_users["admin"],
        _problems_folder(tmp_path, "first", [LICENSED]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    report = _upload(
        role_users["admin"],
        _problems_folder(tmp_path, "relicensed", [{**LICENSED, "license": "CC BY-SA 4.0"}]),
        "problems",
        django_capture_on_commit_callbacks,
    )

    row = report["rows"][0]
    assert (row["outcome"], row["changed"], row["refused"]) == ("updated", ["source.license"], [])
    assert report["sources"] == [
        {
            "name": "S",
            "outcome": "updated",
            "changed": {"license": {"before": "CC BY 4.0", "after": "CC BY-SA 4.0"}},
            "refused": {},
        }
    ]
    assert _sources(role_users["annotator"]) == {"S": "CC BY-SA 4.0"}
    event = Event.objects.get(verb="source.update")
    assert event.actor == role_users["admin"]
    assert event.before == {"license": "CC BY 4.0"}
    assert event.after["license"] == "CC BY-SA 4.0" and "import_job" in event.after
