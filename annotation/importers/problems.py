"""The problems manifest importer (JSONL + images)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..models import ImportJob, ParentProblem
from .prepared import PreparedImage, PreparedParent
from .progress import job_progress, job_start
from .report import MAX_LENGTHS, PRIVATE_FIELDS, ImportReport, RowReport
from .rows import (
    check_image,
    check_problem_id,
    check_text,
    detect_language,
    normalize_options,
    read_jsonl,
    resolve_answer_type,
)
from .writes import write_or_refuse


def _prepare_problem_row(
    row: RowReport, data: dict[str, Any], *, base: Path, seen_ids: dict[str, int]
) -> PreparedParent | None:
    problem_id = check_problem_id(row, data.get("id"), seen_ids)
    source = check_text(
        row, data.get("source"), "source", required=True, allow_empty=False, max_length=MAX_LENGTHS["source"]
    )
    source_id = check_text(
        row,
        data.get("source_id"),
        "source_id",
        required=True,
        allow_empty=False,
        max_length=MAX_LENGTHS["source_sample_id"],
    )
    license_ = check_text(
        row, data.get("license"), "license", required=False, max_length=MAX_LENGTHS["license"]
    )
    statement, question = _problem_statement_question(row, data)
    answer = check_text(row, data.get("answer"), "answer", required=False)
    solution = check_text(row, data.get("solution"), "solution", required=False)
    domain = check_text(row, data.get("domain"), "domain", required=False, max_length=MAX_LENGTHS["domain"])
    meta = _problem_meta(row, data)
    split = data.get("source_split", meta.get("source_split")) or "default"
    split = check_text(
        row, split, "source_split", required=True, allow_empty=False, max_length=MAX_LENGTHS["source_split"]
    )
    options = normalize_options(row, data.get("options"))

    language = data.get("language")
    if language is None:
        language = detect_language(statement, question)
    elif language not in ParentProblem.Language.values:
        row.error("LANGUAGE_UNRESOLVED", f"Language {language!r} must be 'en' or 'zh'.")

    declared_type = data.get("answer_type", meta.get("answer_type"))
    answer_type = resolve_answer_type(declared=declared_type, options=options, answer=answer)
    images = _problem_images(row, data, base=base)

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
    return PreparedParent(
        report=row,
        problem_id=problem_id,
        source_name=source,
        source_license=license_,
        fields=fields,
        images=images,
        carries_private=any(data.get(name) not in (None, "") for name in PRIVATE_FIELDS),
    )


def _problem_statement_question(row: RowReport, data: dict[str, Any]) -> tuple[str, str]:
    """``statement`` and ``question``: both keys are required, and they may not both be empty."""
    for name in ("statement", "question"):
        if name not in data:
            row.error("FIELD_MISSING", f"The field {name!r} is required (it may be empty).", field=name)
    statement = check_text(row, data.get("statement"), "statement", required=False)
    question = check_text(row, data.get("question"), "question", required=False)
    if "statement" in data and "question" in data and not statement.strip() and not question.strip():
        row.error("FIELD_MISSING", "The statement and the question are both empty.", field="question")
    return statement, question


def _problem_meta(row: RowReport, data: dict[str, Any]) -> dict[str, Any]:
    """``meta`` as given; null is {}, anything but an object is reported and read as {}."""
    meta = data.get("meta")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        row.error("FIELD_INVALID", "The field 'meta' must be an object.", field="meta")
        return {}
    return meta


def _problem_images(row: RowReport, data: dict[str, Any], *, base: Path) -> list[PreparedImage]:
    """The row's images (paths, or ``{path, sha256}``), checked and stored as ``img_0``, ``img_1``… in order."""
    images_value = data.get("images")
    if images_value is None:
        images_value = []
    if not isinstance(images_value, list):
        row.error("FIELD_INVALID", "The field 'images' must be a list.", field="images")
        images_value = []
    images: list[PreparedImage] = []
    for index, entry in enumerate(images_value):
        label = f"image {index + 1}"
        declared: dict[str, Any] = {}
        if isinstance(entry, dict):
            relative = entry.get("path")
            declared = {"sha256": entry.get("sha256")}
        else:
            relative = entry
        prepared = check_image(
            row, base=base, relative=relative, image_id=f"img_{index}", label=label, declared=declared
        )
        if prepared is not None:
            images.append(prepared)
    return images


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
    ``failed``. A parent's workflow status is never changed by a re-import, except that an annotated parent
    whose approvals went stale (a source reviewer or admin changed its content) is back in annotation.

    What the uploader may change (``ImportAuthority``): a problem with an approved pass keeps its statement,
    question, options and images unless the uploader may review (else the row is ``refused`` and nothing of it
    is written); a source's licence, and an existing problem's source, change only by an admin (else the
    change is refused and reported, the rest of the row is imported). Each row's report names what changed
    (``changed``) and what was refused (``refused``); the report's ``sources`` say the same per source.
    """
    manifest_path = Path(manifest_path)
    report = ImportReport(kind=ImportJob.Kind.PROBLEMS.value)
    base = Path(image_root) if image_root is not None else manifest_path.parent
    lines = read_jsonl(manifest_path, report, missing_code="MANIFEST_MISSING")
    prepared_rows: list[PreparedParent] = []
    if lines is not None:
        if not lines:
            report.error("MANIFEST_EMPTY", f"{manifest_path.name} has no rows.")
        job_start(job, total=len(lines))
        seen_ids: dict[str, int] = {}
        for done, ((_number, data), row) in enumerate(zip(lines, report.rows, strict=True), start=1):
            if data is not None:
                prepared = _prepare_problem_row(row, data, base=base, seen_ids=seen_ids)
                if prepared is not None:
                    prepared_rows.append(prepared)
            job_progress(job, done=done)
        _check_license_conflicts(prepared_rows)
    return write_or_refuse(report, prepared_rows, actor=actor, job=job, write_passes=False)


def _check_license_conflicts(prepared_rows: list[PreparedParent]) -> None:
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
