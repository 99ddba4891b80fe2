"""Reading input files and the rules every row follows (ids, texts, options, answer types, images)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings

from physalign_site import jsonsafety

from ..images import ImageInfo, ImageRejected, inspect_image_bytes
from ..models import ParentProblem
from .prepared import PreparedImage, image_caps
from .report import (
    ANSWER_TYPE_ALIASES,
    ANSWER_TYPES,
    CJK_RE,
    NUMERIC_ANSWER_RE,
    OPTION_LETTERS,
    SAFE_ID_RE,
    ImportReport,
    RowReport,
)


def parse_stored_json(text: str | bytes) -> Any:
    """Kit-strict JSON (no duplicate keys, no NaN) that we can also store: no NUL or unpaired surrogate, not
    nested too deep, and no text longer than ``PHYSALIGN_TEXT_MAX_CHARS`` (a statement, an option, a label…).
    Every refusal is a ``ValueError`` whose message says what and where."""
    return jsonsafety.loads(text, max_string=settings.PHYSALIGN_TEXT_MAX_CHARS)


def read_jsonl(path: Path, report: ImportReport, *, missing_code: str) -> list[tuple[int, Any]] | None:
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
            value = parse_stored_json(line.decode("utf-8"))
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


def check_text(
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


def check_problem_id(row: RowReport, value: Any, seen: dict[str, int]) -> str:
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


def normalize_options(row: RowReport, value: Any, *, label_key: str = "label") -> list[dict[str, str]]:
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


def check_image(
    row: RowReport, *, base: Path, relative: Any, image_id: str, label: str, declared: dict[str, Any]
) -> PreparedImage | None:
    """Read and inspect one image; compare it with the declared sha256/width/height."""
    path = _safe_relative_path(row, base, relative, label=label)
    if path is None:
        return None
    if not path.is_file():
        row.error("IMAGE_MISSING", f"{label}: {relative} was not found.", path=relative)
        return None
    info = _inspect_image_file(row, path, relative=relative, label=label)
    if info is None or not _matches_declared(row, info, declared, relative=relative, label=label):
        return None
    return PreparedImage(image_id=image_id, path=path, original_name=relative, info=info)


def _inspect_image_file(row: RowReport, path: Path, *, relative: str, label: str) -> ImageInfo | None:
    """The file's ``ImageInfo`` under the configured caps, or None with the refusal reported. A file over the
    byte cap is refused before it is read into memory."""
    max_pixels, max_bytes = image_caps()
    size = path.stat().st_size
    if size > max_bytes:
        row.error(
            "IMAGE_TOO_LARGE_BYTES",
            f"{label}: {relative} is {size:,} bytes; the limit is {max_bytes:,}.",
            path=relative,
        )
        return None
    try:
        data = path.read_bytes()
        return inspect_image_bytes(data, max_pixels=max_pixels, max_bytes=max_bytes)
    except ImageRejected as exc:
        row.error(exc.code.upper(), f"{label}: {exc.message}", path=relative)
        return None
    except OSError as exc:
        row.error(
            "IMAGE_UNREADABLE", f"{label}: {relative} could not be read ({exc.strerror}).", path=relative
        )
        return None


def _matches_declared(
    row: RowReport, info: ImageInfo, declared: dict[str, Any], *, relative: str, label: str
) -> bool:
    """Whether the image has the declared sha256, width and height (each checked only when declared); every
    mismatch is reported."""
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
    return ok
