"""``manage.py media_prune`` (issue 29 §3): stored files no row names go (older than --min-age), files a row
names stay byte for byte, --dry-run removes nothing, and nothing goes while a compile run may reuse a view."""

from __future__ import annotations

import os
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import ImportJob
from home.backups import media_references
from probes.models import CompileRun, Release
from tests.factories import ProblemImageFactory, png_bytes

from .conftest import files_under

pytestmark = pytest.mark.django_db

TWO_HOURS = 2 * 3600
ORPHANS = {
    f"views/ab/{'ab' * 32}.png": b"a view no probe shows any more",
    "problems/zz/replaced.png": b"an image a newer import replaced",
    "eval_runs/run-99-items.jsonl": b'{"old": "item file of a deleted run"}\n',
    "imports/finished.zip": b"an upload whose job ended",
    "releases/.signoff-7.staging/public/qa_raw.json": b"[]",  # an export that died half-way
}
YOUNG = {"views/cd/being-written.png": b"stored a moment ago; its row commits next"}


def _store(name: str, data: bytes, *, age_seconds: int) -> None:
    assert default_storage.save(name, ContentFile(data)) == name
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(default_storage.path(name), (then, then))


@pytest.fixture
def media(settings):
    """Rows naming files (an image, an upload of a running import, a release folder with its zip), orphans
    two hours old and one orphan written just now."""
    image = ProblemImageFactory(data=png_bytes(color=(9, 8, 7)))
    _store("imports/running.zip", b"an upload being imported", age_seconds=TWO_HOURS)
    ImportJob.objects.create(kind="problems", status="running", upload="imports/running.zip")
    root = Path(settings.MEDIA_ROOT)
    folder = root / "releases" / "signoff-1-demo"
    (folder / "public").mkdir(parents=True)
    (folder / "public" / "qa_raw.json").write_text("[1]")
    (folder / "release.json").write_text("{}")
    public_zip = root / "releases" / f"NREL-{'1' * 64}.public.zip"
    public_zip.write_bytes(b"PK zip")
    Release.objects.create(
        release_id=f"NREL-{'1' * 64}",
        split="development",
        origin=Release.Origin.EXPORTED,
        artifact_mode="native",
        path=str(folder),
        zip_status="ready",
        zip_path=str(public_zip),
    )
    for path in root.rglob("*"):
        os.utime(path, (time.time() - TWO_HOURS,) * 2)
    for name, data in ORPHANS.items():
        _store(name, data, age_seconds=TWO_HOURS)
    for name, data in YOUNG.items():
        _store(name, data, age_seconds=0)
    referenced = {
        image.file.name,
        "imports/running.zip",
        "releases/signoff-1-demo/public/qa_raw.json",
        "releases/signoff-1-demo/release.json",
        f"releases/NREL-{'1' * 64}.public.zip",
    }
    return root, referenced


def _prune(*args: str) -> str:
    out = StringIO()
    call_command("media_prune", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_references_are_what_rows_name(media):
    _root, referenced = media
    refs = media_references()
    stored = {ref.name for ref in refs.stored}
    assert stored == {n for n in referenced if not n.startswith("releases/")}
    [release] = refs.releases
    assert {path.name for _field, path in release.files()} == {
        "qa_raw.json",
        "release.json",
        f"NREL-{'1' * 64}.public.zip",
    }


def test_a_dry_run_lists_the_orphans_and_removes_nothing(media):
    root, referenced = media
    before = files_under(root)
    out = _prune("--dry-run")
    listed = {line.split()[2] for line in out.splitlines() if line.startswith("would remove ")}
    assert listed == set(ORPHANS)
    assert (
        f"{len(ORPHANS)} unreferenced files would be removed (0.0 MB); {len(referenced)} referenced files kept; "
        "1 unreferenced files younger than 60 minutes kept." in out
    )
    assert files_under(root) == before


def test_prune_removes_only_old_files_no_row_names(media):
    root, referenced = media
    before = files_under(root)
    out = _prune()
    assert {line.split()[1] for line in out.splitlines() if line.startswith("removed ")} == set(ORPHANS)
    after = files_under(root)
    assert set(after) == referenced | set(YOUNG)
    assert all(after[name] == before[name] for name in after)  # every kept file byte for byte
    assert "0 unreferenced files removed" in _prune()  # nothing left to remove

    _prune("--min-age", "0")  # a file no row names is removed once it is old enough
    assert set(files_under(root)) == referenced


def test_nothing_is_removed_while_a_compile_run_may_reuse_a_view(media):
    root, _referenced = media
    CompileRun.objects.create(status=CompileRun.Status.RUNNING)
    before = files_under(root)
    with pytest.raises(CommandError, match=r"Compile run \d+ is running"):
        _prune()
    assert files_under(root) == before
    assert f"{len(ORPHANS)} unreferenced files would be removed" in _prune("--dry-run")


def test_a_negative_age_is_refused(media):
    with pytest.raises(CommandError, match="--min-age must be zero or more"):
        _prune("--min-age", "-1")
