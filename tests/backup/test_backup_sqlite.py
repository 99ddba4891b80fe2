"""``manage.py backup`` / ``restore`` on the embedded SQLite default (issue 29 §2): a file database with problems,
compiled probes and their rendered views, each command in its own process as a user runs it, restored into a
new file and media root and found equal; a restore into the filled file is refused and changes nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from .conftest import files_under, manage


def _sqlite(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def _counts(path: Path) -> dict[str, int]:
    tables = [t for (t,) in _sqlite(path, "SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        t: _sqlite(path, f'SELECT count(*) FROM "{t}"')[0][0]
        for t in sorted(tables)
        if t != "sqlite_sequence"
    }


@pytest.fixture
def source(tmp_path) -> dict[str, Path]:
    place = {"db": tmp_path / "app.sqlite3", "media": tmp_path / "media", "var": tmp_path / "var"}

    def run(*args: str) -> str:
        done = manage(
            *args, database_url=f"sqlite:///{place['db']}", media_root=place["media"], var_dir=place["var"]
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("migrate", "-v0")
    run("load_demo", "--count", "4", "--no-users")
    run("compile", "--all")
    assert "Backup written to" in run("backup", "--output", str(tmp_path / "backup"))
    return place


def test_a_sqlite_backup_restores_into_a_new_file_and_media_root(source, tmp_path):
    backup = tmp_path / "backup"
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["engine"] == "sqlite" and manifest["database_file"] == "database.sqlite3"
    assert manifest["counts"] == _counts(source["db"])
    assert not (backup / "database.sqlite3-wal").exists()  # one self-contained file
    views = _sqlite(source["db"], "SELECT file, bytes_sha256 FROM probes_renderedview")
    assert views

    target, media = tmp_path / "restored.sqlite3", tmp_path / "restored-media"
    done = manage(
        "restore",
        str(backup),
        database_url=f"sqlite:///{target}",
        media_root=media,
        var_dir=tmp_path / "var2",
    )
    assert done.returncode == 0, done.stderr
    assert _counts(target) == _counts(source["db"])
    sql = "SELECT id, pass_no, document_sha256 FROM annotation_passdocument ORDER BY id"
    assert _sqlite(target, sql) == _sqlite(source["db"], sql) != []
    for name, sha256 in views:
        data = (media / name).read_bytes()
        assert data == (source["media"] / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha256
    images = [name for (name,) in _sqlite(target, "SELECT file FROM annotation_problemimage")]
    assert images and all((media / n).read_bytes() == (source["media"] / n).read_bytes() for n in images)

    before = (files_under(media), _counts(target))
    again = manage(
        "restore",
        str(backup),
        database_url=f"sqlite:///{target}",
        media_root=media,
        var_dir=tmp_path / "var2",
    )
    assert again.returncode == 1
    assert "CommandError: Refused: the target database is not empty" in again.stderr
    assert (files_under(media), _counts(target)) == before
