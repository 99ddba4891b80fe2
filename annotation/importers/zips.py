"""Archive safety: member names, counts, sizes and ratios checked before anything is extracted."""

from __future__ import annotations

import re
import stat
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from django.conf import settings

from physalign_site.errors import ApplicationError

from ..models import ImportJob
from .report import IGNORED_ZIP_FOLDERS, MAX_ZIP_MEMBERS, ZIP_RATIO_FLOOR

MARKERS = {
    ImportJob.Kind.PROBLEMS.value: ("manifest.jsonl",),
    ImportJob.Kind.KIT_WORKSPACE.value: ("blind", "manifest.jsonl"),
}


def _max_uncompressed_bytes() -> int:
    return getattr(
        settings, "PHYSALIGN_IMPORT_MAX_UNCOMPRESSED_BYTES", 4 * settings.PHYSALIGN_IMPORT_MAX_BYTES
    )


def _unsafe_member_name(name: str) -> bool:
    if not name or "\\" in name or "\0" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return True
    return ".." in PurePosixPath(name).parts


def checked_zip_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """Refuse absolute paths, '..', symlinks, encryption, too many entries or too many bytes."""
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        raise ApplicationError(
            f"The archive has more than {MAX_ZIP_MEMBERS:,} entries.", code="import_zip_too_many"
        )
    total = compressed = 0
    max_ratio = settings.PHYSALIGN_IMPORT_MAX_ZIP_RATIO
    for info in members:
        if _unsafe_member_name(info.filename):
            raise ApplicationError(
                f"The archive entry {info.filename!r} has an unsafe path (absolute or '..').",
                code="import_zip_unsafe_path",
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ApplicationError(
                f"The archive entry {info.filename!r} is a symbolic link.", code="import_zip_symlink"
            )
        if info.flag_bits & 0x1:
            raise ApplicationError(
                f"The archive entry {info.filename!r} is encrypted.", code="import_zip_encrypted"
            )
        if info.file_size > ZIP_RATIO_FLOOR and info.file_size > max_ratio * max(info.compress_size, 1):
            raise ApplicationError(
                f"The archive entry {info.filename!r} expands {info.file_size / max(info.compress_size, 1):,.0f} "
                f"times; the limit is {max_ratio} (a zip bomb?).",
                code="import_zip_ratio",
            )
        total += info.file_size
        compressed += info.compress_size
    if total > ZIP_RATIO_FLOOR and total > max_ratio * max(compressed, 1):
        raise ApplicationError(
            f"The archive expands {total / max(compressed, 1):,.0f} times; the limit is {max_ratio}.",
            code="import_zip_ratio",
        )
    limit = _max_uncompressed_bytes()
    if total > limit:
        raise ApplicationError(
            f"The archive expands to {total:,} bytes; the limit is {limit:,}.", code="import_zip_too_large"
        )
    return members


def find_root(names: Iterable[str], kind: str) -> str:
    """The folder (posix, '' = archive root) holding the kind's marker file, at most one level down."""
    marker = MARKERS[kind]
    roots = set()
    for name in names:
        parts = PurePosixPath(name).parts
        if not parts or parts[0] in IGNORED_ZIP_FOLDERS or tuple(parts[-len(marker) :]) != marker:
            continue
        prefix = parts[: -len(marker)]
        if len(prefix) <= 1:
            roots.add("/".join(prefix))
    where = "/".join(marker)
    if not roots:
        raise ApplicationError(
            f"The archive has no {where} at its root or in one top-level folder.", code="import_zip_layout"
        )
    if len(roots) > 1:
        raise ApplicationError(
            f"The archive has several {where} files; upload one import at a time.", code="import_zip_layout"
        )
    return roots.pop()


def extract_zip(archive_path: Path, destination: Path) -> None:
    """Extract with every safety check again, counting the bytes actually written (the sizes an archive
    declares may lie): the total cap and the expansion ratio hold for what is really written."""
    limit = min(
        _max_uncompressed_bytes(),
        max(ZIP_RATIO_FLOOR, settings.PHYSALIGN_IMPORT_MAX_ZIP_RATIO * archive_path.stat().st_size),
    )
    written = 0
    destination = destination.resolve()
    with zipfile.ZipFile(archive_path) as archive:
        for info in checked_zip_members(archive):
            target = (destination / info.filename).resolve()
            if not target.is_relative_to(destination):
                raise ApplicationError(
                    f"The archive entry {info.filename!r} leaves the extraction folder.",
                    code="import_zip_unsafe_path",
                )
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(target, "wb") as sink:
                while chunk := source.read(1024 * 1024):
                    written += len(chunk)
                    if written > limit:
                        raise ApplicationError(
                            f"The archive expands to more than {limit:,} bytes.", code="import_zip_too_large"
                        )
                    sink.write(chunk)
