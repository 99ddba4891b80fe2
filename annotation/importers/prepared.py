"""Rows that passed the check phase, waiting for the write phase."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from ..images import ImageInfo
from .report import RowReport


@dataclass(frozen=True)
class PreparedImage:
    image_id: str
    path: Path
    original_name: str
    info: ImageInfo


@dataclass(frozen=True)
class PreparedPass:
    pass_no: int
    document: Any
    document_sha256: str
    status: str  # what the import may store: approved/rejected only from an uploader who may review
    reviewer: str  # the reviewer the file names for an approved pass (provenance text only)
    review_note: str
    file_sha256: str = ""  # SHA-256 of the file's own bytes (the Kit hashes files, not a normalized copy)


@dataclass
class PreparedParent:
    report: RowReport
    problem_id: str
    source_name: str
    source_license: str | None  # None: leave the Source's licence as it is
    fields: dict[str, Any]
    images: list[PreparedImage]
    keep_private_on_update: bool = False  # kit without an answers sidecar row
    carries_private: bool = False  # the row (or its sidecar row) gives an answer or a solution
    passes: list[PreparedPass] = field(default_factory=list)
    is_kit: bool = False  # a kit row: the parent's status follows its passes (and an allowed exclusion)
    excluded: bool = False


@dataclass
class WriteState:
    """Files written during the write phase, deleted again if the transaction rolls back."""

    saved_files: list[str] = field(default_factory=list)


def image_caps() -> tuple[int, int]:
    return settings.PHYSALIGN_IMAGE_MAX_PIXELS, settings.PHYSALIGN_IMAGE_MAX_BYTES
