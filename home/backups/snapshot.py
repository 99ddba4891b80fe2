"""``backup_create``: a consistent snapshot of the running app (database, referenced media, manifest).

Consistency: the database is dumped from one snapshot, and the list of media files to copy is read from that
same snapshot (PostgreSQL: inside the exported snapshot's transaction; SQLite: from the copy just made). So the
backup holds exactly the files its rows name. A file is copied after the snapshot; that is safe because what a
row names does not change under it: problem images and rendered views are content-addressed (the name is the
bytes' SHA-256), and an item file or upload is written before the row names it and replaced only under a new
name. A file deleted between the snapshot and its copy (an item file a rescore replaced, an upload whose job
ended) is listed under ``missing`` in the manifest and reported; an item file is rebuilt on its first download.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import django
from django.conf import settings

from physalign_site.errors import ApplicationError

from . import database
from .manifest import (
    MANIFEST_NAME,
    FileEntry,
    Manifest,
    ReleaseEntry,
    copy_hashed,
    file_sha256,
    safe_relative,
)
from .references import RELEASE_FIELD, MediaReferences, ReleaseReference, field_storage

COPY_THREADS = 8  # storage reads in flight (an S3 bucket answers each request with latency)


@dataclass(frozen=True)
class BackupResult:
    folder: Path
    manifest: Manifest


def app_version() -> str:
    try:
        return metadata.version("physalign-studio")
    except metadata.PackageNotFoundError:
        return "unknown"


def latest_migrations(migrations: dict[str, list[str]]) -> dict[str, str]:
    """The newest applied migration per app (names are numbered: the greatest number is the newest)."""
    return {app: max(names) for app, names in sorted(migrations.items()) if names}


def _new_folder(output: Path) -> Path:
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ApplicationError(
            f"{output} exists and is not empty: give a new folder for the backup.",
            code="backup_output_exists",
        )
    staging = output.with_name(f".{output.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)  # a backup interrupted earlier; never a finished one
    (staging / "media").mkdir(parents=True)
    return staging


def _copy_stored(staging: Path, field: str, name: str) -> FileEntry | dict[str, str]:
    storage = field_storage(field)
    target = staging / "media" / safe_relative(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with storage.open(name, "rb") as source, target.open("wb") as sink:
            sha256, size = copy_hashed(source, sink)
    except (FileNotFoundError, OSError) as error:
        target.unlink(missing_ok=True)
        if storage.exists(name):
            raise
        return {"field": field, "name": name, "reason": f"not in the storage ({type(error).__name__})"}
    return FileEntry(f"media/{name}", "media", sha256, size, field=field, name=name)


def _copy_media(
    staging: Path, references: MediaReferences, progress: Callable[[str], None]
) -> tuple[list[FileEntry], list[dict[str, str]]]:
    by_name: dict[str, str] = {}
    for ref in references.stored:  # one copy per storage name, whichever field names it
        by_name.setdefault(ref.name, ref.field)
    unique = sorted(by_name.items())
    progress(f"copying {len(unique):,} stored files")
    with ThreadPoolExecutor(COPY_THREADS) as pool:
        results = list(pool.map(lambda job: _copy_stored(staging, job[1], job[0]), unique))
    files = [r for r in results if isinstance(r, FileEntry)]
    missing = [r for r in results if isinstance(r, dict)]
    return files, missing


def _copy_release(staging: Path, release: ReleaseReference) -> tuple[list[FileEntry], ReleaseEntry]:
    base = Path("releases") / release.release_id
    files = []
    for field, path in release.files():
        if field == RELEASE_FIELD:
            relative = base / "folder" / path.relative_to(release.folder)
        else:
            relative = base / path.name
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as source, target.open("wb") as sink:
            sha256, size = copy_hashed(source, sink)
        files.append(
            FileEntry(
                relative.as_posix(),
                "release",
                sha256,
                size,
                field=field,
                name=str(path),
                release_id=release.release_id,
            )
        )
    entry = ReleaseEntry(
        release_id=release.release_id,
        path=str(release.folder),
        zip_path=str(release.public_zip or ""),
        hf_zip=str(release.hf_zip or ""),
    )
    return files, entry


def backup_create(*, output: Path, progress: Callable[[str], None] = lambda _: None) -> BackupResult:
    """Write a backup of the configured database and media into the new folder ``output``.

    The folder is filled under a hidden ``.<name>.partial`` sibling and renamed when complete, manifest
    included: a backup that stopped half-way is never mistaken for one."""
    output = Path(output).resolve()
    vendor = database.engine()
    staging = _new_folder(output)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    db_file = "database.dump" if vendor == "postgresql" else "database.sqlite3"
    progress(f"dumping the {vendor} database")
    if vendor == "postgresql":
        state = database.pg_backup(staging / db_file)
    else:
        state = database.sqlite_backup(staging / db_file)
    timings["database_s"] = time.perf_counter() - started
    sha256, size = file_sha256(staging / db_file)
    files = [FileEntry(db_file, "database", sha256, size)]

    started = time.perf_counter()
    media, missing = _copy_media(staging, state.references, progress)
    files += media
    releases = []
    for release in state.references.releases:
        release_files, entry = _copy_release(staging, release)
        files += release_files
        releases.append(entry)
    timings["media_s"] = time.perf_counter() - started

    manifest = Manifest(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        engine=vendor,
        database_file=db_file,
        app_version=app_version(),
        django_version=django.get_version(),
        media_root=str(Path(settings.MEDIA_ROOT).resolve()),
        migrations=state.migrations,
        latest_migrations=latest_migrations(state.migrations),
        counts=state.counts,
        files=files,
        releases=releases,
        missing=missing,
        seconds=timings,
    )
    (staging / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    if output.exists():
        output.rmdir()  # checked empty above
    staging.rename(output)
    return BackupResult(folder=output, manifest=manifest)
