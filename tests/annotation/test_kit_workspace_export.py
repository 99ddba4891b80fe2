"""The annotation work leaves as a Kit source workspace and comes back unchanged (issue 29 item 1).

Round trip, byte for byte: export → ``import_kit_workspace`` into a fresh database (``flush``) → export again gives
identical files, on a generated workspace of 40 problems and on the staged demo. A Kit workspace imported and
exported gives back the Kit's own files (so imported problems keep the Kit's file hashes), and the reimported
problems compile to the same probes.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from annotation.demo import generate_workspace
from annotation.exporters import export_kit_workspace
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem, PassDocument, Source
from annotation.services import pass_document_approve
from kit.canonical import digest
from physalign_site.errors import ApplicationError
from probes.models import Probe
from probes.services import compile_run_create, compile_run_execute

pytestmark = pytest.mark.django_db

KIT_FILES = ("workspace_config.json", "blind/manifest.jsonl", "reviews/state.json")


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _fresh_database() -> None:
    """Every table emptied (TRUNCATE) and the post-migrate rows made again, as in a new database."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's transaction holds deferred checks
    call_command("flush", "--no-input", verbosity=0)
    assert not ParentProblem.objects.exists() and not Source.objects.exists()


def _compiled() -> list[tuple]:
    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    assert run.status == "succeeded", run.error
    return sorted(
        (
            p.logical_probe_id,
            p.parent.problem_id,
            p.interface,
            p.split,
            p.review_target_root,
            digest(p.raw_messages),
        )
        for p in Probe.objects.select_related("parent")
    )


def _import(ws: Path) -> None:
    report = import_kit_workspace(workspace=ws, actor=None)
    assert report.succeeded, report.text_lines()


def test_a_kit_workspace_goes_out_as_it_came_in_and_round_trips(tmp_path):
    ws = tmp_path / "ws"
    generate_workspace(ws, count=40, seed=2027)
    _import(ws)
    first = _compiled()
    assert len(first) > 100

    out1 = tmp_path / "out1"
    summary = export_kit_workspace(output=out1)
    assert summary.as_dict() == {
        "problems": 40,
        "images": 40,
        "pass_files": 160,
        "approved_stages": 160,
        "rejected_stages": 0,
        "excluded": 0,
        "files": 40 + 160 + 6,
        "bytes": sum((out1 / f).stat().st_size for f in _files(out1)),
        "skipped_not_approved": 0,
    }
    # the Kit's own files come back byte for byte: the manifest, the review state, every pass file and image
    original, exported = _files(ws), _files(out1)
    assert {f: exported[f] for f in original} == original
    assert set(exported) - set(original) == {"sources.json", "FILE_MANIFEST.json"}
    manifest = json.loads((out1 / "FILE_MANIFEST.json").read_text())
    assert manifest == {f: h for f, h in exported.items() if f != "FILE_MANIFEST.json"}

    _fresh_database()
    _import(out1)
    out2 = tmp_path / "out2"
    export_kit_workspace(output=out2)
    assert _files(out2) == exported
    # the Kit's file hashes are kept, so the reimported problems compile to the same probes
    assert _compiled() == first


def test_the_staged_demo_round_trips_byte_for_byte(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("load_demo", "--count", "12", "--stage", stdout=io.StringIO())
    statuses = set(PassDocument.objects.values_list("status", flat=True))
    assert {"approved", "submitted", "rejected"} <= statuses, statuses
    # a source reviewer approves a submitted pass in the app: its stage names them
    reviewer = get_user_model().objects.get(username="source_reviewer")
    waiting = (
        PassDocument.objects.filter(status="submitted").order_by("parent__problem_id", "pass_no").first()
    )
    pass_document_approve(
        doc=waiting, actor=reviewer, document_sha256=waiting.document_sha256, note="checked"
    )
    app_approvals = PassDocument.objects.filter(
        status="approved", approval_origin=PassDocument.ApprovalOrigin.REVIEW
    ).select_related("approved_by", "parent")
    assert app_approvals.exists()
    licences = dict(Source.objects.values_list("name", "license"))
    parents = ParentProblem.objects.count()

    out1 = tmp_path / "out1"
    summary = export_kit_workspace(output=out1)
    assert summary.problems == parents
    state = json.loads((out1 / "reviews/state.json").read_text())["problems"]
    for doc in app_approvals:
        if doc.approval_is_fresh:
            stage = state[doc.parent.problem_id]["stages"][f"pass{doc.pass_no}"]
            assert stage["reviewer"] == doc.approved_by.username  # a name, never an account id
            assert stage["document_sha256"] == doc.document_sha256 == digest(doc.document)
    assert state[waiting.parent.problem_id]["stages"][f"pass{waiting.pass_no}"] == {
        "status": "approved",
        "document_sha256": waiting.document_sha256,
        "reviewer": "source_reviewer",
        "note": "checked",
    }
    stored_answers = dict(ParentProblem.objects.values_list("problem_id", "answer"))
    rows = [json.loads(line) for line in (out1 / "private/answers.jsonl").read_text().splitlines()]
    assert {r["problem_id"]: r["answer"] for r in rows} == stored_answers
    manifest = (out1 / "blind/manifest.jsonl").read_text()
    assert all(
        a not in manifest for a in stored_answers.values() if len(a) > 12
    )  # the blind manifest is blind

    _fresh_database()
    _import(out1)
    assert dict(Source.objects.values_list("name", "license")) == licences
    assert ParentProblem.objects.count() == parents
    out2 = tmp_path / "out2"
    export_kit_workspace(output=out2)
    assert _files(out2) == _files(out1)


def test_selection_and_approved_only(tmp_path):
    ws = tmp_path / "ws"
    generate_workspace(ws, count=4, seed=5)
    _import(ws)
    pids = sorted(ParentProblem.objects.values_list("problem_id", flat=True))
    doc = PassDocument.objects.get(parent__problem_id=pids[0], pass_no=3)
    doc.status = PassDocument.Status.REJECTED
    doc.review_note = "the tension's owner is the rope"
    doc.save()

    out = tmp_path / "approved"
    summary = export_kit_workspace(output=out, approved_only=True)
    assert summary.skipped_not_approved == [pids[0]]
    rows = [
        json.loads(line)["problem_id"] for line in (out / "blind/manifest.jsonl").read_text().splitlines()
    ]
    assert rows == pids[1:]

    out = tmp_path / "some"
    export_kit_workspace(output=out, problem_ids=[pids[0], pids[2]])
    state = json.loads((out / "reviews/state.json").read_text())["problems"]
    assert sorted(state) == [pids[0], pids[2]]
    assert state[pids[0]]["stages"]["pass3"] == {
        "status": "rejected",
        "document_sha256": doc.document_sha256,
        "note": "the tension's owner is the rope",
    }
    assert sorted(p.name for p in (out / "passes/pass1").iterdir()) == [f"{pids[0]}.json", f"{pids[2]}.json"]

    with pytest.raises(ApplicationError) as refused:
        export_kit_workspace(output=tmp_path / "x", problem_ids=["nope"])
    assert refused.value.code == "PARENT_UNKNOWN"
    with pytest.raises(ApplicationError) as refused:
        export_kit_workspace(output=tmp_path / "x", source="no such source")
    assert refused.value.code == "SOURCE_UNKNOWN"
    assert not (tmp_path / "x").exists()
    with pytest.raises(ApplicationError) as refused:
        export_kit_workspace(output=out)  # not empty: never overwritten
    assert refused.value.code == "OUTPUT_NOT_EMPTY"


def test_the_command(tmp_path):
    ws = tmp_path / "ws"
    generate_workspace(ws, count=2, seed=3)
    _import(ws)
    out = io.StringIO()
    call_command("export_kit_workspace", "--output", str(tmp_path / "out"), stdout=out, stderr=io.StringIO())
    assert (
        "Wrote 2 problems (2 images, 8 pass files, 8 approved and 0 rejected stages, 0 excluded)"
        in out.getvalue()
    )
    with pytest.raises(CommandError, match="already exists"):
        call_command("export_kit_workspace", "--output", str(tmp_path / "out"), stdout=io.StringIO())
