"""A Kit workspace problem keeps the Kit's own source hashes: pass files by their bytes, manifest and review
re-serialized as the Kit writes them; they give way to our canonical hashes as soon as the source changes."""

from __future__ import annotations

import hashlib
import json

import pytest

from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem, PassDocument
from annotation.selectors import kit_source_hashes, workspace_documents
from annotation.services import pass_document_save
from kit.canonical import bytes_digest, write_json_bytes
from probes.compiler.source_index import build_source_index
from probes.selectors import parent_source_for

from .test_importers import PID, make_kit_workspace

pytestmark = pytest.mark.django_db


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_kits_file_hashes_reach_the_compilers_key(tmp_path):
    ws = make_kit_workspace(tmp_path)  # pass files written by json.dumps: not our canonical form
    assert import_kit_workspace(workspace=ws).status == "succeeded"
    parent = ParentProblem.objects.get(problem_id=PID)
    files = {f"pass{n}": _sha(ws / "passes" / f"pass{n}" / f"{PID}.json") for n in (1, 2, 3, 4)}
    row = json.loads((ws / "blind" / "manifest.jsonl").read_text("utf-8").splitlines()[0])
    review = json.loads((ws / "reviews" / "state.json").read_text("utf-8"))["problems"][PID]
    expected = {
        **files,
        "manifest": bytes_digest(write_json_bytes(row)),
        "review": bytes_digest(write_json_bytes(review)),
    }

    source = parent_source_for(parent)
    assert source.source_file_hashes == expected
    index = build_source_index(source)
    assert index.source_hashes == dict(sorted(expected.items()))
    assert index.sha == files["pass4"]  # every source record and anchor id names the Pass 4 file by its bytes
    canonical = bytes_digest(write_json_bytes(source.passes["pass4"]))
    assert canonical != files["pass4"]


def test_an_edited_pass_falls_back_to_canonical_hashes_and_drops_manifest_and_review(
    tmp_path, django_user_model
):
    ws = make_kit_workspace(tmp_path)
    import_kit_workspace(workspace=ws)
    parent = ParentProblem.objects.get(problem_id=PID)
    doc = PassDocument.objects.get(parent=parent, pass_no=2)
    edited = {**doc.document}
    edited["physical_nodes"] = [
        {**edited["physical_nodes"][0], "name": "Renamed"},
        *edited["physical_nodes"][1:],
    ]
    user = django_user_model.objects.create_user("ann_h", password="x")
    pass_document_save(parent=parent, pass_no=2, document=edited, actor=user, expected_version=doc.version)

    hashes = kit_source_hashes(parent=parent, passes=workspace_documents(parent=parent))
    assert set(hashes) == {
        "pass1",
        "pass3",
        "pass4",
    }  # pass 2 changed; manifest and review no longer describe it
