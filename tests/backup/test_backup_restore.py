"""``manage.py backup`` / ``restore`` on PostgreSQL (issue 29 §2): the staged demo with its finished evaluation
run and signed release is backed up while the app's database is live, restored into a second database and media
root by ``manage.py restore`` in another process, and found equal; a backup taken while pass documents are being
saved holds every save acknowledged before it began; refused restores write nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from annotation.models import PassDocument
from annotation.services import pass_document_save
from evaluation.models import EvalRun
from physalign_site.roles import ANNOTATOR
from probes.models import Release, RenderedView
from probes.releases import release_validate
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, ProblemImageFactory, png_bytes

from .conftest import files_under, manage, postgres_url, query, row_counts, table_counts

pytestmark = pytest.mark.django_db(transaction=True)


def _backup(folder: Path) -> dict:
    out, err = StringIO(), StringIO()
    call_command("backup", "--output", str(folder), stdout=out, stderr=err)
    assert f"Backup written to {folder}" in out.getvalue()
    return json.loads((folder / "manifest.json").read_text())


def _restore(folder: Path, database: str, media_root: Path, tmp_path: Path):
    return manage(
        "restore",
        str(folder),
        database_url=postgres_url(database),
        media_root=media_root,
        var_dir=tmp_path / "restore-var",
    )


def _tables(database: str) -> list[str]:
    with psycopg.connect(postgres_url(database)) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return sorted(r[0] for r in rows)


def _one_line_refusal(done, *fragments: str) -> str:
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("CommandError:")]
    assert len(lines) == 1, done.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert lines[0].endswith("Nothing was restored.")
    return lines[0]


@pytest.fixture
def staged(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    call_command("load_demo", "--count", "12", "--stage", stdout=StringIO())


def test_the_staged_demo_restores_equal_in_another_database_and_media_root(
    staged, pg_target, tmp_path, settings
):
    run = EvalRun.objects.get(status=EvalRun.Status.COMPLETED)
    release = Release.objects.get()
    assert run.items_file.name and default_storage.exists(run.items_file.name)
    assert Path(release.path).is_relative_to(Path(settings.MEDIA_ROOT))
    manifest = _backup(tmp_path / "backup")
    assert manifest["engine"] == "postgresql" and manifest["missing"] == []
    assert manifest["counts"]["annotation_passdocument"] == PassDocument.objects.count()
    assert manifest["latest_migrations"]["annotation"] == max(manifest["migrations"]["annotation"])

    restored_media = tmp_path / "restored-media"
    done = _restore(tmp_path / "backup", pg_target, restored_media, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Restored the backup" in done.stdout

    source = connection.settings_dict["NAME"]
    counts = table_counts(pg_target)
    assert counts == table_counts(source)
    assert counts["probes_renderedview"] > 100 and counts["evaluation_itemscore"] > 100
    for sql in (
        "SELECT id, document_sha256 FROM annotation_passdocument ORDER BY id",
        "SELECT * FROM evaluation_metricsnapshot ORDER BY id",
        "SELECT * FROM evaluation_evalrun ORDER BY id",
        "SELECT id, release_id, manifest, counts FROM probes_release ORDER BY id",
    ):
        assert query(pg_target, sql) == query(source, sql) != []
    views = query(pg_target, "SELECT file, bytes_sha256 FROM probes_renderedview")
    assert len(views) == RenderedView.objects.count()
    for name, sha256 in views:
        data = (restored_media / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha256
        with default_storage.open(name, "rb") as original:
            assert data == original.read()
    for (name,) in query(pg_target, "SELECT file FROM annotation_problemimage"):
        with default_storage.open(name, "rb") as original:
            assert (restored_media / name).read_bytes() == original.read()
    [(items_file,)] = query(pg_target, f"SELECT items_file FROM evaluation_evalrun WHERE id = {run.pk}")
    assert (restored_media / items_file).read_bytes() == run.items_file.read()

    [(restored_path,)] = query(pg_target, "SELECT path FROM probes_release")
    moved_to = restored_media / Path(release.path).relative_to(Path(settings.MEDIA_ROOT))
    assert restored_path == str(moved_to)
    assert f"Release {release.release_id} is now at {moved_to}." in done.stdout
    assert files_under(moved_to) == files_under(Path(release.path))
    report = release_validate(moved_to)
    assert report.valid and report == release_validate(Path(release.path))

    # the target now holds data: a second restore is refused and changes nothing
    before = files_under(restored_media)
    again = _restore(tmp_path / "backup", pg_target, restored_media, tmp_path)
    _one_line_refusal(again, "the target database is not empty")
    assert files_under(restored_media) == before
    assert table_counts(pg_target) == counts


def test_a_backup_during_saves_holds_every_save_acknowledged_before_it_began(
    pg_target, tmp_path, django_user_model
):
    user = make_user(django_user_model, "saver", ANNOTATOR)
    parent = ParentProblemFactory()
    ProblemImageFactory(parent=parent, data=png_bytes(color=(10, 20, 30)))
    base = {"problem_id": parent.problem_id, "visual_nodes": [], "ambiguities": []}
    first = pass_document_save(parent=parent, pass_no=1, document=base, actor=user, expected_version=None)
    acknowledged: list[tuple[int, str]] = [(first.version, first.document_sha256)]
    stop, failures = threading.Event(), []

    def save_until_stopped() -> None:
        # the service the pass API calls; it returns once its transaction committed (the API's 200)
        try:
            version, n = first.version, 0
            while not stop.is_set():
                n += 1
                document = {**base, "ambiguities": [{"id": "amb_1", "note": f"save {n}"}]}
                saved = pass_document_save(
                    parent=parent, pass_no=1, document=document, actor=user, expected_version=version
                )
                version = saved.version
                acknowledged.append((saved.version, saved.document_sha256))
        except Exception as error:  # noqa: BLE001  # reported by the main thread
            failures.append(error)
        finally:
            connection.close()

    saver = threading.Thread(target=save_until_stopped)
    saver.start()
    try:
        while len(acknowledged) < 10 and saver.is_alive():
            time.sleep(0.01)
        before_backup = list(acknowledged)
        _backup(tmp_path / "backup")
        during_backup = len(acknowledged) - len(before_backup)
        while len(acknowledged) < len(before_backup) + during_backup + 5 and saver.is_alive():
            time.sleep(0.01)
    finally:
        stop.set()
        saver.join()
    assert not failures, failures
    assert during_backup > 0  # saves went on while the backup ran

    done = _restore(tmp_path / "backup", pg_target, tmp_path / "restored-media", tmp_path)
    assert done.returncode == 0, done.stderr
    [(doc_pk, version, sha256)] = query(
        pg_target, "SELECT id, version, document_sha256 FROM annotation_passdocument WHERE pass_no = 1"
    )
    assert version >= before_backup[-1][0]
    assert (version, sha256) in acknowledged  # a state a save produced
    saves = {
        (after["version"], after["document_sha256"])
        for (after,) in query(
            pg_target,
            f"SELECT after FROM audit_event WHERE verb = 'pass_document.save' AND object_id = '{doc_pk}'",
        )
    }
    assert set(before_backup) <= saves
    assert max(v for v, _ in saves) == version  # nothing after the snapshot, nothing half-written


@pytest.fixture
def small_backup(tmp_path):
    ProblemImageFactory(data=png_bytes(color=(1, 2, 3)))
    ProblemImageFactory(data=png_bytes(color=(4, 5, 6)))
    folder = tmp_path / "backup"
    _backup(folder)
    return folder


def _nothing_written(database: str, media_root: Path) -> None:
    assert _tables(database) == []
    assert not media_root.exists() or files_under(media_root) == {}


def test_a_tampered_file_is_refused_and_nothing_is_written(small_backup, pg_target, tmp_path):
    manifest = json.loads((small_backup / "manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["kind"] == "media")
    damaged = bytearray((small_backup / entry["path"]).read_bytes())
    damaged[-1] ^= 0xFF
    (small_backup / entry["path"]).write_bytes(bytes(damaged))
    media = tmp_path / "restored-media"
    done = _restore(small_backup, pg_target, media, tmp_path)
    _one_line_refusal(done, f"{entry['path']} does not match the manifest")
    _nothing_written(pg_target, media)


def test_a_damaged_database_dump_is_refused(small_backup, pg_target, tmp_path):
    with (small_backup / "database.dump").open("ab") as handle:
        handle.write(b"\0")
    done = _restore(small_backup, pg_target, tmp_path / "restored-media", tmp_path)
    _one_line_refusal(done, "database.dump does not match the manifest")
    _nothing_written(pg_target, tmp_path / "restored-media")


def test_a_snapshot_from_a_newer_schema_is_refused(small_backup, pg_target, tmp_path):
    path = small_backup / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["migrations"]["annotation"].append("9999_from_a_newer_release")
    path.write_text(json.dumps(manifest))
    done = _restore(small_backup, pg_target, tmp_path / "restored-media", tmp_path)
    _one_line_refusal(done, "newer schema", "annotation.9999_from_a_newer_release is not in this code")
    _nothing_written(pg_target, tmp_path / "restored-media")


def test_a_media_root_with_files_is_refused(small_backup, pg_target, tmp_path):
    media = tmp_path / "restored-media"
    (media / "views").mkdir(parents=True)
    (media / "views" / "left-over.png").write_bytes(b"x")
    done = _restore(small_backup, pg_target, media, tmp_path)
    _one_line_refusal(done, "media storage", "is not empty (it holds views/left-over.png)")
    assert _tables(pg_target) == []
    assert files_under(media) == {"views/left-over.png": b"x"}


def test_a_postgresql_snapshot_is_refused_by_sqlite(small_backup, tmp_path):
    target = tmp_path / "target.sqlite3"
    done = manage(
        "restore",
        str(small_backup),
        database_url=f"sqlite:///{target}",
        media_root=tmp_path / "restored-media",
        var_dir=tmp_path / "restore-var",
    )
    _one_line_refusal(done, "a PostgreSQL snapshot and the configured database is SQLite")
    if target.exists():  # Django may open (and so create) the file at start-up; nothing goes into it
        with sqlite3.connect(target) as conn:
            assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    assert not (tmp_path / "restored-media").exists()


def test_restoring_into_the_live_database_is_refused(small_backup):
    before = row_counts()
    with pytest.raises(
        CommandError, match="the target database is not empty: annotation_parentproblem holds 2"
    ):
        call_command("restore", str(small_backup), stdout=StringIO(), stderr=StringIO())
    assert row_counts() == before


def test_a_backup_refuses_a_folder_that_holds_files(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(CommandError, match="exists and is not empty"):
        call_command("backup", "--output", str(tmp_path / "taken"), stdout=StringIO(), stderr=StringIO())
    assert files_under(tmp_path / "taken") == {"notes.txt": b"mine"}
