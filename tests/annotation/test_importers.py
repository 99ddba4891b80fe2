from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from PIL import Image

from annotation import importers
from annotation.importers import (
    import_job_create,
    import_kit_workspace,
    import_problems_manifest,
    resolve_answer_type,
)
from annotation.models import ImportJob, ParentProblem, PassDocument, ProblemImage, Source
from annotation.tasks import import_job_run_task
from audit.models import Event
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from tests.factories import png_bytes

REAL = Path(__file__).resolve().parents[2] / "demo_data" / "real_physics"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def png_claiming_size(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares ``width``×``height``: the size check never decodes pixels."""
    buf = io.BytesIO()
    Image.new("1", (1, 1)).save(buf, format="PNG")
    data = bytearray(buf.getvalue())
    data[16:24] = struct.pack(">II", width, height)  # IHDR width and height
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))  # IHDR CRC over type + data
    return bytes(data)


def problem_row(problem_id: str, *, images: list | None = None, **overrides) -> dict:
    row = {
        "id": problem_id,
        "source": "Test Source",
        "source_id": f"src-{problem_id}",
        "license": "CC BY 4.0",
        "statement": "A block of mass 2 kg rests on a table.",
        "question": "What is its weight?",
        "options": None,
        "answer": "19.6 N",
        "solution": None,
        "images": images or [],
        "domain": "mechanics",
        "meta": {},
    }
    row.update(overrides)
    return row


def write_manifest(folder: Path, rows: list, name: str = "manifest.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def write_image(folder: Path, name: str, data: bytes) -> str:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "images" / name).write_bytes(data)
    return f"images/{name}"


def media_files(settings) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


# ---------------------------------------------------------------------------------------------
# Problems manifest


@pytest.mark.django_db
def test_real_fixtures_import_with_exact_images_and_reimport_changes_nothing():
    rows = [json.loads(line) for line in (REAL / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]

    report = import_problems_manifest(manifest_path=REAL / "manifest.jsonl")

    assert report.status == "succeeded"
    assert report.counts["created"] == 26
    assert ParentProblem.objects.count() == 26
    assert ProblemImage.objects.count() == 26
    for row in rows:
        parent = ParentProblem.objects.get(problem_id=row["id"])
        path = REAL / row["images"][0]
        with Image.open(path) as img:
            width, height = img.size
        image = parent.images.get()
        assert (image.image_id, image.ordinal) == ("img_0", 0)
        assert (image.width, image.height) == (width, height)
        assert image.sha256 == sha256_of(path)
        with image.file.open("rb") as fh:
            assert fh.read() == path.read_bytes()
        assert parent.source.name == row["source"]
        assert parent.source.license == row["license"]
        assert parent.source_sample_id == row["source_id"]
        assert parent.source_split == "default"
        assert parent.stem == row["statement"]
        assert parent.query == row["question"]
        assert parent.raw_question == f"{row['statement']}\n\n{row['question']}".strip()
        assert parent.answer == row["answer"]
        assert parent.solution == ""
        assert parent.options == []
        assert parent.language == "en"
        assert parent.meta == row["meta"]
        assert parent.version == 1
    assert ParentProblem.objects.get(problem_id="ostx_up_006").answer_type == "calc"  # "8.0 J"
    assert ParentProblem.objects.get(problem_id="ostx_up_001").answer_type == "short"
    events_before = Event.objects.count()
    assert events_before > 0

    again = import_problems_manifest(manifest_path=REAL / "manifest.jsonl")

    assert again.status == "succeeded"
    assert again.counts == {
        "rows": 26,
        "created": 0,
        "updated": 0,
        "unchanged": 26,
        "refused": 0,
        "rejected": 0,
        "not_imported": 0,
        "refusals": 0,
        "errors": 0,
        "warnings": 0,
    }
    assert Event.objects.count() == events_before
    assert set(ParentProblem.objects.values_list("version", flat=True)) == {1}
    assert ProblemImage.objects.count() == 26


@pytest.mark.django_db
def test_bad_images_import_nothing_and_every_bad_row_is_reported(tmp_path, settings):
    good = write_image(tmp_path, "good.png", png_bytes(40, 30))
    huge = write_image(tmp_path, "huge.png", png_claiming_size(20000, 20000))
    other = write_image(tmp_path, "other.png", png_bytes(10, 10))
    manifest = write_manifest(
        tmp_path,
        [
            problem_row("ok_1", images=[good]),
            problem_row("missing_1", images=["images/nope.png"]),
            problem_row("huge_1", images=[huge]),
            problem_row("badsha_1", images=[{"path": other, "sha256": "0" * 64}]),
        ],
    )

    report = import_problems_manifest(manifest_path=manifest)

    assert report.status == "failed"
    by_row = {r.row: r for r in report.rows}
    assert [(by_row[n].problem_id, by_row[n].outcome) for n in (1, 2, 3, 4)] == [
        ("ok_1", "not_imported"),
        ("missing_1", "rejected"),
        ("huge_1", "rejected"),
        ("badsha_1", "rejected"),
    ]
    assert [e["code"] for e in by_row[2].errors] == ["IMAGE_MISSING"]
    assert [e["code"] for e in by_row[3].errors] == ["IMAGE_TOO_LARGE_PIXELS"]
    assert [e["code"] for e in by_row[4].errors] == ["IMAGE_SHA256_MISMATCH"]
    assert report.as_dict()["counts"]["errors"] == 3
    assert ParentProblem.objects.count() == 0
    assert Source.objects.count() == 0
    assert Event.objects.count() == 0
    assert media_files(settings) == []


@pytest.mark.django_db
def test_malformed_json_line_is_reported_with_its_line_number(tmp_path):
    manifest = write_manifest(tmp_path, [problem_row("p1"), "", '{"id": "p2", "source": ', problem_row("p3")])

    report = import_problems_manifest(manifest_path=manifest)

    assert report.status == "failed"
    bad = [r for r in report.rows if r.errors]
    assert [(r.row, r.errors[0]["code"]) for r in bad] == [(3, "JSON_INVALID")]
    assert "Line 3" in bad[0].errors[0]["message"]
    assert [r.row for r in report.rows] == [1, 3, 4]
    assert ParentProblem.objects.count() == 0


@pytest.mark.django_db
def test_every_row_problem_is_collected(tmp_path):
    manifest = write_manifest(
        tmp_path,
        [
            problem_row("dup"),
            problem_row("dup"),
            problem_row("../bad id"),
            {k: v for k, v in problem_row("nosource").items() if k != "source"},
            problem_row("badlang", language="fr"),
            problem_row("escape", images=["../outside.png"]),
            problem_row("corrupt", images=[write_image(tmp_path, "corrupt.png", b"\x89PNG not really")]),
            "[1, 2]",
            '{"id": "x", "id": "y"}',
        ],
    )

    report = import_problems_manifest(manifest_path=manifest)

    codes = {r.row: [e["code"] for e in r.errors] for r in report.rows}
    assert codes == {
        1: [],
        2: ["PROBLEM_ID_DUPLICATE"],
        3: ["PROBLEM_ID_INVALID"],
        4: ["FIELD_MISSING"],
        5: ["LANGUAGE_UNRESOLVED"],
        6: ["IMAGE_PATH_INVALID"],
        7: ["IMAGE_CORRUPT"],
        8: ["ROW_NOT_OBJECT"],
        9: ["JSON_INVALID"],
    }
    assert ParentProblem.objects.count() == 0


@pytest.mark.django_db
def test_field_mapping_options_language_answer_type_and_image_objects(tmp_path):
    image = png_bytes(64, 48)
    path = write_image(tmp_path, "a.png", image)
    manifest = write_manifest(
        tmp_path,
        [
            problem_row(
                "choice_strings",
                options=["1 N", "2 N"],
                answer="A",
                statement="",
                images=[{"path": path, "sha256": hashlib.sha256(image).hexdigest()}, path],
            ),
            problem_row(
                "choice_labels",
                options=[{"label": "A", "text": "up"}, {"id": "B", "text": "down"}],
                meta={"answer_type": "multiple_choice", "source_split": "test"},
            ),
            problem_row(
                "zh_fill",
                statement="一个物体静止在桌面上。",
                question="求重力。",
                answer="mg",
                answer_type="fill",
                source_split="val",
            ),
            problem_row("calc_sci", answer="1.2 × 10^-3 kg·m/s"),
        ],
    )

    report = import_problems_manifest(manifest_path=manifest)

    assert report.status == "succeeded", report.as_dict()
    strings = ParentProblem.objects.get(problem_id="choice_strings")
    assert strings.options == [{"id": "A", "text": "1 N"}, {"id": "B", "text": "2 N"}]
    assert strings.answer_type == "choice"
    assert strings.raw_question == "What is its weight?"
    assert [(i.image_id, i.ordinal, i.width, i.height) for i in strings.images.all()] == [
        ("img_0", 0, 64, 48),
        ("img_1", 1, 64, 48),
    ]
    labels = ParentProblem.objects.get(problem_id="choice_labels")
    assert labels.options == [{"id": "A", "text": "up"}, {"id": "B", "text": "down"}]
    assert (labels.answer_type, labels.source_split) == ("choice", "test")
    zh = ParentProblem.objects.get(problem_id="zh_fill")
    assert (zh.language, zh.answer_type, zh.source_split) == ("zh", "fill", "val")
    assert ParentProblem.objects.get(problem_id="calc_sci").answer_type == "calc"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("8.0 J", "calc"),
        ("-3.5e4 m/s^2", "calc"),
        ("42", "calc"),
        ("0.12 m", "calc"),
        ("a. 8.66 N; b. 0.433 m", "short"),
        ("0 N and 0.012 Nm", "short"),
        ("mg cos θ", "short"),
    ],
)
def test_numeric_answers_are_calc(answer, expected):
    assert resolve_answer_type(declared="free_response", options=[], answer=answer) == expected


@pytest.mark.django_db
def test_changed_row_updates_parent_and_image_in_place(
    tmp_path, settings, django_capture_on_commit_callbacks
):
    path = write_image(tmp_path, "a.png", png_bytes(20, 20))
    manifest = write_manifest(tmp_path, [problem_row("p1", images=[path]), problem_row("p2")])
    import_problems_manifest(manifest_path=manifest)
    parent = ParentProblem.objects.get(problem_id="p1")
    image_pk = parent.images.get().pk
    old_file = Path(settings.MEDIA_ROOT) / parent.images.get().file.name
    events_before = Event.objects.count()

    write_image(tmp_path, "a.png", png_bytes(30, 10))
    write_manifest(
        tmp_path, [problem_row("p1", images=[path], question="What is its mass?"), problem_row("p2")]
    )
    with django_capture_on_commit_callbacks(execute=True):  # the old file goes only once the rows commit
        report = import_problems_manifest(manifest_path=manifest)

    assert [r.outcome for r in report.rows] == ["updated", "unchanged"]
    parent.refresh_from_db()
    assert parent.version == 2
    assert parent.query == "What is its mass?"
    image = parent.images.get()
    assert (image.pk, image.width, image.height) == (image_pk, 30, 10)
    assert not old_file.exists()
    event = Event.objects.filter(verb="parent.reimported").get()
    assert event.object_id == str(parent.pk)
    assert event.after["version"] == 2
    assert Event.objects.count() == events_before + 1
    assert ParentProblem.objects.get(problem_id="p2").version == 1


@pytest.mark.django_db
def test_image_changed_between_check_and_write_rolls_everything_back(tmp_path, settings, monkeypatch):
    first = write_image(tmp_path, "first.png", png_bytes(20, 20))
    second = write_image(tmp_path, "second.png", png_bytes(30, 30))
    manifest = write_manifest(
        tmp_path, [problem_row("p1", images=[first]), problem_row("p2", images=[second])]
    )
    real_prepare = importers.problems._prepare_problem_row

    def prepare_then_tamper(row, data, **kwargs):
        prepared = real_prepare(row, data, **kwargs)
        if data["id"] == "p2":  # after both rows were checked, the second file changes on disk
            (tmp_path / second).write_bytes(png_bytes(31, 30))
        return prepared

    monkeypatch.setattr(importers.problems, "_prepare_problem_row", prepare_then_tamper)

    report = import_problems_manifest(manifest_path=manifest)

    assert report.status == "failed"
    assert [e["code"] for e in report.errors] == ["IMAGE_CHANGED_DURING_IMPORT"]
    assert [r.outcome for r in report.rows] == ["not_imported", "not_imported"]
    assert ParentProblem.objects.count() == 0
    assert Event.objects.count() == 0
    assert media_files(settings) == []  # the first row's stored file was removed again


@pytest.mark.django_db
def test_job_progress_and_report_are_recorded(tmp_path):
    manifest = write_manifest(tmp_path, [problem_row("p1"), problem_row("p2")])
    job = ImportJob.objects.create(kind="problems")

    import_problems_manifest(manifest_path=manifest, job=job)

    job.refresh_from_db()
    assert (job.status, job.total, job.done) == ("succeeded", 2, 2)
    assert job.finished_at is not None
    assert job.report["counts"]["created"] == 2
    assert [r["outcome"] for r in job.report["rows"]] == ["created", "created"]


@pytest.mark.django_db
def test_missing_manifest_fails_with_a_file_level_error(tmp_path):
    report = import_problems_manifest(manifest_path=tmp_path / "none.jsonl")
    assert report.status == "failed"
    assert [e["code"] for e in report.errors] == ["MANIFEST_MISSING"]


# ---------------------------------------------------------------------------------------------
# Kit workspace

PID = "kit_demo_0001"


def kit_passes() -> dict[int, dict]:
    visual = {
        "id": "v001",
        "type": "text_glyph",
        "subtype": "label",
        "text": "m",
        "image_id": "img_0",
        "bbox_1000": [70, 200, 115, 280],
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }
    body = {
        "id": "p001",
        "type": "body",
        "subtype": "block",
        "name": "block",
        "symbol": "m",
        "visual_anchor_ids": ["v001"],
        "text_mention_ids": [],
        "provenance": ["IMAGE"],
        "confidence": "high",
    }
    label_binding = {
        "id": "b001",
        "type": "labels",
        "from_id": "v001",
        "to_id": "p001",
        "provenance": ["IMAGE"],
        "evidence_visual_ids": ["v001"],
        "evidence_mention_ids": [],
    }
    mentions = [
        {"id": "m001", "section": "stem", "quote": "block", "occurrence": 1, "role": "entity"},
        {"id": "m002", "section": "query", "quote": "acceleration", "occurrence": 1, "role": "query_target"},
    ]
    target = {
        "mention_id": "m002",
        "target_kind": "acceleration",
        "target_symbol_latex": "a",
        "target_node_ids": ["p001"],
        "location_node_ids": [],
        "time_or_event_node_ids": [],
    }
    return {
        1: {"problem_id": PID, "visual_nodes": [visual], "ambiguities": []},
        2: {"problem_id": PID, "physical_nodes": [body], "bindings": [label_binding], "ambiguities": []},
        3: {
            "problem_id": PID,
            "new_or_updated_physical_nodes": [],
            "text_mentions": mentions,
            "quantities": [],
            "bindings": [],
            "constraints": [],
            "query_target": target,
            "ambiguities": [],
        },
        4: {
            "schema_version": "physgraph_obs_v0.1",
            "problem_id": PID,
            "domain": "mechanics",
            "visual_nodes": [visual],
            "physical_nodes": [body],
            "text_mentions": mentions,
            "quantities": [],
            "bindings": [label_binding],
            "relations": [],
            "constraints": [],
            "query_target": target,
            "ambiguities": [],
        },
    }


def make_kit_workspace(
    root: Path, *, stale: tuple[int, ...] = (), answers: bool = False, excluded: bool = False
) -> Path:
    ws = root / "ws"
    image = png_bytes(320, 200)
    (ws / "dataset" / "images").mkdir(parents=True)
    (ws / "dataset" / "images" / "diagram.png").write_bytes(image)
    (ws / "workspace_config.json").write_text(
        json.dumps({"dataset_dir": "dataset", "path_base": "workspace"})
    )
    row = {
        "problem_id": PID,
        "language": "en",
        "images": [
            {
                "image_id": "img_0",
                "path": "images/diagram.png",
                "width": 320,
                "height": 200,
                "sha256": hashlib.sha256(image).hexdigest(),
            }
        ],
        "raw_question": "A block slides on a ramp. Find its acceleration.",
        "segmentation": {"confidence": "high", "method": "manual", "review_status": "approved"},
        "segments": {
            "stem": "A block slides on a ramp.",
            "query": "Find its acceleration.",
            "options": [{"label": "A", "text": "g"}, {"label": "B", "text": "g/2"}],
        },
        "source_dataset": "KitDemo",
        "source_split": "dev",
        "source_sample_id": "0001",
        "workspace_schema_version": 1,
    }
    write_manifest(ws / "blind", [row])
    stages = {}
    for pass_no, document in kit_passes().items():
        folder = ws / "passes" / f"pass{pass_no}"
        folder.mkdir(parents=True)
        (folder / f"{PID}.json").write_bytes(json.dumps(document).encode())
        sha = "f" * 64 if pass_no in stale else digest(document)
        stages[f"pass{pass_no}"] = {"status": "approved", "document_sha256": sha, "reviewer": "Kit Reviewer"}
    problem_state: dict = {"stages": stages}
    if excluded:
        problem_state["exclusion"] = {"status": "excluded", "reason": "duplicate"}
    (ws / "reviews").mkdir()
    (ws / "reviews" / "state.json").write_text(json.dumps({"problems": {PID: problem_state}}))
    if answers:
        (ws / "private").mkdir()
        (ws / "private" / "answers.jsonl").write_text(
            json.dumps(
                {
                    "problem_id": PID,
                    "answer": "B",
                    "solution": "Resolve along the ramp.",
                    "answer_type": "choice",
                    "domain": "mechanics",
                }
            )
            + "\n"
        )
    return ws


@pytest.mark.django_db
def test_kit_workspace_imports_approved_passes_when_hashes_match(tmp_path):
    ws = make_kit_workspace(tmp_path)

    report = import_kit_workspace(workspace=ws)

    assert report.status == "succeeded", report.as_dict()
    assert report.rows[0].outcome == "created"
    parent = ParentProblem.objects.get(problem_id=PID)
    assert (parent.source.name, parent.source_split, parent.source_sample_id) == ("KitDemo", "dev", "0001")
    assert parent.options == [{"id": "A", "text": "g"}, {"id": "B", "text": "g/2"}]
    assert (parent.answer, parent.answer_type, parent.domain) == ("", "choice", "mechanics")
    assert parent.segmentation["method"] == "manual"
    assert parent.meta == {"workspace_schema_version": 1}
    assert parent.status == "annotated"
    assert [(i.image_id, i.width, i.height) for i in parent.images.all()] == [("img_0", 320, 200)]
    docs = list(PassDocument.objects.filter(parent=parent).order_by("pass_no"))
    assert [d.pass_no for d in docs] == [1, 2, 3, 4]
    assert not get_user_model().objects.filter(username="Kit Reviewer").exists()  # a name, never an account
    for doc, document in zip(docs, kit_passes().values(), strict=True):
        assert doc.document == document
        assert doc.document_sha256 == digest(document)
        assert (doc.status, doc.approved_sha256, doc.approved_by, doc.version) == (
            "approved",
            digest(document),
            None,  # a management command: the server's operator, no account
            1,
        )
        assert (doc.approval_origin, doc.approval_provenance, doc.approver_label) == (
            "import",
            "Kit Reviewer",
            "Kit Reviewer",
        )
        assert doc.approval_is_fresh
    assert report.rows[0].warnings == []  # the hand-written documents pass the pass validator too

    events_before = Event.objects.count()
    again = import_kit_workspace(workspace=ws)
    assert [r.outcome for r in again.rows] == ["unchanged"]
    assert Event.objects.count() == events_before
    assert set(PassDocument.objects.values_list("version", flat=True)) == {1}


@pytest.mark.django_db
def test_kit_stale_review_hash_imports_pass_as_submitted_with_a_warning(tmp_path):
    ws = make_kit_workspace(tmp_path, stale=(3,), answers=True)

    report = import_kit_workspace(workspace=ws)

    assert report.status == "succeeded", report.as_dict()
    stale = [w for w in report.rows[0].warnings if w["code"] == "SOURCE_REVIEW_HASH_STALE"]
    assert [w["pass_no"] for w in stale] == [3]
    statuses = dict(PassDocument.objects.values_list("pass_no", "status"))
    assert statuses == {1: "approved", 2: "approved", 3: "submitted", 4: "approved"}
    pass3 = PassDocument.objects.get(pass_no=3)
    assert (pass3.approved_sha256, pass3.approved_by) == ("", None)
    parent = ParentProblem.objects.get(problem_id=PID)
    assert parent.status == "in_annotation"
    assert (parent.answer, parent.solution, parent.answer_type) == ("B", "Resolve along the ramp.", "choice")


@pytest.mark.django_db
def test_kit_reimport_of_a_changed_pass_bumps_its_version_and_keeps_private_fields(tmp_path):
    ws = make_kit_workspace(tmp_path, answers=True)
    import_kit_workspace(workspace=ws)
    shutil.rmtree(ws / "private")  # the kit's own workspaces carry no answers
    pass1 = kit_passes()[1]
    pass1["visual_nodes"][0]["text"] = "M"
    (ws / "passes" / "pass1" / f"{PID}.json").write_text(json.dumps(pass1))

    report = import_kit_workspace(workspace=ws)

    assert [r.outcome for r in report.rows] == ["updated"]
    assert [w["pass_no"] for w in report.rows[0].warnings if w["code"] == "SOURCE_REVIEW_HASH_STALE"] == [1]
    doc = PassDocument.objects.get(pass_no=1)
    assert (doc.version, doc.status, doc.document_sha256) == (2, "submitted", digest(pass1))
    parent = ParentProblem.objects.get(problem_id=PID)
    # the content of the parent did not change (only its workflow status follows the passes)
    assert (parent.answer, parent.status, parent.version) == ("B", "in_annotation", 1)


@pytest.mark.django_db
def test_kit_excluded_problem_is_imported_as_excluded(tmp_path):
    report = import_kit_workspace(workspace=make_kit_workspace(tmp_path, excluded=True))
    assert report.status == "succeeded"
    assert ParentProblem.objects.get(problem_id=PID).status == "excluded"


@pytest.mark.django_db
def test_kit_pass_validator_issues_are_warnings_and_the_document_is_still_imported(tmp_path):
    ws = make_kit_workspace(tmp_path)
    pass1 = kit_passes()[1]
    pass1["visual_nodes"][0]["bbox_1000"] = [900, 200, 100, 280]  # x1 > x2
    (ws / "passes" / "pass1" / f"{PID}.json").write_text(json.dumps(pass1))

    report = import_kit_workspace(workspace=ws)

    assert report.status == "succeeded"
    pass1_warnings = [w for w in report.rows[0].warnings if w["pass_no"] == 1]
    assert {w["code"] for w in pass1_warnings} >= {"SOURCE_REVIEW_HASH_STALE"}
    validator_warnings = [w for w in pass1_warnings if w["code"] != "SOURCE_REVIEW_HASH_STALE"]
    assert validator_warnings and all(w["path"].startswith("visual_nodes") for w in validator_warnings)
    doc = PassDocument.objects.get(pass_no=1)
    assert (doc.document, doc.status) == (pass1, "draft")  # stored, but it cannot be submitted as it is


@pytest.mark.django_db
def test_kit_structural_problems_import_nothing(tmp_path):
    ws = make_kit_workspace(tmp_path)
    (ws / "passes" / "pass2" / f"{PID}.json").write_text('{"problem_id": "x", "problem_id": "y"}')
    (ws / "dataset" / "images" / "diagram.png").write_bytes(png_bytes(321, 200))
    manifest = ws / "blind" / "manifest.jsonl"
    row = json.loads(manifest.read_text())
    row["language"] = "de"
    manifest.write_text(json.dumps(row) + "\n")

    report = import_kit_workspace(workspace=ws)

    assert report.status == "failed"
    codes = sorted(e["code"] for e in report.rows[0].errors)
    assert codes == [
        "IMAGE_SHA256_MISMATCH",
        "IMAGE_SIZE_MISMATCH",
        "LANGUAGE_UNRESOLVED",
        "PASS_JSON_INVALID",
    ]
    assert ParentProblem.objects.count() == 0
    assert PassDocument.objects.count() == 0
    assert get_user_model().objects.filter(username="Kit Reviewer").count() == 0


@pytest.mark.django_db
def test_kit_dataset_root_option_and_missing_manifest(tmp_path):
    ws = make_kit_workspace(tmp_path)
    moved = tmp_path / "elsewhere"
    shutil.move(ws / "dataset", moved)
    assert import_kit_workspace(workspace=ws).status == "failed"

    assert import_kit_workspace(workspace=ws, dataset_root=moved).status == "succeeded"

    (ws / "blind" / "manifest.jsonl").unlink()
    report = import_kit_workspace(workspace=ws, dataset_root=moved)
    assert [e["code"] for e in report.errors] == ["MANIFEST_MISSING"]


# ---------------------------------------------------------------------------------------------
# Uploads, the task, the commands


def zip_folder(folder: Path, *, prefix: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buf.getvalue()


def real_subset(tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "subset"
    rows = (REAL / "manifest.jsonl").read_text(encoding="utf-8").splitlines()[:count]
    (folder / "images").mkdir(parents=True)
    for line in rows:
        for image in json.loads(line)["images"]:
            shutil.copy(REAL / image, folder / image)
    (folder / "manifest.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


@pytest.mark.django_db
def test_zip_upload_of_problems_runs_to_succeeded(tmp_path, annotator, django_capture_on_commit_callbacks):
    upload = SimpleUploadedFile(
        "problems.zip", zip_folder(real_subset(tmp_path), prefix="subset/"), content_type="application/zip"
    )

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = import_job_create(kind="problems", upload=upload, actor=annotator)

    assert len(callbacks) == 1
    job.refresh_from_db()
    assert (job.status, job.total, job.done, job.created_by) == ("succeeded", 3, 3, annotator)
    assert job.report["counts"]["created"] == 3
    assert job.original_name == "problems.zip"
    assert ParentProblem.objects.count() == 3
    assert Event.objects.filter(verb="parent.imported", actor=annotator).count() == 3


@pytest.mark.django_db
def test_zip_upload_of_a_kit_workspace_runs_to_succeeded(
    tmp_path, annotator, django_capture_on_commit_callbacks
):
    ws = make_kit_workspace(tmp_path)
    upload = SimpleUploadedFile("kit.zip", zip_folder(ws, prefix="ws/"))

    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_create(kind="kit_workspace", upload=upload, actor=annotator)

    job.refresh_from_db()
    assert job.status == "succeeded", job.report
    # an annotator cannot approve through a file: the review state arrives as submitted documents
    assert sorted(PassDocument.objects.values_list("status", flat=True)) == ["submitted"] * 4
    codes = [w["code"] for w in job.report["rows"][0]["warnings"]]
    assert codes.count("SOURCE_REVIEW_NOT_IMPORTED") == 4


@pytest.mark.django_db
def test_kit_upload_pointing_outside_the_archive_fails(
    tmp_path, annotator, django_capture_on_commit_callbacks
):
    ws = make_kit_workspace(tmp_path)
    (ws / "workspace_config.json").write_text(json.dumps({"dataset_dir": "../../.."}))
    upload = SimpleUploadedFile("kit.zip", zip_folder(ws))

    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_create(kind="kit_workspace", upload=upload, actor=annotator)

    job.refresh_from_db()
    assert job.status == "failed"
    assert "DATASET_ROOT_OUTSIDE_UPLOAD" in [e["code"] for e in job.report["errors"]]
    assert ParentProblem.objects.count() == 0


def zip_with(entries: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, "/etc/passwd")
    return buf.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("evil.zip", zip_with({"manifest.jsonl": b"", "../../evil.txt": b"x"}), "import_zip_unsafe_path"),
        ("evil.zip", zip_with({"manifest.jsonl": b"", "/etc/evil": b"x"}), "import_zip_unsafe_path"),
        ("link.zip", zip_with({"manifest.jsonl": b""}, symlink="images/link.png"), "import_zip_symlink"),
        ("notes.txt", b"hello", "import_not_zip"),
        ("fake.zip", b"not a zip at all", "import_not_zip"),
        ("empty.zip", zip_with({"readme.txt": b"x"}), "import_zip_layout"),
    ],
)
def test_unsafe_or_wrong_uploads_are_refused(name, data, code, annotator, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(ApplicationError) as exc,
    ):
        import_job_create(kind="problems", upload=SimpleUploadedFile(name, data), actor=annotator)

    assert exc.value.code == code
    assert callbacks == []
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_oversized_and_bomb_uploads_are_refused(settings, annotator):
    settings.PHYSALIGN_IMPORT_MAX_BYTES = 1000
    big = SimpleUploadedFile("big.zip", b"0" * 1001)
    with pytest.raises(ApplicationError) as exc:
        import_job_create(kind="problems", upload=big, actor=annotator)
    assert (exc.value.code, exc.value.status_code) == ("import_too_large", 413)

    settings.PHYSALIGN_IMPORT_MAX_BYTES = 100_000
    settings.PHYSALIGN_IMPORT_MAX_UNCOMPRESSED_BYTES = 400_000
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.jsonl", b"\n" * 500_000)  # compresses to a few hundred bytes
    with pytest.raises(ApplicationError) as exc:
        import_job_create(
            kind="problems", upload=SimpleUploadedFile("bomb.zip", bomb.getvalue()), actor=annotator
        )
    assert exc.value.code == "import_zip_too_large"
    assert ImportJob.objects.count() == 0


@pytest.mark.django_db
def test_task_marks_job_failed_on_unexpected_error(
    tmp_path, annotator, monkeypatch, django_capture_on_commit_callbacks
):
    def explode(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(importers.jobs, "import_problems_manifest", explode)
    upload = SimpleUploadedFile("problems.zip", zip_folder(real_subset(tmp_path, 1)))
    with django_capture_on_commit_callbacks(execute=True):
        job = import_job_create(kind="problems", upload=upload, actor=annotator)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.finished_at is not None
    assert job.report["errors"][-1]["code"] == "IMPORT_CRASHED"
    assert "disk on fire" in job.report["errors"][-1]["message"]

    import_job_run_task(job.pk)  # a re-delivery leaves a finished job alone
    job.refresh_from_db()
    assert job.status == "failed"


@pytest.mark.django_db
def test_import_problems_command(tmp_path):
    out = io.StringIO()
    call_command("import_problems", str(real_subset(tmp_path, 2) / "manifest.jsonl"), stdout=out)
    text = out.getvalue()
    assert "row 1 ostx_up_001: created" in text
    assert "Imported 2 rows: 2 created, 0 updated, 0 unchanged; 0 warnings." in text

    bad = write_manifest(tmp_path / "bad", [problem_row("p1", images=["images/missing.png"])])
    out = io.StringIO()
    with pytest.raises(CommandError, match="Nothing imported: 1 errors in 1 of 1 rows"):
        call_command("import_problems", str(bad), stdout=out)
    assert "ERROR IMAGE_MISSING" in out.getvalue()
    assert ParentProblem.objects.count() == 2


@pytest.mark.django_db
def test_import_kit_workspace_command(tmp_path):
    ws = make_kit_workspace(tmp_path, stale=(2,))
    moved = tmp_path / "data"
    shutil.move(ws / "dataset", moved)
    out = io.StringIO()

    call_command("import_kit_workspace", str(ws), "--dataset-root", str(moved), stdout=out)

    assert f"row 1 {PID}: created" in out.getvalue()
    assert "WARNING SOURCE_REVIEW_HASH_STALE" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("import_kit_workspace", str(tmp_path / "nowhere"), stdout=io.StringIO())
