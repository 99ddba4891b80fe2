"""Rendered views are files in the media storage at content-addressed names, not bytes in the database."""

from __future__ import annotations

import hashlib
import os

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection

from probes.attachments import AttachmentIndex, view_storage_name, view_store
from probes.models import Probe, RenderedView
from probes.services import compile_run_create, compile_run_execute
from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)


def _compile():
    return compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)


def _stored_views(settings) -> dict[str, float]:
    root = settings.MEDIA_ROOT / "views"
    return {
        str(path.relative_to(settings.MEDIA_ROOT)): path.stat().st_mtime_ns
        for path in root.rglob("*")
        if path.is_file()
    }


def test_views_are_content_addressed_files_whose_sha256_matches(demo_parent, settings):
    _compile()
    views = list(RenderedView.objects.all())
    assert len(views) >= 3
    columns = {
        c.name
        for c in connection.introspection.get_table_description(connection.cursor(), "probes_renderedview")
    }
    assert "png" not in columns and "file" in columns
    for view in views:
        assert view.file.name == view_storage_name(view.bytes_sha256)
        assert view.file.name == f"views/{view.bytes_sha256[:2]}/{view.bytes_sha256}.png"
        with default_storage.open(view.file.name, "rb") as handle:
            data = handle.read()
        assert hashlib.sha256(data).hexdigest() == view.bytes_sha256
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # every reader goes through probes.attachments: the bytes it hands out are the stored file's
    probes = list(Probe.objects.all())
    index = AttachmentIndex(probes)
    for probe in probes:
        for attachment in index.of(probe):
            assert hashlib.sha256(attachment.read()).hexdigest() == attachment.sha256


def test_identical_renders_are_stored_once_and_an_unchanged_recompile_writes_nothing(demo_parent, settings):
    _compile()
    shas = set(RenderedView.objects.values_list("bytes_sha256", flat=True))
    stored = _stored_views(settings)
    assert len(stored) == len(shas) <= RenderedView.objects.count()
    _compile()
    assert _stored_views(settings) == stored
    # A content change sends the probes back to review and writes their view rows again, but the same bytes
    # are already stored: no file is written or touched.
    Probe.objects.update(review_target_root="0" * 64)
    before = set(RenderedView.objects.values_list("pk", flat=True))
    _compile()
    assert not before & set(RenderedView.objects.values_list("pk", flat=True))
    assert _stored_views(settings) == stored


def test_a_file_cut_short_is_replaced_and_a_whole_one_is_kept(db, settings):
    data = b"\x89PNG\r\n\x1a\n" + os.urandom(200)
    sha = hashlib.sha256(data).hexdigest()
    name = view_storage_name(sha)
    default_storage.save(name, ContentFile(data[:50]))  # a worker killed mid-write
    assert view_store(data) == name
    with default_storage.open(name, "rb") as handle:
        assert handle.read() == data
    mtime = (settings.MEDIA_ROOT / name).stat().st_mtime_ns
    assert view_store(data, sha) == name
    assert (settings.MEDIA_ROOT / name).stat().st_mtime_ns == mtime
    assert sorted(p.name for p in (settings.MEDIA_ROOT / name).parent.iterdir()) == [f"{sha}.png"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_the_migration_moves_database_bytes_to_files_and_back(django_user_model, settings):
    from .conftest import make_demo_parent

    make_demo_parent(django_user_model)
    _compile()
    expected = {
        (probe, view): sha
        for probe, view, sha in RenderedView.objects.values_list("probe_id", "view_id", "bytes_sha256")
    }
    # Back to 0001: the files are read into the BinaryField.
    old = apps_at(migrate_to([("probes", "0001_probes_initial")]), [("probes", "0001_probes_initial")])
    rows = old.get_model("probes", "RenderedView").objects.values_list("probe_id", "view_id", "png")
    assert {(p, v): hashlib.sha256(bytes(png)).hexdigest() for p, v, png in rows} == expected
    for name in _stored_views(settings):
        default_storage.delete(name)
    assert not _stored_views(settings)

    # Forward: each PNG becomes a content-addressed file again, the column is dropped.
    new = migrate_to_latest()
    moved = new.get_model("probes", "RenderedView").objects.values_list("probe_id", "view_id", "file")
    assert {(p, v) for p, v, _ in moved} == set(expected)
    for probe, view, name in moved:
        assert name == view_storage_name(expected[(probe, view)])
        with default_storage.open(name, "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == expected[(probe, view)]
    assert len(_stored_views(settings)) == len(set(expected.values()))
