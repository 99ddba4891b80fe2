"""``backup_restore``: a backup folder into the configured, empty database and media storage.

Everything that can refuse is checked before anything is written: the manifest reads, the snapshot's engine is
the configured one, every migration it records exists in this code, the database holds no rows ``migrate``
would not write, the media storage holds no file, no release folder would overwrite one, and every file has
its manifest's size and SHA-256. Only then are the database (``pg_restore`` in one transaction, or SQLite's
backup API), the stored files (through each field's storage: the filesystem or a bucket alike) and the release
folders written. A release folder kept under the old media root goes to the same place under the new one;
one kept elsewhere goes to ``<media root>/releases/restored/<release_id>/``; its row then names the new place.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import connections
from django.db.migrations.loader import MigrationLoader

from physalign_site.errors import ApplicationError

from . import database
from .manifest import FileEntry, Manifest, ManifestError, read_manifest, safe_relative, verify_files
from .references import (
    RELEASE_FIELD,
    RELEASE_HF_ZIP_FIELD,
    RELEASE_ZIP_FIELD,
    distinct_storages,
    field_storage,
    storage_walk,
)

ENGINE_NAMES = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}
WRITE_THREADS = 8


@dataclass(frozen=True)
class ReleasePlace:
    folder: Path
    zip_path: Path | None
    hf_zip: Path | None
    moved: bool


@dataclass
class RestoreResult:
    manifest: Manifest
    files: int = 0
    bytes: int = 0
    moved_releases: dict[str, str] = field(default_factory=dict)
    unapplied_migrations: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def _refuse(message: str, code: str) -> ApplicationError:
    return ApplicationError(f"Refused: {message} Nothing was restored.", code=code)


def _read(folder: Path) -> Manifest:
    try:
        return read_manifest(folder)
    except ManifestError as error:
        raise _refuse(str(error), "backup_invalid") from error


def _require_engine(manifest: Manifest, vendor: str) -> None:
    if manifest.engine != vendor:
        made, here = ENGINE_NAMES.get(manifest.engine, manifest.engine), ENGINE_NAMES[vendor]
        raise _refuse(
            f"the backup is a {made} snapshot and the configured database is {here}; restore it into {made} "
            f"(set DATABASE_URL). Restore does not convert between engines: dumpdata/loaddata would not carry "
            f"every value exactly.",
            "backup_engine_mismatch",
        )


def _schema_check(manifest: Manifest) -> list[str]:
    """Refuse a snapshot from a newer schema; return this code's migrations the snapshot has not applied."""
    on_disk = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    unknown = sorted(
        f"{app}.{name}"
        for app, names in manifest.migrations.items()
        for name in names
        if (app, name) not in on_disk
    )
    if unknown:
        more = f" and {len(unknown) - 1} more" if len(unknown) > 1 else ""
        raise _refuse(
            f"the backup comes from a newer schema: migration {unknown[0]}{more} is not in this code "
            f"(app {manifest.app_version} made the backup); upgrade the app first.",
            "backup_schema_newer",
        )
    applied = {(app, name) for app, names in manifest.migrations.items() for name in names}
    return sorted(f"{app}.{name}" for app, name in on_disk - applied)


def _require_empty_database(vendor: str) -> None:
    if vendor == "sqlite" and not database.sqlite_path().exists():
        return
    rows = database.rows_outside_migrate()
    if rows:
        table, count = next(iter(rows.items()))
        more = f" (and {len(rows) - 1} more tables)" if len(rows) > 1 else ""
        raise _refuse(
            f"the target database is not empty: {table} holds {count} rows{more}. Restore into a new database "
            "(or one only `migrate` has run on).",
            "restore_target_not_empty",
        )


def _require_empty_storage() -> None:
    for storage, labels in distinct_storages():
        for name in storage_walk(storage):
            raise _refuse(
                f"the media storage of {', '.join(labels)} is not empty (it holds {name}). Restore into an empty "
                "media root or bucket prefix.",
                "restore_media_not_empty",
            )


def _moved(original: str, old_root: Path, new_root: Path, release_id: str) -> tuple[Path, bool]:
    path = Path(original)
    try:
        return new_root / path.relative_to(old_root), old_root != new_root
    except ValueError:
        return new_root / "releases" / "restored" / release_id / path.name, True


def _release_places(manifest: Manifest) -> dict[str, ReleasePlace]:
    old_root, new_root = Path(manifest.media_root), Path(settings.MEDIA_ROOT).resolve()
    places = {}
    for release in manifest.releases:
        folder, moved = _moved(release.path, old_root, new_root, release.release_id)
        zip_path = (
            _moved(release.zip_path, old_root, new_root, release.release_id)[0] if release.zip_path else None
        )
        hf_zip = _moved(release.hf_zip, old_root, new_root, release.release_id)[0] if release.hf_zip else None
        for path in (folder, zip_path, hf_zip):
            if path is not None and path.exists():
                raise _refuse(
                    f"release {release.release_id} would be written to {path}, which exists.",
                    "restore_release_exists",
                )
        places[release.release_id] = ReleasePlace(folder, zip_path, hf_zip, moved)
    return places


def _release_target(entry: FileEntry, place: ReleasePlace) -> Path:
    if entry.field == RELEASE_FIELD:
        prefix = f"releases/{entry.release_id}/folder/"
        return place.folder / safe_relative(entry.path.removeprefix(prefix))
    target = {RELEASE_ZIP_FIELD: place.zip_path, RELEASE_HF_ZIP_FIELD: place.hf_zip}.get(entry.field)
    if target is None:
        raise _refuse(f"the manifest lists {entry.path} under an unknown release file.", "backup_invalid")
    return target


def _write_stored(folder: Path, entry: FileEntry) -> None:
    storage = field_storage(entry.field)
    with (folder / safe_relative(entry.path)).open("rb") as handle:
        saved = storage.save(entry.name, File(handle, name=entry.name))
    if saved != entry.name:
        raise ApplicationError(
            f"The storage saved {entry.name} as {saved}: was something written to it during the restore?",
            code="restore_media_renamed",
        )


def _write_files(folder: Path, manifest: Manifest, places: dict[str, ReleasePlace]) -> None:
    stored = [entry for entry in manifest.files if entry.kind == "media"]
    with ThreadPoolExecutor(WRITE_THREADS) as pool:
        list(pool.map(lambda entry: _write_stored(folder, entry), stored))
    for entry in manifest.files:
        if entry.kind == "release":
            target = _release_target(entry, places[entry.release_id])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / safe_relative(entry.path), target)


def _point_releases_to(places: dict[str, ReleasePlace]) -> dict[str, str]:
    from probes.models import Release

    moved = {}
    for release_id, place in places.items():
        if place.moved:
            Release.objects.filter(release_id=release_id).update(
                path=str(place.folder), zip_path=str(place.zip_path or "")
            )
            moved[release_id] = str(place.folder)
    return moved


def backup_restore(*, folder: Path, progress: Callable[[str], None] = lambda _: None) -> RestoreResult:
    """Restore the backup in ``folder`` (see the module's docstring for what is refused, and when)."""
    folder = Path(folder).resolve()
    manifest = _read(folder)
    vendor = database.engine()
    _require_engine(manifest, vendor)
    unapplied = _schema_check(manifest)
    _require_empty_database(vendor)
    _require_empty_storage()
    places = _release_places(manifest)
    if missing := {e.release_id for e in manifest.files if e.kind == "release"} - set(places):
        raise _refuse(
            f"the manifest lists files of release {sorted(missing)[0]} it does not describe.",
            "backup_invalid",
        )
    progress(f"checking {len(manifest.files):,} files against the manifest")
    started = time.perf_counter()
    try:
        verify_files(folder, manifest)
    except ManifestError as error:
        raise _refuse(str(error), "backup_damaged") from error
    result = RestoreResult(manifest=manifest, unapplied_migrations=unapplied)
    result.seconds["verify_s"] = time.perf_counter() - started

    progress(f"restoring the {ENGINE_NAMES[vendor]} database")
    started = time.perf_counter()
    snapshot = folder / safe_relative(manifest.database_file)
    if vendor == "postgresql":
        database.pg_restore(snapshot)
    else:
        database.sqlite_restore(snapshot)
    connections.close_all()
    result.seconds["database_s"] = time.perf_counter() - started

    progress("writing the media files")
    started = time.perf_counter()
    _write_files(folder, manifest, places)
    result.moved_releases = _point_releases_to(places)
    result.seconds["media_s"] = time.perf_counter() - started
    media = [e for e in manifest.files if e.kind != "database"]
    result.files, result.bytes = len(media), sum(e.size for e in media)
    return result
