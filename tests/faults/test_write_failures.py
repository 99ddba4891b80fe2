"""Disk full / media write failure during a compile or an export (issue 32, §2): the run or build fails with the
reason recorded on it, leaves no partial view, shard, folder or zip that a later run or a download would trust, and
a retry after the fault succeeds."""

from __future__ import annotations

import errno
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage, default_storage

from kit.canonical import bytes_digest
from probes.exports import hf
from probes.exports.hf import hf_zip_path, release_hf_build, release_hf_zip_ready
from probes.models import CompileRun, Probe, Release, RenderedView
from probes.release_store import build_dir
from probes.services import compile_run_create, compile_run_execute
from tests.probes.conftest import approve_as_planned, make_demo_parent


@pytest.fixture
def release(db, django_user_model, tmp_path):
    from annotation.models import Source
    from probes.releases import release_export

    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY")
    Source.objects.update(license="CC BY 4.0", url="https://example.org/source")
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    approve_as_planned(Probe.objects.all())
    return release_export(split="development", output=tmp_path / "release", actor=None)


def _leftovers(release) -> list[str]:
    folder = build_dir(release)
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(release.release_id + ".hf"))


def test_a_disk_full_while_writing_a_shard_fails_the_build_with_the_reason_and_leaves_nothing(
    release, monkeypatch
):
    written = hf.write_shard

    def disk_full(shard: Path, *args, **kwargs):
        shard.write_bytes(b"PAR1 half a shard")  # the device filled up after a partial write
        raise OSError(errno.ENOSPC, "No space left on device", str(shard))

    monkeypatch.setattr(hf, "write_shard", disk_full)
    with pytest.raises(OSError):
        release_hf_build(release_pk=release.pk)
    release.refresh_from_db()
    assert release.hf_status == "failed"
    assert release.hf_error.startswith("OSError: [Errno 28] No space left on device")
    assert _leftovers(release) == [] and not release_hf_zip_ready(release)

    monkeypatch.setattr(hf, "write_shard", written)  # the disk has room again: the retry builds it
    release_hf_build(release_pk=release.pk)
    release.refresh_from_db()
    assert release.hf_status == "ready" and release.hf_error == ""
    assert release_hf_zip_ready(release)
    names = zipfile.ZipFile(hf_zip_path(release)).namelist()
    assert "README.md" in names and any(n.endswith(".parquet") for n in names)


def test_a_write_error_while_zipping_leaves_no_partial_zip_and_the_reason_is_stored(release, monkeypatch):
    def io_error(self, *args, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(zipfile.ZipFile, "write", io_error)
    with pytest.raises(OSError):
        release_hf_build(release_pk=release.pk)
    release.refresh_from_db()
    assert release.hf_status == "failed" and release.hf_error == "OSError: [Errno 5] Input/output error"
    assert not hf_zip_path(release).exists()
    assert not hf_zip_path(release).with_name(hf_zip_path(release).name + ".partial").exists()
    assert not release_hf_zip_ready(release)
    monkeypatch.undo()
    release_hf_build(release_pk=release.pk)
    release.refresh_from_db()
    assert release.hf_status == "ready" and Release.objects.get(pk=release.pk).hf_error == ""
    assert zipfile.ZipFile(hf_zip_path(release)).testzip() is None


def _media_views() -> list[str]:
    root = Path(default_storage.path("views"))
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.png")) if root.exists() else []


def test_a_disk_full_while_storing_a_rendered_view_fails_the_compile_and_leaves_no_truncated_view(
    db, django_user_model, monkeypatch
):
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY")
    written = FileSystemStorage._save
    cut = []

    def disk_full(self, name, content):
        if not cut:  # the first view: half its bytes reach the disk, then the device is full
            cut.append(name)
            Path(self.path(name)).parent.mkdir(parents=True, exist_ok=True)
            Path(self.path(name)).write_bytes(content.read()[: content.size // 2])
            raise OSError(errno.ENOSPC, "No space left on device", self.path(name))
        return written(self, name, content)

    monkeypatch.setattr(FileSystemStorage, "_save", disk_full)
    run = compile_run_create(actor=None, enqueue=False)
    with pytest.raises(OSError):
        compile_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == CompileRun.Status.FAILED
    assert "No space left on device" in run.error and run.error.startswith("chunk 1: ")
    assert cut and not default_storage.exists(cut[0])  # the truncated view is gone
    assert not Probe.objects.exists() and not RenderedView.objects.exists()  # the chunk stored nothing

    monkeypatch.undo()  # room again: a new compile stores every view whole
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    views = list(RenderedView.objects.all())
    assert views and Probe.objects.exists()
    for view in views:
        assert bytes_digest(default_storage.open(view.file.name).read()) == view.bytes_sha256
    assert len(_media_views()) == len({v.bytes_sha256 for v in views})  # no stray file beside them
