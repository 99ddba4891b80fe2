"""Every media file a row names: the one list a backup copies and ``media_prune`` keeps.

Two kinds of reference exist in this app:

- **storage names**: every ``FileField`` of every installed model (today the problem images'
  ``problems/<sha[:2]>/<sha>.<ext>``, the rendered views' content-addressed ``views/<sha[:2]>/<sha>.png``, the
  evaluation runs' item files ``eval_runs/…`` and the uploads of import jobs still running ``imports/…``), each
  read and written through its field's storage (the filesystem under ``MEDIA_ROOT`` or an S3 bucket);
- **release files**: on the filesystem media storage a release is a folder on the server's disk named by
  ``Release.path`` (an absolute path, written by ``probes.releases.release_export`` outside the storage API),
  with its public zip (``Release.zip_path``, when ``zip_status`` is ready) and its Hugging Face zip
  (``probes.exports.hf.hf_zip_path``, when ``hf_status`` is ready) beside it; with a bucket, the release lives
  in it as objects under ``releases/<release_id>/`` with their index and zips (``probes.release_store``), and
  those are storage names like the others.

A new model with a ``FileField`` is found without a change here; a new kind of path kept in a text or JSON
column must be added to :func:`media_references`, or backups miss it and ``media_prune`` deletes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.apps import apps
from django.core.files.storage import FileSystemStorage, Storage, default_storage
from django.db import models

RELEASE_FIELD = "probes.Release.path"
RELEASE_ZIP_FIELD = "probes.Release.zip_path"
RELEASE_HF_ZIP_FIELD = "probes.Release.hf_zip"


@dataclass(frozen=True)
class StoredReference:
    """A name in the storage of a model's ``FileField`` (``field`` is ``app_label.Model.field``)."""

    field: str
    name: str


@dataclass(frozen=True)
class ReleaseReference:
    """A release's files on the local disk: its folder and the zips built beside it (absolute paths)."""

    release_id: str
    folder: Path
    public_zip: Path | None
    hf_zip: Path | None

    def files(self) -> Iterator[tuple[str, Path]]:
        """(field, path) of every file of the release as it is on disk now (a folder is walked)."""
        if self.folder.is_dir():
            for path in sorted(p for p in self.folder.rglob("*") if p.is_file()):
                yield RELEASE_FIELD, path
        for field, zipped in ((RELEASE_ZIP_FIELD, self.public_zip), (RELEASE_HF_ZIP_FIELD, self.hf_zip)):
            if zipped is not None and zipped.is_file():
                yield field, zipped


@dataclass(frozen=True)
class MediaReferences:
    stored: list[StoredReference]
    releases: list[ReleaseReference]

    def stored_names(self) -> dict[str, set[str]]:
        """The referenced names per field label (a name several rows share is there once)."""
        names: dict[str, set[str]] = {}
        for ref in self.stored:
            names.setdefault(ref.field, set()).add(ref.name)
        return names


def file_fields() -> list[tuple[str, type[models.Model], models.FileField]]:
    """(label, model, field) of every concrete ``FileField`` (and ``ImageField``) of the installed models."""
    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.FileField):
                found.append((f"{model._meta.label}.{field.name}", model, field))
    return sorted(found, key=lambda item: item[0])


def field_storage(label: str) -> Storage:
    """The storage of the ``FileField`` named ``app_label.Model.field`` (a release's objects: the media
    storage, where ``probes.release_store`` keeps them)."""
    if label in (RELEASE_FIELD, RELEASE_ZIP_FIELD, RELEASE_HF_ZIP_FIELD):
        return default_storage
    app_model, _, field_name = label.rpartition(".")
    field = apps.get_model(app_model)._meta.get_field(field_name)
    if not isinstance(field, models.FileField):
        raise LookupError(f"{label} is not a file field")
    return field.storage


def distinct_storages() -> list[tuple[Storage, list[str]]]:
    """Each storage the file fields use once, with the labels of the fields on it."""
    found: list[tuple[Storage, list[str]]] = []
    for label, _model, field in file_fields():
        for storage, labels in found:
            if storage is field.storage:
                labels.append(label)
                break
        else:
            found.append((field.storage, [label]))
    return found


def media_references(*, using: str = "default") -> MediaReferences:
    """Every media file the rows of database ``using`` name (in one snapshot when the caller holds one).

    An import job's upload counts while the field names it (the job clears it when it ends, having deleted the
    file); a release's zips count only while the row says they are ready.
    """
    stored: list[StoredReference] = []
    for label, model, field in file_fields():
        names = (
            model._default_manager.using(using)
            .exclude(**{field.attname: ""})
            .exclude(**{f"{field.attname}__isnull": True})
            .values_list(field.attname, flat=True)
            .distinct()
        )
        stored.extend(StoredReference(label, name) for name in names.iterator())
    releases: list[ReleaseReference] = []
    if releases_on_local_disk():
        releases = _local_releases(using)
    else:
        stored += _bucket_releases(using)
    return MediaReferences(stored=sorted(stored, key=lambda r: (r.field, r.name)), releases=releases)


def releases_on_local_disk() -> bool:
    """Release folders and zips are local files when the media storage is (``probes.release_store``): with a
    bucket they are objects in it under ``releases/``, and ``Release.path`` is only a working copy."""
    return isinstance(default_storage, FileSystemStorage)


def _release_rows(using: str) -> Iterator[Any]:
    from probes.models import Release

    fields = ("release_id", "path", "zip_status", "zip_path", "hf_status")
    yield from Release.objects.using(using).only(*fields).order_by("release_id")


def _local_releases(using: str) -> list[ReleaseReference]:
    from probes.exports.hf import hf_zip_path

    refs = []
    for release in _release_rows(using):
        if not release.path:
            continue
        ready_zip = release.zip_status == "ready" and release.zip_path
        refs.append(
            ReleaseReference(
                release_id=release.release_id,
                folder=Path(release.path),
                public_zip=Path(release.zip_path) if ready_zip else None,
                hf_zip=hf_zip_path(release) if release.hf_status == "ready" else None,
            )
        )
    return refs


def _bucket_releases(using: str) -> list[StoredReference]:
    """A release in the bucket: its folder's objects, their index and the zips the row says are built."""
    from probes.release_store import folder_prefix, hf_zip_name, index_name

    refs = []
    for release in _release_rows(using):
        prefix = folder_prefix(release.release_id).rstrip("/")
        refs += [StoredReference(RELEASE_FIELD, name) for name in storage_walk(default_storage, prefix)]
        refs.append(StoredReference(RELEASE_FIELD, index_name(release.release_id)))
        if release.zip_status == "ready" and release.zip_path and not Path(release.zip_path).is_absolute():
            refs.append(StoredReference(RELEASE_ZIP_FIELD, release.zip_path))
        if release.hf_status == "ready":
            refs.append(StoredReference(RELEASE_HF_ZIP_FIELD, hf_zip_name(release.release_id)))
    return refs


def storage_walk(storage: Storage, path: str = "") -> Iterator[str]:
    """Every file name in ``storage`` under ``path``, through the storage API (a folder or a bucket prefix)."""
    try:
        dirs, files = storage.listdir(path)
    except FileNotFoundError:  # the filesystem storage's root does not exist yet: nothing stored
        return
    for name in sorted(files):
        yield f"{path}/{name}" if path else name
    for name in sorted(dirs):
        yield from storage_walk(storage, f"{path}/{name}" if path else name)


def local_storage_name(storage: Storage, path: Path) -> str | None:
    """The name under which a filesystem storage lists the local file ``path`` (None if outside it, or if the
    storage is not on this disk)."""
    if not isinstance(storage, FileSystemStorage):  # a bucket has no local paths
        return None
    try:
        return Path(path).resolve().relative_to(Path(storage.location).resolve()).as_posix()
    except ValueError:
        return None
