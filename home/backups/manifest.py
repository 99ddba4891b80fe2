"""A backup's manifest (``manifest.json``): what the snapshot holds and the SHA-256 and size of every file.

Layout of a backup folder::

    manifest.json                 this file, written last (a folder without it is no backup)
    database.dump                 PostgreSQL: pg_dump's custom format (pg_restore reads it)
    database.sqlite3              SQLite: a copy made with SQLite's online backup API
    media/<storage name>          every stored file a row names (FileFields: images, views, item files, uploads)
    releases/<release_id>/…       every release folder and its built zips (local files named by Release rows)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

FORMAT = "physalign-backup/1"
MANIFEST_NAME = "manifest.json"
CHUNK = 1024 * 1024


class ManifestError(Exception):
    """A manifest that cannot be read, or files that do not match it; the message names the first problem."""


@dataclass(frozen=True)
class FileEntry:
    """One file of the backup. ``path`` is relative to the backup folder; ``kind`` is database, media or
    release. Media: ``field`` is the FileField label and ``name`` the storage name. Release: ``field`` names the
    Release column and ``name`` the absolute path it had when the backup was taken."""

    path: str
    kind: str
    sha256: str
    size: int
    field: str = ""
    name: str = ""
    release_id: str = ""


@dataclass(frozen=True)
class ReleaseEntry:
    release_id: str
    path: str
    zip_path: str
    hf_zip: str


@dataclass
class Manifest:
    created_at: str
    engine: str
    database_file: str
    app_version: str
    django_version: str
    media_root: str
    migrations: dict[str, list[str]]  # every applied migration, per app, as django_migrations held them
    latest_migrations: dict[str, str]  # the newest applied migration of every app
    counts: dict[str, int]  # rows per table
    files: list[FileEntry] = field(default_factory=list)
    releases: list[ReleaseEntry] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)  # named by a row, not found in storage
    seconds: dict[str, float] = field(default_factory=dict)
    format: str = FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True, ensure_ascii=False) + "\n"

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.files)


def copy_hashed(source: IO[bytes], target: IO[bytes]) -> tuple[str, int]:
    """Copy a stream and return the SHA-256 (hex) and size of what went through."""
    digest, size = hashlib.sha256(), 0
    while chunk := source.read(CHUNK):
        digest.update(chunk)
        target.write(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def file_sha256(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def safe_relative(path: str) -> PurePosixPath:
    """A path inside the backup folder: relative, without ``..``; anything else is a damaged manifest."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ManifestError(f"The manifest names a file outside the backup folder: {path!r}.")
    return pure


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise ManifestError(f"{folder} is not a backup: it has no {MANIFEST_NAME}.")
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestError(f"{path} is not valid JSON ({error}).") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ManifestError(f"{path} is not a {FORMAT} manifest (format {data.get('format')!r}).")
    try:
        data["files"] = [FileEntry(**entry) for entry in data.get("files", [])]
        data["releases"] = [ReleaseEntry(**entry) for entry in data.get("releases", [])]
        return Manifest(**data)
    except TypeError as error:
        raise ManifestError(f"{path} has an unexpected shape ({error}).") from error


def verify_files(folder: Path, manifest: Manifest) -> None:
    """Every file the manifest lists is there with its size and SHA-256; the first that is not is named."""
    for entry in manifest.files:
        path = folder / safe_relative(entry.path)
        if not path.is_file():
            raise ManifestError(f"{entry.path} is listed in the manifest but missing from the backup.")
        sha256, size = file_sha256(path)
        if (sha256, size) != (entry.sha256, entry.size):
            raise ManifestError(
                f"{entry.path} does not match the manifest (SHA-256 {sha256[:12]}…, {size} bytes; "
                f"expected {entry.sha256[:12]}…, {entry.size} bytes): the backup is damaged or was changed."
            )
