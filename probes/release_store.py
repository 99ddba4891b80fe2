"""A release's files where every process can read them: the local folder, or the media bucket.

A release is a folder in the Kit layout (``validate_release``, inspect_ai and the exports read folders). On the
filesystem media storage it is the folder ``release_export`` wrote (``Release.path``) and its zips are built
beside it, as always. On a remote media storage (an S3 bucket) web and worker processes share no disk, so the
bucket is where a release lives:

    releases/<release_id>/<the release folder's files>   copied once the folder is written (export or import)
    releases/<release_id>.files.json                       name, bytes and SHA-256 of each, written last
    releases/<release_id>.public.zip                       the public zip, once built
    releases/<release_id>.hf.zip                           the Hugging Face dataset zip, once built

and a process that needs the folder and does not have it fetches a working copy under ``releases_root()``,
checked against the index and the folder's own FILE_MANIFEST.json before it is used. Downloads are streamed by
the app's role-checked views from either place; no URL of the bucket is ever handed out.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, default_storage

from kit.canonical import parse_json, write_json_bytes
from physalign_site.errors import ApplicationError

from .release_layout import directory_manifest

STORE_DIR = "releases"
COPY_CHUNK = 1 << 20


def storage_is_local(storage: Storage | None = None) -> bool:
    """Whether the media storage is a folder of this machine (Django's ``path()`` is the documented test)."""
    try:
        (storage or default_storage).path("")
    except NotImplementedError:
        return False
    return True


def releases_root() -> Path:
    """Where release folders are written (PHYSALIGN_RELEASES_ROOT): by default beside the media on the local
    storage, and ``var/releases`` (a working copy only) with a bucket."""
    if settings.RELEASES_ROOT:
        return Path(settings.RELEASES_ROOT)
    if storage_is_local():
        return Path(settings.MEDIA_ROOT) / "releases"
    return Path(settings.VAR_DIR) / "releases"


def folder_prefix(release_id: str) -> str:
    return f"{STORE_DIR}/{release_id}/"


def index_name(release_id: str) -> str:
    return f"{STORE_DIR}/{release_id}.files.json"


def public_zip_name(release_id: str) -> str:
    return f"{STORE_DIR}/{release_id}.public.zip"


def hf_zip_name(release_id: str) -> str:
    return f"{STORE_DIR}/{release_id}.hf.zip"


def _missing(what: str) -> ApplicationError:
    return ApplicationError(
        f"The release's files are missing from the media storage ({what}).",
        code="RELEASE_FILES_MISSING",
        status=410,
    )


def _save(name: str, content: File) -> None:
    saved = default_storage.save(name, content)
    if saved != name:  # the storage renamed it (file_overwrite off): the index would name the wrong object
        default_storage.delete(saved)
        raise ApplicationError(
            f"The media storage stored {name} as {saved}; it must overwrite by name.", code="STORAGE_RENAMES"
        )


# Writing -----------------------------------------------------------------------------------------------------------
def release_store_put(*, release_id: str, root: Path) -> int:
    """Copy a written release folder into a remote media storage; returns the files copied (0 on the local
    storage, where the folder already is the release). The index goes last: a release whose index exists is
    complete in the bucket."""
    if storage_is_local():
        return 0
    rows = []
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(COPY_CHUNK), b""):
                digest.update(chunk)
            handle.seek(0)
            _save(folder_prefix(release_id) + relative, File(handle))
        rows.append({"name": relative, "bytes": path.stat().st_size, "sha256": digest.hexdigest()})
    index = {"release_id": release_id, "files": rows}
    _save(index_name(release_id), ContentFile(write_json_bytes(index)))
    return len(rows)


def _index(release_id: str) -> dict[str, Any] | None:
    try:
        with default_storage.open(index_name(release_id), "rb") as handle:
            data = parse_json(handle.read())
    except FileNotFoundError:
        return None
    return data if isinstance(data, dict) else None


# Reading -----------------------------------------------------------------------------------------------------------
def release_folder(release: Any) -> Path:
    """The release's folder on this machine: where it was written, else (remote storage) a working copy fetched
    from the bucket and checked file by file. A release whose files are gone is a 410 error, never a 500."""
    written = Path(release.path) if release.path else None
    if written is not None and written.is_dir():
        return written
    if storage_is_local():
        raise ApplicationError(
            f"The release folder {release.path} is missing from this server.",
            code="RELEASE_FILES_MISSING",
            status=410,
        )
    copy = releases_root() / ".copies" / release.release_id
    if (copy / "FILE_MANIFEST.json").is_file():
        return copy
    return _fetch(release.release_id, copy)


def _fetch(release_id: str, copy: Path) -> Path:
    index = _index(release_id)
    if index is None:
        raise _missing(index_name(release_id))
    staging = copy.with_name(f".{copy.name}.fetching")
    shutil.rmtree(staging, ignore_errors=True)
    for row in index["files"]:
        target = staging / row["name"]
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        try:
            with default_storage.open(folder_prefix(release_id) + row["name"], "rb") as source:
                with target.open("wb") as out:
                    for chunk in iter(lambda: source.read(COPY_CHUNK), b""):
                        digest.update(chunk)
                        out.write(chunk)
        except FileNotFoundError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise _missing(folder_prefix(release_id) + row["name"]) from exc
        if digest.hexdigest() != row["sha256"]:
            shutil.rmtree(staging, ignore_errors=True)
            raise ApplicationError(
                f"{row['name']} of release {release_id} changed in the media storage.",
                code="RELEASE_FILE_CHANGED",
            )
    sealed = parse_json((staging / "FILE_MANIFEST.json").read_bytes())
    if sealed != directory_manifest(staging):
        shutil.rmtree(staging, ignore_errors=True)
        raise ApplicationError(
            f"Release {release_id} in the media storage does not match its FILE_MANIFEST.json.",
            code="RELEASE_FILE_CHANGED",
        )
    shutil.rmtree(copy, ignore_errors=True)
    staging.rename(copy)
    return copy


def release_listing(release: Any) -> list[tuple[str, int]]:
    """(relative name, bytes) of every file of the release folder, without fetching it: from the folder when it
    is here, else from the bucket's index; [] when neither exists."""
    written = Path(release.path) if release.path else None
    if written is not None and written.is_dir():
        return [
            (p.relative_to(written).as_posix(), p.stat().st_size)
            for p in sorted(written.rglob("*"))
            if p.is_file()
        ]
    if storage_is_local():
        return []
    index = _index(release.release_id)
    return [(row["name"], int(row["bytes"])) for row in index["files"]] if index else []


# Built zips --------------------------------------------------------------------------------------------------------
def build_dir(release: Any) -> Path:
    """Where a zip of the release is built: beside the folder on the local storage (where it stays), a scratch
    folder under the releases root with a bucket (it is uploaded, then removed)."""
    if storage_is_local():
        return Path(release.path).parent
    return releases_root() / ".build"


def artifact_keep(local: Path, name: str) -> str:
    """Keep a built file: on the local storage it stays where it was built (its absolute path is returned); on a
    remote one it is uploaded as ``name`` and the local file removed (the storage name is returned)."""
    if storage_is_local():
        return str(local)
    with local.open("rb") as handle:
        _save(name, File(handle))
    local.unlink()
    return name


def artifact_open(ref: str) -> IO[bytes] | None:
    """A kept file, open for reading (an absolute path on this machine, or a storage name), or None when it is
    gone."""
    if not ref:
        return None
    if Path(ref).is_absolute():
        path = Path(ref)
        return path.open("rb") if path.is_file() else None
    try:
        return default_storage.open(ref, "rb")
    except FileNotFoundError:
        return None


def artifact_exists(ref: str) -> bool:
    if not ref:
        return False
    return Path(ref).is_file() if Path(ref).is_absolute() else default_storage.exists(ref)


def artifact_delete(ref: str) -> None:
    if not ref:
        return
    if Path(ref).is_absolute():
        Path(ref).unlink(missing_ok=True)
    else:
        default_storage.delete(ref)
