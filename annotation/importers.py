"""Importers: a problems manifest (JSONL + images) and a kit source workspace (Kit §2.1–§2.3).

Every import runs in two phases:

1. The check phase reads and validates every row, every image and every pass document outside
   any transaction, collecting every problem it finds into an ``ImportReport``. An ``ImportJob``'s
   progress (``total``/``done``) is written here, so other connections can watch it.
2. Only when no row has an error, the write phase stores everything in ONE atomic block. If any
   row has an error, nothing at all is written and the report lists every problem, row by row.

Both importers are idempotent: a row whose content (image hashes included) equals what is stored
changes nothing and writes no event; a changed row updates the parent (``version`` + 1) and
its images in place.

Report codes are upper-case and stable (``IMAGE_MISSING``, ``SOURCE_REVIEW_HASH_STALE``, …).
Errors refuse the whole import; warnings are informational and never block it.
"""

from __future__ import annotations

import logging
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from audit.services import event_record
from kit.canonical import bytes_digest, digest, parse_json, text_digest
from kit.passes.validator import ImageRef, context_for, validate_pass_document
from physalign_site import jsonsafety
from physalign_site.errors import ApplicationError

from . import permissions
from .history import pass_version_record
from .images import ImageInfo, ImageRejected, inspect_image_bytes
from .models import SAFE_ID_PATTERN, ImportJob, ParentProblem, PassDocument, ProblemImage, Source
from .selectors import forbidden_key_issues, kit_source_guard, kit_source_record, parent_passes_approved

logger = logging.getLogger(__name__)

SAFE_ID_RE = re.compile(SAFE_ID_PATTERN)
CJK_RE = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]")
_UNIT_TOKEN = r"[A-Za-z\u00b0%\u03a9\u03bc\u00b5\u2126\u212b]+(?:\^?[-\u2212]?\d+)?"
NUMERIC_ANSWER_RE = re.compile(
    r"^[-+\u2212]?(?:\d+(?:\.\d*)?|\.\d+)"  # 12, 12.5, .5
    r"(?:[eE][-+]?\d+|\s*[x\u00d7]\s*10\^?[-+\u2212]?\d+)?"  # 1.2e-3, 1.2 × 10^-3
    rf"(?:\s*{_UNIT_TOKEN}(?:\s*[/\u00b7*\u22c5]\s*{_UNIT_TOKEN}|\s+{_UNIT_TOKEN}){{0,3}})?$"
)
ANSWER_TYPES = {"choice", "fill", "short", "calc"}
ANSWER_TYPE_ALIASES = {"multiple_choice": "choice"}
OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
PRIVATE_FIELDS = ("answer", "solution")
PASS_NUMBERS = (1, 2, 3, 4, 5)
REQUIRED_PASSES = (1, 2, 3, 4)
MAX_ZIP_MEMBERS = 100_000
ZIP_RATIO_FLOOR = 10 * 1024 * 1024  # below this many bytes an entry (or archive) may expand any amount
IGNORED_ZIP_FOLDERS = {"__MACOSX"}

# Field lengths mirrored from the models, so an over-long value is a row error, not a DataError.
MAX_LENGTHS = {
    "problem_id": 180,
    "source": 200,
    "license": 500,
    "source_split": 100,
    "source_sample_id": 300,
    "domain": 100,
    "image_id": 100,
}

SUCCEEDED = ImportJob.Status.SUCCEEDED.value
FAILED = ImportJob.Status.FAILED.value


# --------------------------------------------------------------------------------------------
# The report


@dataclass
class RowReport:
    """What happened to one input row. ``row`` is the 1-based line number in the manifest."""

    row: int
    problem_id: str = ""
    outcome: str = "pending"  # created | updated | unchanged | rejected | not_imported
    errors: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def error(self, code: str, message: str, **extra: Any) -> None:
        self.errors.append({"code": code, "message": message, **extra})

    def warn(self, code: str, message: str, **extra: Any) -> None:
        self.warnings.append({"code": code, "message": message, **extra})

    def as_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "problem_id": self.problem_id,
            "outcome": self.outcome,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
        }


@dataclass
class ImportReport:
    """The result of one import.

    ``as_dict()`` shape (stored on ``ImportJob.report``)::

        {"kind": "problems" | "kit_workspace", "status": "succeeded" | "failed",
         "counts": {"rows", "created", "updated", "unchanged", "rejected", "not_imported",
                    "errors", "warnings"},
         "errors":   [{"code", "message", ...}],   # problems that belong to no single row
         "warnings": [{"code", "message", ...}],
         "rows": [{"row", "problem_id", "outcome", "errors": [...], "warnings": [...]}]}

    ``outcome`` is ``rejected`` for a row with errors and ``not_imported`` for a clean row of an
    import that failed because of other rows.
    """

    kind: str
    status: str = SUCCEEDED
    rows: list[RowReport] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def error(self, code: str, message: str, **extra: Any) -> None:
        self.errors.append({"code": code, "message": message, **extra})

    def warn(self, code: str, message: str, **extra: Any) -> None:
        self.warnings.append({"code": code, "message": message, **extra})

    @property
    def has_errors(self) -> bool:
        return bool(self.errors) or any(row.errors for row in self.rows)

    @property
    def succeeded(self) -> bool:
        return self.status == SUCCEEDED

    @property
    def counts(self) -> dict[str, int]:
        counts = {
            "rows": len(self.rows),
            "created": 0,
            "updated": 0,
            "unchanged": 0,
            "rejected": 0,
            "not_imported": 0,
        }
        for row in self.rows:
            if row.outcome in counts:
                counts[row.outcome] += 1
        counts["errors"] = len(self.errors) + sum(len(row.errors) for row in self.rows)
        counts["warnings"] = len(self.warnings) + sum(len(row.warnings) for row in self.rows)
        return counts

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": self.status,
            "counts": self.counts,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "rows": [row.as_dict() for row in self.rows],
        }

    def summary(self) -> str:
        c = self.counts
        if self.succeeded:
            return (
                f"Imported {c['rows']} rows: {c['created']} created, {c['updated']} updated, "
                f"{c['unchanged']} unchanged; {c['warnings']} warnings."
            )
        return (
            f"Nothing imported: {c['errors']} errors in {c['rejected']} of {c['rows']} rows"
            f"{' and the files' if self.errors else ''}; {c['warnings']} warnings."
        )

    def text_lines(self) -> list[str]:
        """The report as plain text lines, one per row and one per problem (for the CLI)."""
        lines = [f"ERROR {issue['code']}: {issue['message']}" for issue in self.errors]
        lines += [f"WARNING {issue['code']}: {issue['message']}" for issue in self.warnings]
        for row in self.rows:
            lines.append(f"row {row.row} {row.problem_id or '-'}: {row.outcome}")
            lines += [f"  ERROR {issue['code']}: {issue['message']}" for issue in row.errors]
            lines += [f"  WARNING {issue['code']}: {issue['message']}" for issue in row.warnings]
        return lines

    def mark_failed(self) -> None:
        self.status = FAILED
        for row in self.rows:
            row.outcome = "rejected" if row.errors else "not_imported"


# --------------------------------------------------------------------------------------------
# Who is importing: what a file may decide on their behalf


@dataclass(frozen=True)
class ImportAuthority:
    """What the uploader may do through a file, exactly what they could do on the pages.

    - ``may_review``: review state in the file (approvals, rejections, exclusions) is imported only for
      source reviewers and admins; it is recorded as an imported approval *by the uploader*, with the
      file's reviewer name kept as provenance text. The Kit trusts whatever ``reviews/state.json`` says;
      this app does not (issue 12: its rule is weaker than ours here, and ours wins).
    - ``may_edit_private``: answer and solution of an existing problem are changed only by admins; for
      anyone else they are kept whatever the file says, and the row's outcome never depends on them.

    ``actor=None`` is a management command (``load_demo``, ``import_kit_workspace``): an operator with
    shell access to the server, who holds every right anyway.
    """

    may_review: bool
    may_edit_private: bool
    user: Any = None

    @classmethod
    def of(cls, actor: Any) -> ImportAuthority:
        if actor is None:
            return cls(may_review=True, may_edit_private=True)
        user = actor if getattr(actor, "is_authenticated", False) else None
        return cls(may_review=permissions.can_import_review_state(actor),
                   may_edit_private=permissions.can_edit_private_fields(actor), user=user)


# --------------------------------------------------------------------------------------------
# What the check phase hands to the write phase


@dataclass(frozen=True)
class _PreparedImage:
    image_id: str
    path: Path
    original_name: str
    info: ImageInfo


@dataclass(frozen=True)
class _PreparedPass:
    pass_no: int
    document: Any
    document_sha256: str
    status: str  # what the import may store: approved/rejected only from an uploader who may review
    reviewer: str  # the reviewer the file names for an approved pass (provenance text only)
    review_note: str
    file_sha256: str = ""  # SHA-256 of the file's own bytes (the Kit hashes files, not a normalized copy)


@dataclass
class _PreparedParent:
    report: RowReport
    problem_id: str
    source_name: str
    source_license: str | None  # None: leave the Source's licence as it is
    fields: dict[str, Any]
    images: list[_PreparedImage]
    keep_private_on_update: bool = False  # kit without an answers sidecar row
    carries_private: bool = False  # the row (or its sidecar row) gives an answer or a solution
    passes: list[_PreparedPass] = field(default_factory=list)
    is_kit: bool = False  # a kit row: the parent's status follows its passes (and an allowed exclusion)
    excluded: bool = False


@dataclass
class _WriteState:
    """Files written during the write phase, deleted again if the transaction rolls back."""

    saved_files: list[str] = field(default_factory=list)


def _image_caps() -> tuple[int, int]:
    return settings.PHYSALIGN_IMAGE_MAX_PIXELS, settings.PHYSALIGN_IMAGE_MAX_BYTES


# --------------------------------------------------------------------------------------------
# Job progress


def _job_start(job: ImportJob | None, *, total: int) -> None:
    if job is None:
        return
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, total=total, done=0)
    job.status, job.total, job.done = ImportJob.Status.RUNNING, total, 0


def _job_progress(job: ImportJob | None, *, done: int) -> None:
    if job is None:
        return
    ImportJob.objects.filter(pk=job.pk).update(done=done)
    job.done = done


def _job_finish(job: ImportJob | None, report: ImportReport) -> None:
    if job is None:
        return
    finished_at = timezone.now()
    done = len(report.rows) if report.succeeded else job.done
    ImportJob.objects.filter(pk=job.pk).update(
        status=report.status, report=report.as_dict(), finished_at=finished_at, done=done
    )
    job.status, job.report, job.finished_at, job.done = report.status, report.as_dict(), finished_at, done


def import_job_fail(*, job: ImportJob, message: str, code: str = "IMPORT_FAILED") -> None:
    """Mark a job failed with one file-level error, keeping any report rows it already has."""
    report = dict(job.report or {})
    report.setdefault("kind", job.kind)
    report["status"] = FAILED
    report.setdefault("rows", [])
    report["errors"] = [*report.get("errors", []), {"code": code, "message": message}]
    finished_at = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(status=FAILED, report=report, finished_at=finished_at)
    job.status, job.report, job.finished_at = FAILED, report, finished_at
    import_job_discard_upload(job=job)


def import_job_discard_upload(*, job: ImportJob) -> None:
    """An upload is kept only while its job runs: once it has ended (imported or not) the file goes."""
    if job.upload:
        job.upload.storage.delete(job.upload.name)
        ImportJob.objects.filter(pk=job.pk).update(upload="")
        job.upload.name = ""


# --------------------------------------------------------------------------------------------
# Shared checks


def _parse_stored_json(text: str | bytes) -> Any:
    """Kit-strict JSON (no duplicate keys, no NaN) that we can also store: no NUL or unpaired surrogate, not
    nested too deep, and no text longer than ``PHYSALIGN_TEXT_MAX_CHARS`` (a statement, an option, a label…).
    Every refusal is a ``ValueError`` whose message says what and where."""
    try:
        value = parse_json(text)
    except RecursionError:
        raise ValueError(f"nested more than {jsonsafety.MAX_DEPTH} levels deep") from None
    try:
        jsonsafety.check(value, max_string=settings.PHYSALIGN_TEXT_MAX_CHARS)
    except jsonsafety.JSONRejected as exc:
        raise ValueError(exc.message) from exc
    return value


def _read_jsonl(path: Path, report: ImportReport, *, missing_code: str) -> list[tuple[int, Any]] | None:
    """(line number, parsed value or None) for every non-blank line; None if the file is unreadable."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        report.error(missing_code, f"{path.name} was not found.")
        return None
    except OSError as exc:
        report.error(missing_code, f"{path.name} could not be read ({exc.strerror}).")
        return None
    lines = raw.split(b"\n")
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    result: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        row = RowReport(row=number)
        try:
            value = _parse_stored_json(line.decode("utf-8"))
        except UnicodeDecodeError:
            row.error("JSON_INVALID", f"Line {number} is not valid UTF-8.")
            value = None
        except ValueError as exc:  # JSONDecodeError, duplicate keys, NaN
            row.error("JSON_INVALID", f"Line {number} is not valid JSON ({exc}).")
            value = None
        if value is not None and not isinstance(value, dict):
            row.error("ROW_NOT_OBJECT", f"Line {number} must be a JSON object.")
            value = None
        report.rows.append(row)
        result.append((number, value))
    return result


def _check_text(
    row: RowReport,
    value: Any,
    name: str,
    *,
    required: bool,
    allow_empty: bool = True,
    max_length: int | None = None,
) -> str:
    if value is None:
        if required:
            row.error("FIELD_MISSING", f"The field {name!r} is required.", field=name)
        return ""
    if not isinstance(value, str):
        row.error("FIELD_INVALID", f"The field {name!r} must be a string.", field=name)
        return ""
    if not allow_empty and not value.strip():
        row.error("FIELD_MISSING", f"The field {name!r} must not be empty.", field=name)
    if max_length is not None and len(value) > max_length:
        row.error("FIELD_TOO_LONG", f"The field {name!r} is longer than {max_length} characters.", field=name)
    return value


def _check_problem_id(row: RowReport, value: Any, seen: dict[str, int]) -> str:
    if not isinstance(value, str) or not value:
        row.error("FIELD_MISSING", "The problem id is required.", field="id")
        return ""
    row.problem_id = value
    if not SAFE_ID_RE.match(value):
        row.error(
            "PROBLEM_ID_INVALID",
            f"Problem id {value!r} must match [A-Za-z0-9][A-Za-z0-9_.-]{{0,179}} (Kit §2.1).",
        )
    elif value in seen:
        row.error("PROBLEM_ID_DUPLICATE", f"Problem id {value!r} already appears on line {seen[value]}.")
    else:
        seen[value] = row.row
    return value


def _normalize_options(row: RowReport, value: Any, *, label_key: str = "label") -> list[dict[str, str]]:
    """Options as [{id, text}]: strings get ids A, B, C…; objects use ``id`` or ``label``."""
    if value is None:
        return []
    if not isinstance(value, list):
        row.error("OPTIONS_INVALID", "Options must be a list (or null).")
        return []
    options: list[dict[str, str]] = []
    for index, option in enumerate(value):
        fallback_id = OPTION_LETTERS[index] if index < len(OPTION_LETTERS) else f"O{index + 1}"
        if isinstance(option, str):
            options.append({"id": fallback_id, "text": option})
            continue
        if not isinstance(option, dict):
            row.error("OPTIONS_INVALID", f"Option {index + 1} must be a string or an object {{id, text}}.")
            continue
        option_id = option.get("id", option.get(label_key))
        text = option.get("text")
        if option_id is None:
            option_id = fallback_id
        if not isinstance(option_id, str) or not option_id.strip() or not isinstance(text, str):
            row.error(
                "OPTIONS_INVALID", f"Option {index + 1} needs a string id (or label) and a string text."
            )
            continue
        options.append({"id": option_id, "text": text})
    ids = [option["id"] for option in options]
    if len(set(ids)) != len(ids):
        row.error("OPTIONS_INVALID", "Option ids must be unique.")
    return options


def detect_language(*texts: str) -> str:
    """``zh`` when any CJK ideograph appears in the texts, else ``en``."""
    return "zh" if any(CJK_RE.search(text or "") for text in texts) else "en"


def resolve_answer_type(*, declared: Any, options: list[Any], answer: str) -> str:
    """The answer type mapping, in order:

    1. a declared type that is one of choice|fill|short|calc is kept; ``multiple_choice`` → choice;
    2. otherwise options present → choice;
    3. otherwise an answer that is one number, optionally with units ("8.0 J", "-3.2e4 m/s^2",
       "1.2 × 10^-3 kg") → calc;
    4. otherwise → short.
    """
    if isinstance(declared, str):
        normalized = ANSWER_TYPE_ALIASES.get(declared.strip().lower(), declared.strip().lower())
        if normalized in ANSWER_TYPES:
            return normalized
    if options:
        return ParentProblem.AnswerType.CHOICE
    if NUMERIC_ANSWER_RE.match(answer.strip()):
        return ParentProblem.AnswerType.CALC
    return ParentProblem.AnswerType.SHORT


def _safe_relative_path(row: RowReport, base: Path, relative: Any, *, label: str) -> Path | None:
    """``base / relative`` when ``relative`` is a relative POSIX path that stays inside ``base``."""
    if not isinstance(relative, str) or not relative.strip():
        row.error("IMAGE_PATH_INVALID", f"{label}: the image path must be a non-empty string.")
        return None
    pure = PurePosixPath(relative)
    if (
        "\\" in relative
        or "\0" in relative
        or pure.is_absolute()
        or re.match(r"^[A-Za-z]:", relative)
        or ".." in pure.parts
    ):
        row.error(
            "IMAGE_PATH_INVALID",
            f"{label}: {relative!r} must be a relative POSIX path without '..'.",
            path=relative,
        )
        return None
    base_resolved = base.resolve()
    candidate = (base_resolved / pure).resolve()
    if not candidate.is_relative_to(base_resolved):
        row.error(
            "IMAGE_PATH_INVALID", f"{label}: {relative!r} leads outside the import folder.", path=relative
        )
        return None
    return candidate


def _check_image(
    row: RowReport, *, base: Path, relative: Any, image_id: str, label: str, declared: dict[str, Any]
) -> _PreparedImage | None:
    """Read and inspect one image; compare it with the declared sha256/width/height."""
    path = _safe_relative_path(row, base, relative, label=label)
    if path is None:
        return None
    if not path.is_file():
        row.error("IMAGE_MISSING", f"{label}: {relative} was not found.", path=relative)
        return None
    max_pixels, max_bytes = _image_caps()
    size = path.stat().st_size
    if size > max_bytes:  # refuse before reading a huge file into memory
        row.error(
            "IMAGE_TOO_LARGE_BYTES",
            f"{label}: {relative} is {size:,} bytes; the limit is {max_bytes:,}.",
            path=relative,
        )
        return None
    try:
        data = path.read_bytes()
        info = inspect_image_bytes(data, max_pixels=max_pixels, max_bytes=max_bytes)
    except ImageRejected as exc:
        row.error(exc.code.upper(), f"{label}: {exc.message}", path=relative)
        return None
    except OSError as exc:
        row.error(
            "IMAGE_UNREADABLE", f"{label}: {relative} could not be read ({exc.strerror}).", path=relative
        )
        return None
    ok = True
    declared_sha = declared.get("sha256")
    if declared_sha is not None:
        if not isinstance(declared_sha, str) or declared_sha.lower() != info.sha256:
            row.error(
                "IMAGE_SHA256_MISMATCH",
                f"{label}: declared sha256 {declared_sha!r} but the file's is {info.sha256}.",
                path=relative,
            )
            ok = False
    for dimension in ("width", "height"):
        declared_value = declared.get(dimension)
        actual = getattr(info, dimension)
        if declared_value is not None and declared_value != actual:
            row.error(
                "IMAGE_SIZE_MISMATCH",
                f"{label}: declared {dimension} {declared_value!r} but the image is {actual} px.",
                path=relative,
            )
            ok = False
    if not ok:
        return None
    return _PreparedImage(image_id=image_id, path=path, original_name=relative, info=info)


# --------------------------------------------------------------------------------------------
# The write phase (shared)


def _source_for(*, name: str, license: str | None, actor: Any) -> Source:
    source, created = Source.objects.get_or_create(name=name, defaults={"license": license or ""})
    if created:
        event_record(
            actor=actor, verb="source.created", obj=source, after={"name": name, "license": source.license}
        )
    elif license is not None and source.license != license:
        before = source.license
        source.license = license
        source.save(update_fields=["license"])
        event_record(
            actor=actor,
            verb="source.license_changed",
            obj=source,
            before={"license": before},
            after={"license": license},
        )
    return source


def _audit_value(name: str, value: Any) -> Any:
    """Private fields go to the audit trail as digests only."""
    if name in PRIVATE_FIELDS:
        return {"sha256": text_digest(value or "")}
    return value


def _save_image_file(image: ProblemImage, prepared: _PreparedImage, state: _WriteState) -> None:
    data = prepared.path.read_bytes()
    info = prepared.info
    if len(data) != info.byte_size or bytes_digest(data) != info.sha256:
        raise ApplicationError(
            f"{prepared.original_name} changed while it was being imported; try again.",
            code="image_changed_during_import",
        )
    image.file.save(f"{prepared.image_id}.{info.suffix}", ContentFile(data), save=False)
    state.saved_files.append(image.file.name)


def _apply_image_info(image: ProblemImage, prepared: _PreparedImage, ordinal: int) -> None:
    info = prepared.info
    image.image_id = prepared.image_id
    image.ordinal = ordinal
    image.original_name = prepared.original_name[:300]
    image.media_type = info.media_type
    image.width = info.width
    image.height = info.height
    image.byte_size = info.byte_size
    image.sha256 = info.sha256
    image.pixels_sha256 = info.pixels_sha256


def _sync_images(parent: ParentProblem, images: list[_PreparedImage], state: _WriteState) -> bool:
    """Make the parent's images equal to ``images`` (same ids, order and bytes). True if anything changed.

    Unchanged images keep their rows (other tables may point at them); a changed image is updated
    in place; old files are deleted only once the transaction has committed.
    """
    existing = {image.image_id: image for image in parent.images.all()}
    wanted = {prepared.image_id for prepared in images}
    unchanged = (
        all(
            prepared.image_id in existing
            and existing[prepared.image_id].sha256 == prepared.info.sha256
            and existing[prepared.image_id].ordinal == ordinal
            for ordinal, prepared in enumerate(images)
        )
        and set(existing) == wanted
    )
    if unchanged:
        return False
    storage = ProblemImage._meta.get_field("file").storage
    stale_files: list[str] = []
    for image_id, image in existing.items():
        if image_id not in wanted:
            stale_files.append(image.file.name)
            image.delete()
    kept = [existing[p.image_id] for p in images if p.image_id in existing]
    # Move kept rows out of the way first, so the (parent, ordinal) constraint never trips mid-update.
    offset = len(existing) + len(images) + 1
    for image in kept:
        image.ordinal += offset
        image.save(update_fields=["ordinal"])
    for ordinal, prepared in enumerate(images):
        image = existing.get(prepared.image_id)
        if image is None:
            image = ProblemImage(parent=parent)
            _apply_image_info(image, prepared, ordinal)
            _save_image_file(image, prepared, state)
            image.save()
            continue
        same_bytes = image.sha256 == prepared.info.sha256
        old_name = image.file.name
        _apply_image_info(image, prepared, ordinal)
        if not same_bytes:
            _save_image_file(image, prepared, state)
            stale_files.append(old_name)
        image.save()
    for name in stale_files:
        if name:
            transaction.on_commit(partial(storage.delete, name))
    return True


def _parent_snapshot(parent: ParentProblem, names: Iterable[str]) -> dict[str, Any]:
    return {name: _audit_value(name, getattr(parent, name)) for name in names}


def _write_parent(prepared: _PreparedParent, *, actor: Any, authority: ImportAuthority, state: _WriteState,
                  job: ImportJob | None) -> str:
    """Create or update one parent and its images. Returns created | updated | unchanged.

    An existing parent's answer, solution and answer type (derived from the answer) are kept unless the
    uploader may edit private fields; the outcome then depends on public fields only, so a row cannot be
    used to test whether a guessed answer is right."""
    source = _source_for(name=prepared.source_name, license=prepared.source_license, actor=actor)
    fields = dict(prepared.fields)
    # The Kit's file hashes describe the files, not the problem: kept current, never a content change.
    kit_source = fields.pop("kit_source", None)
    parent = ParentProblem.objects.select_for_update().filter(problem_id=prepared.problem_id).first()
    if parent is not None and kit_source is not None and parent.kit_source != kit_source:
        ParentProblem.objects.filter(pk=parent.pk).update(kit_source=kit_source)
        parent.kit_source = kit_source
    job_ref = {"import_job": job.pk} if job is not None else {}
    if parent is None:
        parent = ParentProblem(problem_id=prepared.problem_id, source=source, **fields,
                               **({"kit_source": kit_source} if kit_source is not None else {}))
        parent.save()
        _sync_images(parent, prepared.images, state)
        after = _parent_snapshot(parent, [*fields, "status", "version"])
        after.update(
            source=source.name, images=[[p.image_id, p.info.sha256] for p in prepared.images], **job_ref
        )
        event_record(actor=actor, verb="parent.imported", obj=parent, after=after)
        return "created"

    if prepared.keep_private_on_update or not authority.may_edit_private:
        for name in (*PRIVATE_FIELDS, "answer_type"):
            fields.pop(name, None)
        if prepared.carries_private and not authority.may_edit_private:
            prepared.report.warn(
                "PRIVATE_FIELDS_KEPT",
                "The answer and solution of an existing problem change only by an admin; the stored ones are kept.",
            )
    if prepared.keep_private_on_update and not fields.get("domain"):
        fields.pop("domain", None)
    changed = [name for name, value in fields.items() if getattr(parent, name) != value]
    source_changed = parent.source_id != source.pk
    before = _parent_snapshot(parent, changed)
    if source_changed:
        before["source"] = parent.source.name
    old_images = [[image.image_id, image.sha256] for image in parent.images.all()]
    for name in changed:
        setattr(parent, name, fields[name])
    parent.source = source
    images_changed = _sync_images(parent, prepared.images, state)
    if not changed and not source_changed and not images_changed:
        return "unchanged"
    parent.version += 1
    parent.save()
    after = _parent_snapshot(parent, changed)
    if source_changed:
        after["source"] = source.name
    if images_changed:
        before["images"] = old_images
        after["images"] = [[p.image_id, p.info.sha256] for p in prepared.images]
    after.update(version=parent.version, **job_ref)
    event_record(actor=actor, verb="parent.reimported", obj=parent, before=before, after=after)
    private_changed = sorted(set(PRIVATE_FIELDS) & set(changed))
    if private_changed:  # only an admin (or the server's operator) gets here
        event_record(actor=actor, verb="parent.private_fields_changed", obj=parent,
                     before={n: before[n] for n in private_changed},
                     after={**{n: after[n] for n in private_changed}, **job_ref})
    if parent.passes.exists() and ({"stem", "query", "options"} & set(changed) or images_changed):
        prepared.report.warn(
            "PARENT_CHANGED_UNDER_PASSES",
            "The problem text or images changed and the problem already has pass documents; "
            "check them against the new version.",
        )
    return "updated"


def _run_writes(
    prepared_rows: list[_PreparedParent], *, actor: Any, job: ImportJob | None, write_passes: bool
) -> None:
    state = _WriteState()
    authority = ImportAuthority.of(actor)
    storage = ProblemImage._meta.get_field("file").storage
    try:
        with transaction.atomic():
            for prepared in prepared_rows:
                outcome = _write_parent(prepared, actor=actor, authority=authority, state=state, job=job)
                if write_passes:
                    parent = ParentProblem.objects.select_for_update().get(problem_id=prepared.problem_id)
                    passes_changed = _write_passes(parent, prepared, actor=actor, authority=authority)
                    status_changed = _refresh_kit_parent_status(parent, prepared, actor=actor, authority=authority)
                    if (passes_changed or status_changed) and outcome == "unchanged":
                        outcome = "updated"
                prepared.report.outcome = outcome
    except BaseException:
        for name in state.saved_files:  # the rows are gone; do not leave their files behind
            storage.delete(name)
        for prepared in prepared_rows:
            prepared.report.outcome = "not_imported"
        raise


def _finish(
    report: ImportReport,
    prepared_rows: list[_PreparedParent],
    *,
    actor: Any,
    job: ImportJob | None,
    write_passes: bool,
) -> ImportReport:
    if report.has_errors:
        report.mark_failed()
    else:
        try:
            _run_writes(prepared_rows, actor=actor, job=job, write_passes=write_passes)
        except ApplicationError as exc:  # e.g. a file changed between the check and the write
            report.error(exc.code.upper(), exc.message)
            report.mark_failed()
    _job_finish(job, report)
    return report


# --------------------------------------------------------------------------------------------
# 1. Problems manifest


def _prepare_problem_row(
    row: RowReport, data: dict[str, Any], *, base: Path, seen_ids: dict[str, int]
) -> _PreparedParent | None:
    problem_id = _check_problem_id(row, data.get("id"), seen_ids)
    source = _check_text(
        row, data.get("source"), "source", required=True, allow_empty=False, max_length=MAX_LENGTHS["source"]
    )
    source_id = _check_text(
        row,
        data.get("source_id"),
        "source_id",
        required=True,
        allow_empty=False,
        max_length=MAX_LENGTHS["source_sample_id"],
    )
    license_ = _check_text(
        row, data.get("license"), "license", required=False, max_length=MAX_LENGTHS["license"]
    )
    for name in ("statement", "question"):
        if name not in data:
            row.error("FIELD_MISSING", f"The field {name!r} is required (it may be empty).", field=name)
    statement = _check_text(row, data.get("statement"), "statement", required=False)
    question = _check_text(row, data.get("question"), "question", required=False)
    if "statement" in data and "question" in data and not statement.strip() and not question.strip():
        row.error("FIELD_MISSING", "The statement and the question are both empty.", field="question")
    answer = _check_text(row, data.get("answer"), "answer", required=False)
    solution = _check_text(row, data.get("solution"), "solution", required=False)
    domain = _check_text(row, data.get("domain"), "domain", required=False, max_length=MAX_LENGTHS["domain"])
    meta = data.get("meta")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        row.error("FIELD_INVALID", "The field 'meta' must be an object.", field="meta")
        meta = {}
    split = data.get("source_split", meta.get("source_split")) or "default"
    split = _check_text(
        row, split, "source_split", required=True, allow_empty=False, max_length=MAX_LENGTHS["source_split"]
    )
    options = _normalize_options(row, data.get("options"))

    language = data.get("language")
    if language is None:
        language = detect_language(statement, question)
    elif language not in ParentProblem.Language.values:
        row.error("LANGUAGE_UNRESOLVED", f"Language {language!r} must be 'en' or 'zh'.")

    declared_type = data.get("answer_type", meta.get("answer_type"))
    answer_type = resolve_answer_type(declared=declared_type, options=options, answer=answer)

    images_value = data.get("images")
    if images_value is None:
        images_value = []
    if not isinstance(images_value, list):
        row.error("FIELD_INVALID", "The field 'images' must be a list.", field="images")
        images_value = []
    images: list[_PreparedImage] = []
    for index, entry in enumerate(images_value):
        label = f"image {index + 1}"
        declared: dict[str, Any] = {}
        if isinstance(entry, dict):
            relative = entry.get("path")
            declared = {"sha256": entry.get("sha256")}
        else:
            relative = entry
        prepared = _check_image(
            row, base=base, relative=relative, image_id=f"img_{index}", label=label, declared=declared
        )
        if prepared is not None:
            images.append(prepared)

    if row.errors:
        return None
    fields = {
        "source_split": split,
        "source_sample_id": source_id,
        "language": language,
        "raw_question": f"{statement}\n\n{question}".strip(),
        "stem": statement,
        "query": question,
        "options": options,
        "answer": answer,
        "solution": solution,
        "answer_type": answer_type,
        "domain": domain,
        "meta": meta,
    }
    return _PreparedParent(
        report=row,
        problem_id=problem_id,
        source_name=source,
        source_license=license_,
        fields=fields,
        images=images,
        carries_private=any(data.get(name) not in (None, "") for name in PRIVATE_FIELDS),
    )


def import_problems_manifest(
    *, manifest_path: Path, actor: Any = None, job: ImportJob | None = None, image_root: Path | None = None
) -> ImportReport:
    """Import a problems manifest: JSONL rows shaped like ``fixtures/real_physics/manifest.jsonl``.

    Row → ParentProblem mapping:

    - ``id`` → ``problem_id`` (Kit safe_id); ``source`` → ``Source.name`` (``license`` → its licence);
      ``source_id`` → ``source_sample_id``; ``source_split`` from the row, else ``meta.source_split``,
      else ``"default"``.
    - ``statement`` → ``stem``; ``question`` → ``query``; ``raw_question`` = statement + blank line +
      question, stripped. Both keys are required; they may not both be empty.
    - ``options``: null → []; strings → ``[{id: A|B|…, text}]``; objects ``{id|label, text}`` → ``{id, text}``.
    - ``language`` from the row (en|zh), else ``zh`` if any CJK ideograph is in statement/question, else ``en``.
    - ``answer``/``solution``: null → "". ``answer_type``: see ``resolve_answer_type`` (row or meta
      ``answer_type``, ``multiple_choice`` → choice, options → choice, a numeric answer → calc, else short).
    - ``domain`` and ``meta`` kept as given.
    - ``images``: paths relative to the manifest folder (or ``image_root``), as strings or
      ``{path, sha256}``; stored byte for byte as ``img_0``, ``img_1``… in order, after the Kit §2.10
      checks with the configured caps.

    Every row is checked first; if any row has an error nothing is imported and the report says
    ``failed``. A parent's workflow status is never changed by a re-import.
    """
    manifest_path = Path(manifest_path)
    report = ImportReport(kind=ImportJob.Kind.PROBLEMS.value)
    base = Path(image_root) if image_root is not None else manifest_path.parent
    lines = _read_jsonl(manifest_path, report, missing_code="MANIFEST_MISSING")
    prepared_rows: list[_PreparedParent] = []
    if lines is not None:
        if not lines:
            report.error("MANIFEST_EMPTY", f"{manifest_path.name} has no rows.")
        _job_start(job, total=len(lines))
        seen_ids: dict[str, int] = {}
        for done, ((_number, data), row) in enumerate(zip(lines, report.rows, strict=True), start=1):
            if data is not None:
                prepared = _prepare_problem_row(row, data, base=base, seen_ids=seen_ids)
                if prepared is not None:
                    prepared_rows.append(prepared)
            _job_progress(job, done=done)
        _check_license_conflicts(prepared_rows)
    return _finish(report, prepared_rows, actor=actor, job=job, write_passes=False)


def _check_license_conflicts(prepared_rows: list[_PreparedParent]) -> None:
    first: dict[str, tuple[str | None, int]] = {}
    for prepared in prepared_rows:
        name, license_ = prepared.source_name, prepared.source_license
        if name not in first:
            first[name] = (license_, prepared.report.row)
            continue
        first_license, first_row = first[name]
        if license_ is not None and license_ != first_license:
            prepared.report.warn(
                "SOURCE_LICENSE_CONFLICT",
                f"Source {name!r} has a different licence on line {first_row}; that one is kept.",
            )
            prepared.source_license = first_license


# --------------------------------------------------------------------------------------------
# 2. Kit source workspace


@dataclass
class _KitInputs:
    workspace: Path
    dataset_root: Path | None
    review_problems: dict[str, Any]
    answers: dict[str, dict[str, Any]]


def _read_json_file(path: Path, report: ImportReport | RowReport, *, code: str) -> tuple[bool, Any]:
    """(found, value) — a missing file is (False, None); an unreadable one records ``code``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return False, None
    except OSError as exc:
        report.error(code, f"{path.name} could not be read ({exc.strerror}).")
        return True, None
    try:
        return True, _parse_stored_json(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        report.error(code, f"{path.name} is not valid JSON ({exc}).")
        return True, None


def _resolve_dataset_root(
    workspace: Path, dataset_root: Path | None, report: ImportReport, confine_to: Path | None
) -> Path | None:
    found, config = _read_json_file(
        workspace / "workspace_config.json", report, code="WORKSPACE_CONFIG_INVALID"
    )
    if dataset_root is None:
        if not found:
            report.error(
                "WORKSPACE_CONFIG_MISSING",
                "workspace_config.json was not found; give the dataset folder explicitly.",
            )
            return None
        if config is None:
            return None
        dataset_dir = config.get("dataset_dir") if isinstance(config, dict) else None
        path_base = config.get("path_base", "workspace") if isinstance(config, dict) else None
        if not isinstance(dataset_dir, str) or not dataset_dir.strip() or path_base != "workspace":
            report.error(
                "WORKSPACE_CONFIG_INVALID",
                "workspace_config.json needs a string dataset_dir (relative to the workspace).",
            )
            return None
        dataset_root = workspace / dataset_dir
    dataset_root = Path(dataset_root).resolve()
    if confine_to is not None and not dataset_root.is_relative_to(Path(confine_to).resolve()):
        report.error(
            "DATASET_ROOT_OUTSIDE_UPLOAD",
            "The dataset folder must be inside the uploaded archive (put it inside the workspace).",
        )
        return None
    if not dataset_root.is_dir():
        report.error("DATASET_ROOT_MISSING", f"The dataset folder {dataset_root.name!r} was not found.")
        return None
    return dataset_root


def _read_review_state(workspace: Path, report: ImportReport) -> dict[str, Any]:
    found, state = _read_json_file(workspace / "reviews" / "state.json", report, code="REVIEW_STATE_INVALID")
    if not found:
        report.warn(
            "REVIEW_STATE_MISSING", "reviews/state.json was not found; no pass is imported as approved."
        )
        return {}
    if state is None:
        return {}
    problems = state.get("problems") if isinstance(state, dict) else None
    if not isinstance(problems, dict) or not all(isinstance(v, dict) for v in problems.values()):
        report.error("REVIEW_STATE_INVALID", 'reviews/state.json must be {"problems": {problem_id: {...}}}.')
        return {}
    return problems


def _read_answers_sidecar(workspace: Path, report: ImportReport) -> dict[str, dict[str, Any]]:
    path = workspace / "private" / "answers.jsonl"
    if not path.exists():
        return {}
    scratch = ImportReport(kind=report.kind)
    lines = _read_jsonl(path, scratch, missing_code="ANSWERS_INVALID")
    answers: dict[str, dict[str, Any]] = {}
    for (number, data), row in zip(lines or [], scratch.rows, strict=True):
        for issue in row.errors:
            report.error("ANSWERS_INVALID", f"private/answers.jsonl: {issue['message']}", line=number)
        if data is None:
            continue
        pid = data.get("problem_id")
        bad_text = [
            k
            for k in ("answer", "solution", "answer_type", "domain")
            if data.get(k) is not None and not isinstance(data.get(k), str)
        ]
        if not isinstance(pid, str) or not pid or bad_text:
            report.error(
                "ANSWERS_INVALID",
                f"private/answers.jsonl line {number}: needs a problem_id and string fields.",
                line=number,
            )
            continue
        if pid in answers:
            report.error(
                "ANSWERS_INVALID", f"private/answers.jsonl line {number}: {pid} appears twice.", line=number
            )
            continue
        answers[pid] = data
    report.errors.extend(scratch.errors)
    return answers


KNOWN_KIT_ROW_KEYS = {
    "problem_id",
    "images",
    "language",
    "raw_question",
    "segmentation",
    "segments",
    "source_dataset",
    "source_split",
    "source_sample_id",
}


def _prepare_kit_row(
    row: RowReport, data: dict[str, Any], *, inputs: _KitInputs, seen_ids: dict[str, int],
    authority: ImportAuthority,
) -> _PreparedParent | None:
    problem_id = _check_problem_id(row, data.get("problem_id"), seen_ids)
    review = inputs.review_problems.get(problem_id, {}) if problem_id else {}
    segments, segmentation = data.get("segments"), data.get("segmentation", {})
    override = review.get("segmentation_override")
    if isinstance(override, dict) and "segments" in override and "segmentation" in override:
        segments, segmentation = override["segments"], override["segmentation"]
        row.warn(
            "SEGMENTATION_OVERRIDDEN", "The review state's segmentation_override replaces the manifest's."
        )
    if not isinstance(segments, dict):
        row.error(
            "FIELD_MISSING", "The field 'segments' {stem, query, options} is required.", field="segments"
        )
        segments = {}
    if segmentation is None:
        segmentation = {}
    if not isinstance(segmentation, dict):
        row.error("FIELD_INVALID", "The field 'segmentation' must be an object.", field="segmentation")
        segmentation = {}
    stem = _check_text(row, segments.get("stem"), "segments.stem", required=False)
    query = _check_text(row, segments.get("query"), "segments.query", required=False)
    options = _normalize_options(row, segments.get("options"), label_key="label")
    identity = {}
    for name in ("source_dataset", "source_split", "source_sample_id"):
        max_length = MAX_LENGTHS["source" if name == "source_dataset" else name]
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            row.error(
                "SOURCE_IDENTITY_MISSING", f"The field {name!r} must be a non-empty string.", field=name
            )
            value = ""
        elif len(value) > max_length:
            row.error(
                "FIELD_TOO_LONG", f"The field {name!r} is longer than {max_length} characters.", field=name
            )
        identity[name] = value
    language = data.get("language")
    if language not in ParentProblem.Language.values:
        row.error("LANGUAGE_UNRESOLVED", f"Language {language!r} must be 'en' or 'zh'.")
    raw_question = _check_text(row, data.get("raw_question"), "raw_question", required=False)
    if not raw_question:
        raw_question = f"{stem}\n\n{query}".strip()

    images: list[_PreparedImage] = []
    images_value = data.get("images") if data.get("images") is not None else []
    if not isinstance(images_value, list):
        row.error("FIELD_INVALID", "The field 'images' must be a list.", field="images")
        images_value = []
    image_ids: set[str] = set()
    for index, entry in enumerate(images_value):
        label = f"image {index + 1}"
        if not isinstance(entry, dict):
            row.error(
                "FIELD_INVALID", f"{label}: must be an object {{image_id, path, width, height, sha256}}."
            )
            continue
        image_id = entry.get("image_id")
        if not isinstance(image_id, str) or not image_id or len(image_id) > MAX_LENGTHS["image_id"]:
            row.error("IMAGE_ID_INVALID", f"{label}: image_id must be a non-empty string.")
            continue
        if image_id.startswith("V"):
            row.error(
                "SOURCE_IMAGE_RENDER_ID_COLLISION",
                f"{label}: image id {image_id!r} starts with V, which is reserved for rendered views.",
            )
            continue
        if image_id in image_ids:
            row.error("IMAGE_ID_DUPLICATE", f"{label}: image id {image_id!r} appears twice.")
            continue
        image_ids.add(image_id)
        if inputs.dataset_root is None:
            continue
        declared = {k: entry.get(k) for k in ("sha256", "width", "height")}
        prepared = _check_image(
            row,
            base=inputs.dataset_root,
            relative=entry.get("path"),
            image_id=image_id,
            label=label,
            declared=declared,
        )
        if prepared is not None:
            images.append(prepared)

    passes = _prepare_passes(row, problem_id, review, inputs=inputs, authority=authority) if problem_id else []
    if passes and not row.errors:
        passes = _validate_passes(row, passes, problem_id=problem_id, stem=stem, query=query, images=images)

    answers = inputs.answers.get(problem_id)
    pass4 = next((p.document for p in passes if p.pass_no == 4), None)
    pass4_domain = pass4.get("domain") if isinstance(pass4, dict) else None
    if answers is not None:
        answer = answers.get("answer") or ""
        solution = answers.get("solution") or ""
        domain = answers.get("domain") or (pass4_domain if isinstance(pass4_domain, str) else "")
        answer_type = resolve_answer_type(declared=answers.get("answer_type"), options=options, answer=answer)
    else:
        answer, solution = "", ""
        domain = pass4_domain if isinstance(pass4_domain, str) else ""
        answer_type = ParentProblem.AnswerType.CHOICE if options else ParentProblem.AnswerType.SHORT
    if len(domain) > MAX_LENGTHS["domain"]:
        row.error(
            "FIELD_TOO_LONG", f"The domain is longer than {MAX_LENGTHS['domain']} characters.", field="domain"
        )

    excluded = _kit_exclusion(row, review, authority)
    if row.errors:
        return None
    fields = {
        "source_split": identity["source_split"],
        "source_sample_id": identity["source_sample_id"],
        "language": language,
        "raw_question": raw_question,
        "stem": stem,
        "query": query,
        "options": options,
        "answer": answer,
        "solution": solution,
        "answer_type": answer_type,
        "domain": domain,
        "segmentation": segmentation,
        "meta": {k: v for k, v in data.items() if k not in KNOWN_KIT_ROW_KEYS},
    }
    fields["kit_source"] = kit_source_record(
        row=data, review=review, passes={p.pass_no: (p.file_sha256, p.document_sha256) for p in passes},
        guard=kit_source_guard(stem=stem, query=query, options=options, language=language,
                               source_name=identity["source_dataset"], split=identity["source_split"],
                               sample=identity["source_sample_id"],
                               images=[(i.image_id, i.info.sha256) for i in images]))
    return _PreparedParent(
        report=row,
        problem_id=problem_id,
        source_name=identity["source_dataset"],
        source_license=None,
        fields=fields,
        images=images,
        keep_private_on_update=answers is None,
        carries_private=answers is not None,
        passes=passes,
        is_kit=True,
        excluded=excluded,
    )


def _kit_exclusion(row: RowReport, review: dict[str, Any], authority: ImportAuthority) -> bool:
    """An exclusion in the review state is a review decision: it counts only from an uploader who may review."""
    exclusion = review.get("exclusion")
    if not (isinstance(exclusion, dict) and exclusion.get("status") == "excluded"):
        return False
    if not authority.may_review:
        row.warn("SOURCE_REVIEW_NOT_IMPORTED", "The review state excludes this problem; only source reviewers "
                 "and admins can import review decisions, so the exclusion is ignored.")
        return False
    return True


def _refresh_kit_parent_status(parent: ParentProblem, prepared: _PreparedParent, *, actor: Any,
                               authority: ImportAuthority) -> bool:
    """A kit row's parent status follows what is stored now: excluded (an allowed exclusion, or kept when
    the uploader may not review), annotated when Passes 1–4 are freshly approved, in annotation when it has
    documents, else new. True if it changed."""
    if prepared.excluded or (parent.status == ParentProblem.Status.EXCLUDED and not authority.may_review):
        wanted = ParentProblem.Status.EXCLUDED
    elif parent_passes_approved(parent=parent):
        wanted = ParentProblem.Status.ANNOTATED
    elif parent.passes.exists():
        wanted = ParentProblem.Status.IN_ANNOTATION
    else:
        wanted = ParentProblem.Status.NEW
    if parent.status == wanted:
        return False
    before = parent.status
    parent.status = wanted
    parent.save(update_fields=["status", "updated_at"])
    event_record(actor=actor, verb="parent.status_changed", obj=parent, before={"status": before},
                 after={"status": wanted, "by": "import"})
    return True


def _prepare_passes(
    row: RowReport, problem_id: str, review: dict[str, Any], *, inputs: _KitInputs, authority: ImportAuthority
) -> list[_PreparedPass]:
    stages = review.get("stages") or {}
    if not isinstance(stages, dict):
        row.error("REVIEW_STATE_INVALID", "stages must be an object.")
        stages = {}
    passes: list[_PreparedPass] = []
    for pass_no in PASS_NUMBERS:
        path = inputs.workspace / "passes" / f"pass{pass_no}" / f"{problem_id}.json"
        stage = stages.get(f"pass{pass_no}")
        found, document = _read_json_file(path, row, code="PASS_JSON_INVALID")
        if not found:
            if pass_no in REQUIRED_PASSES:
                row.warn(
                    "SOURCE_PASS_MISSING",
                    f"passes/pass{pass_no}/{problem_id}.json is missing.",
                    pass_no=pass_no,
                )
            if isinstance(stage, dict) and stage.get("status") == "approved":
                row.warn(
                    "SOURCE_REVIEW_WITHOUT_DOCUMENT",
                    f"Pass {pass_no} is approved in the review state but has no document.",
                    pass_no=pass_no,
                )
            continue
        if document is None:  # unreadable: already an error
            continue
        if not isinstance(document, dict):
            row.error(
                "PASS_NOT_OBJECT",
                f"passes/pass{pass_no}/{problem_id}.json must be a JSON object.",
                pass_no=pass_no,
            )
            continue
        if document.get("problem_id", problem_id) != problem_id:
            row.error(
                "PASS_PROBLEM_ID_MISMATCH",
                f"passes/pass{pass_no}/{problem_id}.json is for problem {document.get('problem_id')!r}.",
                pass_no=pass_no,
            )
            continue
        try:
            document_sha256 = digest(document)
        except (RecursionError, ValueError, UnicodeEncodeError):
            row.error("PASS_JSON_INVALID", f"passes/pass{pass_no}/{problem_id}.json cannot be stored "
                      "(too deeply nested, or text that is not valid Unicode).", pass_no=pass_no)
            continue
        status, reviewer, note = _pass_status_from_stage(row, pass_no, stage, document_sha256, authority)
        passes.append(
            _PreparedPass(
                pass_no=pass_no,
                document=document,
                document_sha256=document_sha256,
                status=status,
                reviewer=reviewer,
                review_note=note,
                file_sha256=bytes_digest(path.read_bytes()),
            )
        )
    return passes


def _pass_status_from_stage(
    row: RowReport, pass_no: int, stage: Any, document_sha256: str, authority: ImportAuthority
) -> tuple[str, str, str]:
    """Approved only when the stage's hash matches the document (Kit §2.3) and the uploader may review;
    otherwise submitted."""
    if not isinstance(stage, dict):
        return PassDocument.Status.SUBMITTED, "", ""
    status = stage.get("status")
    note = stage.get("note") if isinstance(stage.get("note"), str) else ""
    if status in ("approved", "rejected") and not authority.may_review:
        row.warn(
            "SOURCE_REVIEW_NOT_IMPORTED",
            f"The review state records Pass {pass_no} as {status}; only source reviewers and admins can import "
            "review decisions, so it is imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", ""
    if status == "rejected":
        return PassDocument.Status.REJECTED, "", note
    if status != "approved":
        return PassDocument.Status.SUBMITTED, "", note
    if stage.get("document_sha256") != document_sha256:
        row.warn(
            "SOURCE_REVIEW_HASH_STALE",
            f"Pass {pass_no} was approved for another version of the document "
            f"({stage.get('document_sha256')!r} ≠ {document_sha256}); imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", note
    reviewer = stage.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip() or len(reviewer) > 150:
        row.warn(
            "SOURCE_REVIEWER_MISSING",
            f"Pass {pass_no} is approved without a usable reviewer name; imported as submitted.",
            pass_no=pass_no,
        )
        return PassDocument.Status.SUBMITTED, "", note
    return PassDocument.Status.APPROVED, reviewer, note


def _validate_passes(
    row: RowReport,
    passes: list[_PreparedPass],
    *,
    problem_id: str,
    stem: str,
    query: str,
    images: list[_PreparedImage],
) -> list[_PreparedPass]:
    """Validate each document as the workspace does (same validator, same context of earlier passes).
    Issues are reported; a document with any issue is stored as a draft, never approved or submitted
    (the workspace refuses to submit it too)."""
    documents = {p.pass_no: p.document for p in passes}
    image_refs = [ImageRef(p.image_id, p.info.width, p.info.height) for p in images]
    checked = []
    for prepared in passes:
        context = context_for(prepared.pass_no, problem_id=problem_id, stem=stem, query=query, images=image_refs,
                              earlier=documents)
        try:
            issues = [issue.as_dict() for issue in validate_pass_document(prepared.pass_no, prepared.document, context)]
        except Exception:  # contract: never raises; if it does, the document is not trusted
            logger.exception("pass validator failed on %s pass %s", problem_id, prepared.pass_no)
            issues = [{"code": "PASS_VALIDATOR_FAILED", "path": "",
                       "message": "The validator could not check this document."}]
        if prepared.pass_no in REQUIRED_PASSES:
            issues += forbidden_key_issues(prepared.document)
        for issue in issues:
            row.warn(issue["code"], issue["message"], pass_no=prepared.pass_no, path=issue.get("path", ""))
        if issues and prepared.status != PassDocument.Status.DRAFT:
            if prepared.status == PassDocument.Status.APPROVED:
                row.warn("SOURCE_REVIEW_DOCUMENT_INVALID",
                         f"Pass {prepared.pass_no} is approved in the review state but has validation issues; "
                         "it is imported as a draft and needs fixing and a new review.", pass_no=prepared.pass_no)
            prepared = replace(prepared, status=PassDocument.Status.DRAFT, reviewer="")
        checked.append(prepared)
    return checked


def _approval_fields(prepared: _PreparedPass, authority: ImportAuthority) -> dict[str, Any]:
    """The review fields an imported document is stored with. An approval is an *imported approval* by
    the uploader (who may review); the file's reviewer name is provenance text, never an account."""
    if prepared.status != PassDocument.Status.APPROVED:
        return {"status": prepared.status, "review_note": prepared.review_note}
    return {"status": prepared.status, "review_note": prepared.review_note,
            "approved_sha256": prepared.document_sha256, "approved_by": authority.user, "approved_at": timezone.now(),
            "approval_origin": PassDocument.ApprovalOrigin.IMPORT, "approval_provenance": prepared.reviewer[:200]}


def _pass_event_state(doc: PassDocument) -> dict[str, Any]:
    return {"version": doc.version, "document_sha256": doc.document_sha256, "status": doc.status,
            "approved_sha256": doc.approved_sha256, "approval_origin": doc.approval_origin,
            "approval_provenance": doc.approval_provenance,
            "approved_by": doc.approved_by.get_username() if doc.approved_by_id else None}


def _write_passes(parent: ParentProblem, prepared_parent: _PreparedParent, *, actor: Any,
                  authority: ImportAuthority) -> bool:
    """Create or update the parent's pass documents. True if any changed.

    - A new document is stored with the status the check phase allowed (approved only from an uploader
      who may review, and only when valid).
    - The same content: only an allowed import may approve or reject it; anything else leaves it alone.
    - Other content: a new version (history kept). It never silently replaces an approved document: the
      new version is ``submitted`` (``draft`` when invalid) and the old approval stays on record, stale.
    """
    changed_any = False
    existing = {doc.pass_no: doc for doc in PassDocument.objects.select_for_update().filter(parent=parent)}
    for prepared in prepared_parent.passes:
        doc = existing.get(prepared.pass_no)
        same_content = doc is not None and doc.document_sha256 == prepared.document_sha256
        last_editor = doc.updated_by_id if same_content else getattr(authority.user, "pk", None)
        if (prepared.status in (PassDocument.Status.APPROVED, PassDocument.Status.REJECTED) and authority.user
                and permissions.is_self_review(authority.user, last_editor_id=last_editor)):
            prepared_parent.report.warn(
                "SOURCE_REVIEW_SELF_REVIEW",
                f"Pass {prepared.pass_no}: you would review a document you are the last editor of (this import "
                "writes it); it is imported as submitted for another reviewer.", pass_no=prepared.pass_no)
            prepared = replace(prepared, status=PassDocument.Status.SUBMITTED, reviewer="", review_note="")
        if doc is None:
            doc = PassDocument.objects.create(
                parent=parent, pass_no=prepared.pass_no, document=prepared.document,
                document_sha256=prepared.document_sha256, updated_by=authority.user,
                **_approval_fields(prepared, authority))
            pass_version_record(doc=doc, actor=actor)
            event_record(actor=actor, verb="pass.imported", obj=doc,
                         after={"problem_id": parent.problem_id, "pass_no": doc.pass_no, **_pass_event_state(doc)})
            changed_any = True
            continue
        before = _pass_event_state(doc)
        if same_content:
            if doc.approval_is_fresh or prepared.status not in (PassDocument.Status.APPROVED,
                                                                PassDocument.Status.REJECTED):
                continue
            if doc.status == prepared.status and doc.review_note == prepared.review_note:
                continue
            for name, value in _approval_fields(prepared, authority).items():
                setattr(doc, name, value)
            doc.save()
            event_record(actor=actor, verb="pass.review_imported", obj=doc, before=before,
                         after=_pass_event_state(doc))
            changed_any = True
            continue
        was_approved = doc.status == PassDocument.Status.APPROVED
        doc.document, doc.document_sha256 = prepared.document, prepared.document_sha256
        if was_approved:
            prepared_parent.report.warn(
                "APPROVED_DOCUMENT_REPLACED",
                f"Pass {prepared.pass_no} was approved; the imported document differs, so it is stored as a new "
                "version for review and the approval is stale.", pass_no=prepared.pass_no)
            # approved_sha256/approved_by stay: the old approval remains on record but is no longer fresh
            doc.status = (PassDocument.Status.DRAFT if prepared.status == PassDocument.Status.DRAFT
                          else PassDocument.Status.SUBMITTED)
            doc.review_note = ""
        else:
            for name, value in _approval_fields(prepared, authority).items():
                setattr(doc, name, value)
        doc.version += 1
        doc.updated_by = authority.user
        doc.save()
        pass_version_record(doc=doc, actor=actor)
        event_record(actor=actor, verb="pass.reimported", obj=doc, before=before, after=_pass_event_state(doc))
        changed_any = True
    return changed_any


def import_kit_workspace(
    *,
    workspace: Path,
    dataset_root: Path | None = None,
    actor: Any = None,
    job: ImportJob | None = None,
    confine_to: Path | None = None,
) -> ImportReport:
    """Import a kit source workspace (Kit §2.1–§2.3): parents, images, pass documents, review state.

    - Parent from each ``blind/manifest.jsonl`` row: ``segments.stem/query/options`` (option ``label``
      → ``id``), ``source_dataset`` → Source, ``source_split``, ``source_sample_id`` (all three
      required: SOURCE_IDENTITY_MISSING), ``language`` en|zh (else LANGUAGE_UNRESOLVED),
      ``segmentation`` kept, other keys kept in ``meta``; a review-state ``segmentation_override``
      with both ``segments`` and ``segmentation`` replaces the manifest's.
    - Images from ``dataset_root`` (default: ``workspace_config.json``'s ``dataset_dir``, relative to
      the workspace), with their kit image ids; declared sha256/width/height must match.
    - ``private/answers.jsonl`` (optional) gives answer, solution, answer_type, domain. Without it a
      new parent gets answer "" and answer_type choice (options) or short, and an existing parent
      keeps its private fields. Domain falls back to Pass 4's ``domain``.
    - ``passes/pass<n>/<pid>.json`` (1–4, 5 optional) read strictly and stored with
      ``document_sha256 = digest(document)``. Review state counts only for an uploader who may review
      (``ImportAuthority``): a stage approved for exactly that hash, on a document the validator finds no
      issue in, is stored as an *imported approval* by the uploader (``approval_origin=import``, the
      file's reviewer name as ``approval_provenance``); otherwise it is submitted (SOURCE_REVIEW_NOT_IMPORTED,
      SOURCE_REVIEW_HASH_STALE, SOURCE_REVIEW_SELF_REVIEW) or a draft (validator issues, reported as
      warnings). An approved document is never replaced silently: other content becomes a new version in
      ``submitted`` with a stale approval (APPROVED_DOCUMENT_REPLACED).
    - Parent status follows what is stored: excluded if an allowed review state excludes it, annotated if
      Passes 1–4 are freshly approved, in_annotation if it has pass documents, else new.

    ``confine_to`` (uploads): the dataset folder must lie inside it.
    """
    workspace = Path(workspace)
    report = ImportReport(kind=ImportJob.Kind.KIT_WORKSPACE.value)
    resolved_dataset = _resolve_dataset_root(workspace, dataset_root, report, confine_to)
    review_problems = _read_review_state(workspace, report)
    answers = _read_answers_sidecar(workspace, report)
    inputs = _KitInputs(
        workspace=workspace, dataset_root=resolved_dataset, review_problems=review_problems, answers=answers
    )
    authority = ImportAuthority.of(actor)
    lines = _read_jsonl(workspace / "blind" / "manifest.jsonl", report, missing_code="MANIFEST_MISSING")
    prepared_rows: list[_PreparedParent] = []
    if lines is not None:
        if not lines:
            report.error("MANIFEST_EMPTY", "blind/manifest.jsonl has no rows.")
        _job_start(job, total=len(lines))
        seen_ids: dict[str, int] = {}
        for done, ((_number, data), row) in enumerate(zip(lines, report.rows, strict=True), start=1):
            if data is not None:
                prepared = _prepare_kit_row(row, data, inputs=inputs, seen_ids=seen_ids, authority=authority)
                if prepared is not None:
                    prepared_rows.append(prepared)
            _job_progress(job, done=done)
        _warn_orphans(report, workspace, set(seen_ids), answers)
    return _finish(report, prepared_rows, actor=actor, job=job, write_passes=True)


def _warn_orphans(
    report: ImportReport, workspace: Path, problem_ids: set[str], answers: dict[str, Any]
) -> None:
    for pass_no in PASS_NUMBERS:
        folder = workspace / "passes" / f"pass{pass_no}"
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            if path.stem not in problem_ids:
                report.warn(
                    "SOURCE_PASS_ORPHAN", f"passes/pass{pass_no}/{path.name} has no manifest row; ignored."
                )
    for pid in sorted(set(answers) - problem_ids):
        report.warn(
            "ANSWER_ORPHAN", f"private/answers.jsonl has a row for {pid}, which is not in the manifest."
        )


# --------------------------------------------------------------------------------------------
# 4. Uploads (zip) and the job runner


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


def _checked_zip_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
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
                f"times; the limit is {max_ratio} (a zip bomb?).", code="import_zip_ratio")
        total += info.file_size
        compressed += info.compress_size
    if total > ZIP_RATIO_FLOOR and total > max_ratio * max(compressed, 1):
        raise ApplicationError(f"The archive expands {total / max(compressed, 1):,.0f} times; the limit is {max_ratio}.",
                               code="import_zip_ratio")
    limit = _max_uncompressed_bytes()
    if total > limit:
        raise ApplicationError(
            f"The archive expands to {total:,} bytes; the limit is {limit:,}.", code="import_zip_too_large"
        )
    return members


def _find_root(names: Iterable[str], kind: str) -> str:
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
    limit = min(_max_uncompressed_bytes(),
                max(ZIP_RATIO_FLOOR, settings.PHYSALIGN_IMPORT_MAX_ZIP_RATIO * archive_path.stat().st_size))
    written = 0
    destination = destination.resolve()
    with zipfile.ZipFile(archive_path) as archive:
        for info in _checked_zip_members(archive):
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


@transaction.atomic
def import_job_create(*, kind: str, upload: UploadedFile, actor: Any) -> ImportJob:
    """Accept a .zip upload for ``kind`` and queue its import. The archive is checked here, before
    anything is queued: a readable zip within the size caps, safe entry names, no symlinks, and the
    expected layout (``manifest.jsonl``, or a kit workspace's ``blind/manifest.jsonl``, at the root
    or in one top-level folder)."""
    if kind not in ImportJob.Kind.values:
        raise ApplicationError(f"Unknown import kind {kind!r}.", code="import_kind_invalid")
    max_bytes = settings.PHYSALIGN_IMPORT_MAX_BYTES
    name = Path(upload.name or "upload.zip").name
    if upload.size is not None and upload.size > max_bytes:
        raise ApplicationError(
            f"The upload is {upload.size:,} bytes; the limit is {max_bytes:,}.",
            code="import_too_large",
            status=413,
        )
    if not name.lower().endswith(".zip"):
        raise ApplicationError("Upload a .zip archive.", code="import_not_zip")
    upload.seek(0)
    try:
        with zipfile.ZipFile(upload) as archive:
            members = _checked_zip_members(archive)
            _find_root((info.filename for info in members), kind)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise ApplicationError("The upload is not a readable .zip archive.", code="import_not_zip") from exc
    upload.seek(0)
    job = ImportJob(
        kind=kind,
        original_name=name[:300],
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    job.upload.save(name, upload, save=False)
    job.save()
    event_record(
        actor=actor,
        verb="import_job.created",
        obj=job,
        after={"kind": kind, "original_name": job.original_name, "size": upload.size},
    )
    from .tasks import import_job_run_task

    transaction.on_commit(partial(import_job_run_task.delay, job.pk))
    return job


def import_job_run(*, job_id: int) -> ImportJob:
    """Run a queued upload: extract it to a temporary folder, import it, clean up.

    Safe to run twice (the task is acks_late): a finished job is left alone, and the importers are
    idempotent. A refused archive marks the job failed with the reason.
    """
    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ).update(status=ImportJob.Status.RUNNING)
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    if not claimed:
        return job
    try:
        _run_upload(job)
    finally:
        job.refresh_from_db(fields=["status"])
        if job.status in (SUCCEEDED, FAILED):
            import_job_discard_upload(job=job)
    return job


def _run_upload(job: ImportJob) -> None:
    with tempfile.TemporaryDirectory(prefix="physalign-import-") as scratch:
        scratch_path = Path(scratch)
        archive_path = scratch_path / "upload.zip"
        with job.upload.open("rb") as source, open(archive_path, "wb") as sink:
            shutil.copyfileobj(source, sink)
        extracted = scratch_path / "files"
        extracted.mkdir()
        try:
            extract_zip(archive_path, extracted)
            with zipfile.ZipFile(archive_path) as archive:
                root = _find_root(archive.namelist(), job.kind)
        except (ApplicationError, zipfile.BadZipFile) as exc:
            import_job_fail(job=job, message=getattr(exc, "message", str(exc)), code="IMPORT_ARCHIVE_REFUSED")
            return
        folder = extracted / root if root else extracted
        if job.kind == ImportJob.Kind.PROBLEMS:
            import_problems_manifest(manifest_path=folder / "manifest.jsonl", actor=job.created_by, job=job)
        else:
            import_kit_workspace(workspace=folder, actor=job.created_by, job=job, confine_to=extracted)
