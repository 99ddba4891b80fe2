"""Compile runs through the database, releases (export, validate, tamper refusals, import), commands."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from physalign_site.errors import ApplicationError
from probes.models import CompileIssue, CompileRun, Membership, Probe, PromptTemplateSet, Release
from probes.releases import release_export, release_import, release_validate, seal_directory
from probes.services import compile_run_create, compile_run_execute, probe_record_review

from . import kit_demo as demo
from .conftest import make_demo_parent
from .prompt_fixture import KIT_SHAPED_PROMPTS, KIT_SHAPED_TASKS
from .test_release_kit_layout import individual

pytestmark = pytest.mark.django_db


def _compile_all():
    run = compile_run_create(actor=None, seed=2027, enqueue=False)
    return compile_run_execute(run_id=run.pk)


def _approve_all():
    for probe in Probe.objects.exclude(state=Probe.State.SUPERSEDED):
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )


def test_compile_run_persists_the_kits_probes(demo_parent):
    run = _compile_all()
    assert run.status == CompileRun.Status.SUCCEEDED
    assert run.counts["probes"] == 3 and run.counts["blocked_groups"] == 0
    assert sorted(Probe.objects.values_list("logical_probe_id", flat=True)) == sorted(demo.EXPECTED)
    t02 = Probe.objects.get(logical_probe_id=demo.T02)
    assert t02.key.gold_aliases == ["E2"]
    assert [v.view_id for v in t02.views.all()] == ["V1", "V2", "V3"]
    assert t02.split == Probe.Split.DEVELOPMENT  # one parent: all of it is the development reservation
    assert Membership.objects.get(parent=demo_parent).dedup_state == "representative"
    assert set(run.timings) == {"compile_s", "render_s", "db_s", "load_s", "store_s"}


def test_compile_never_reads_the_answer(demo_parent):
    _compile_all()
    for probe in Probe.objects.all():
        blob = json.dumps([probe.raw_messages, probe.gold_messages, probe.raw_view, probe.key.key])
        assert "SECRET-ANSWER" not in blob and "SECRET-SOLUTION" not in blob


def test_recompile_keeps_ids_and_review_state_when_content_is_unchanged(demo_parent):
    _compile_all()
    _approve_all()
    _compile_all()
    assert set(Probe.objects.values_list("state", flat=True)) == {"approved"}


def test_a_stale_pass_becomes_a_compile_issue(demo_parent):
    doc = demo_parent.passes.get(pass_no=4)
    doc.document = {**doc.document, "domain": "mixed"}
    doc.document_sha256 = "0" * 64
    doc.save()
    run = (
        _compile_all()
        if False
        else compile_run_execute(
            run_id=compile_run_create(actor=None, parent_ids=[demo_parent.problem_id], enqueue=False).pk
        )
    )
    assert list(CompileIssue.objects.filter(run=run).values_list("code", flat=True)) == [
        "SOURCE_REVIEW_HASH_STALE"
    ]
    assert Probe.objects.count() == 0


def test_review_with_a_stale_root_is_refused(demo_parent):
    _compile_all()
    probe = Probe.objects.get(logical_probe_id=demo.T02)
    with pytest.raises(ApplicationError) as error:
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty",
            review_target_root="0" * 64,
        )
    assert error.value.code == "AUDIT_STALE"
    probe.refresh_from_db()
    assert probe.state == "pending_review"


@pytest.fixture
def release_dir(demo_parent, tmp_path):
    _compile_all()
    _approve_all()
    probes = list(Probe.objects.order_by("logical_probe_id"))
    release = release_export(
        split="development",
        output=tmp_path / "rel",
        actor=None,
        synthetic_example=True,
        authorization=individual(probes),
    )
    return release, tmp_path / "rel"


def test_release_layout_counts_and_validation(release_dir):
    release, root = release_dir
    assert release.counts == {
        "B": {"probes": 3, "mothers": 1},
        "L": {"probes": 1, "mothers": 1},
        "P": {"probes": 2, "mothers": 1},
    }
    assert sorted(p.name for p in (root / "public").iterdir()) == ["images", "qa_gold.json", "qa_raw.json"]
    raw = json.loads((root / "public" / "qa_raw.json").read_text())
    assert [r["logical_probe_id"] for r in raw] == sorted(demo.EXPECTED)
    assert all(
        set(r)
        == {
            "schema_version",
            "instance_id",
            "logical_probe_id",
            "task_id",
            "interface",
            "language",
            "split",
            "condition",
            "input",
        }
        for r in raw
    )
    assert release_validate(root).errors == []


def test_leakage_scan_covers_every_public_artifact(release_dir):
    _, root = release_dir
    public_text = "".join(p.read_text(errors="replace") for p in (root / "public").rglob("*.json"))
    for private in (
        demo.PE_BLOCK_A,
        demo.PE_BLOCK_B,
        demo.PASS4_SHA,
        "SECRET-ANSWER",
        "SECRET-SOLUTION",
        "Block 1",
        "candidate_map",
        '"referent": "E2"',
        '"owner": "E2"',
    ):
        assert private not in public_text
    for image in (root / "public" / "images").iterdir():
        assert b"PE-" not in image.read_bytes() and b"SECRET" not in image.read_bytes()


def _tamper_raw(root, mutate):
    path = root / "public" / "qa_raw.json"
    records = json.loads(path.read_text())
    mutate(records)
    path.write_text(json.dumps(records, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
    seal_directory(root)  # even after a re-seal the rebuild and the scan must refuse it


def test_validation_refuses_an_injected_answer_even_after_resealing(release_dir):
    _, root = release_dir
    _tamper_raw(
        root,
        lambda rs: rs[0]["input"]["messages"].update(
            user=rs[0]["input"]["messages"]["user"] + " SECRET-ANSWER-two-newtons"
        ),
    )
    codes = {e["code"] for e in release_validate(root).errors}
    assert {"PUBLIC_QA_REBUILD_MISMATCH", "PRIVATE_STRING_IN_PUBLIC"} <= codes


def test_validation_refuses_a_gold_alias_in_public(release_dir):
    _, root = release_dir
    _tamper_raw(root, lambda rs: rs[0]["input"]["messages"].update(system='{"owner": "E2"}'))
    assert "PRIVATE_STRING_IN_PUBLIC" in {e["code"] for e in release_validate(root).errors}


def test_validation_refuses_an_undeclared_public_file(release_dir):
    _, root = release_dir
    shutil.copy(root / "private" / "mappings.json", root / "public" / "images" / "extra.json")
    seal_directory(root)
    assert "UNDECLARED_PUBLIC_FILE_POSSIBLE_PRIVATE_LEAK" in {
        e["code"] for e in release_validate(root).errors
    }


def test_validation_refuses_a_changed_image(release_dir):
    _, root = release_dir
    image = sorted((root / "public" / "images").iterdir())[0]
    image.write_bytes(image.read_bytes() + b"\0")
    seal_directory(root)
    assert "PUBLIC_IMAGE_BYTES_CHANGED" in {e["code"] for e in release_validate(root).errors}


def test_validation_refuses_an_unsealed_change(release_dir):
    _, root = release_dir
    (root / "README.md").write_text("changed")
    assert "FILE_MANIFEST_MISMATCH" in {e["code"] for e in release_validate(root).errors}


def test_import_of_a_release_directory(release_dir, tmp_path):
    release, root = release_dir
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    Release.objects.all().delete()
    imported = release_import(path=copy, actor=None)
    assert imported.release_id == release.release_id and imported.origin == "imported"
    assert imported.items.count() == 3
    assert imported.items.filter(public_gold__isnull=False).count() == 2
    with pytest.raises(ApplicationError):
        release_import(path=copy, actor=None)


def test_export_refuses_pending_probes_and_existing_output(demo_parent, tmp_path):
    _compile_all()
    with pytest.raises(ApplicationError) as error:
        release_export(split="development", output=tmp_path / "r", actor=None)
    assert error.value.code == "RELEASE_EMPTY"
    release = release_export(split="development", output=tmp_path / "r", actor=None, synthetic_example=True)
    assert release.artifact_mode == "synthetic_example_NOT_benchmark_data"
    assert release_validate(tmp_path / "r").codes == {
        "EXPLICIT_SIGNOFF_REQUIRED"
    }  # pending probes, no signoff
    with pytest.raises(ApplicationError) as error:
        release_export(split="development", output=tmp_path / "r", actor=None, synthetic_example=True)
    assert error.value.code == "OUTPUT_EXISTS_USE_NEW_DIRECTORY"


def test_cli_compile_show_probe_and_release_commands(demo_parent, tmp_path):
    out = StringIO()
    call_command("compile", "--parent", demo_parent.problem_id, stdout=out)
    assert "probes=3" in out.getvalue()
    out = StringIO()
    call_command("show_probe", demo.T03_IMAGE, "--condition", "gold", "--format", "json", stdout=out)
    doc = json.loads(out.getvalue())
    assert doc["candidates"] == ["E1", "E2"] and doc["gold_aliases"] == ["E2"]
    assert doc["alias_to_entity"] == {"E1": demo.PE_BLOCK_B, "E2": demo.PE_BLOCK_A}
    assert doc["views"][0]["marks"] == [{"alias": "R1", "points_px": demo.POINTS_GLYPH_M}]
    assert doc["recognition_packet"] == [{"anchor": "R1", "text": "m"}]
    assert doc["attachment_ids"] == ["V1", "V2", "V3", "img_0"]
    with pytest.raises(CommandError, match="SIGNOFF_REQUIRED"):  # no signoff and no explicit override
        call_command(
            "export_release",
            "--split",
            "development",
            "--output",
            str(tmp_path / "r"),
            "--synthetic-example",
            stdout=StringIO(),
        )
    assert not (tmp_path / "r").exists()
    call_command(
        "export_release",
        "--split",
        "development",
        "--output",
        str(tmp_path / "r"),
        "--synthetic-example",
        "--without-signoff",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    with pytest.raises(
        CommandError, match=r"\(1 errors: EXPLICIT_SIGNOFF_REQUIRED\)"
    ):  # unsigned: never valid
        call_command("validate_release", str(tmp_path / "r"), stdout=StringIO(), stderr=StringIO())
    (tmp_path / "r" / "public" / "leak.txt").write_text("x")
    with pytest.raises(CommandError, match="UNDECLARED_PUBLIC_FILE_POSSIBLE_PRIVATE_LEAK"):
        call_command("validate_release", str(tmp_path / "r"), stdout=StringIO(), stderr=StringIO())


def test_import_prompt_templates_then_compile_uses_them(demo_parent, tmp_path):
    (tmp_path / "p.json").write_text(json.dumps(KIT_SHAPED_PROMPTS))
    (tmp_path / "t.json").write_text(json.dumps(KIT_SHAPED_TASKS))
    call_command(
        "import_prompt_templates", str(tmp_path / "p.json"), str(tmp_path / "t.json"), stdout=StringIO()
    )
    assert PromptTemplateSet.objects.get(is_active=True).template_version == "test_v1"
    _compile_all()
    probe = Probe.objects.get(logical_probe_id=demo.T02)
    assert probe.raw_messages["system"] == "SYSTEM-EN"
    assert "<<question>>\nPick the referent of R1.\n" in probe.raw_messages["user"]
    bad = dict(KIT_SHAPED_PROMPTS, en={**KIT_SHAPED_PROMPTS["en"], "user": "{stem}"})
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(CommandError):
        call_command(
            "import_prompt_templates", str(tmp_path / "bad.json"), str(tmp_path / "t.json"), stdout=StringIO()
        )
    assert PromptTemplateSet.objects.get(is_active=True).template_version == "test_v1"


def test_exact_duplicates_are_not_representatives(db, django_user_model):
    make_demo_parent(django_user_model)
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_COPY", sample="SYNTHETIC_COPY")
    _compile_all()
    states = dict(Membership.objects.values_list("parent__problem_id", "dedup_state"))
    assert states == {"SYNTHETIC_COPY": "representative", "SYNTHETIC_TEST_ONLY": "exact_duplicate"}
    assert set(
        Probe.objects.filter(parent__problem_id="SYNTHETIC_TEST_ONLY").values_list("split", flat=True)
    ) == {"blocked"}


def test_celery_task_runs_the_compile(demo_parent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = compile_run_create(actor=None)
    run.refresh_from_db()
    assert run.status == "succeeded" and run.done == 1
