"""One Kit manifest row: its parent fields, exclusion and status."""

from __future__ import annotations

from typing import Any

from audit.services import event_record

from ..models import ParentProblem
from ..selectors import kit_source_guard, kit_source_record, parent_passes_approved
from .authority import ImportAuthority
from .kit_files import KitInputs
from .kit_passes import prepare_passes, validate_passes
from .prepared import PreparedImage, PreparedParent, PreparedPass
from .report import MAX_LENGTHS, RowReport
from .rows import check_image, check_problem_id, check_text, normalize_options, resolve_answer_type

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


def prepare_kit_row(
    row: RowReport,
    data: dict[str, Any],
    *,
    inputs: KitInputs,
    seen_ids: dict[str, int],
    authority: ImportAuthority,
) -> PreparedParent | None:
    problem_id = check_problem_id(row, data.get("problem_id"), seen_ids)
    review = inputs.review_problems.get(problem_id, {}) if problem_id else {}
    segments, segmentation = _kit_segments(row, data, review)
    stem = check_text(row, segments.get("stem"), "segments.stem", required=False)
    query = check_text(row, segments.get("query"), "segments.query", required=False)
    options = normalize_options(row, segments.get("options"), label_key="label")
    identity = _kit_identity(row, data)
    language = data.get("language")
    if language not in ParentProblem.Language.values:
        row.error("LANGUAGE_UNRESOLVED", f"Language {language!r} must be 'en' or 'zh'.")
    raw_question = check_text(row, data.get("raw_question"), "raw_question", required=False)
    if not raw_question:
        raw_question = f"{stem}\n\n{query}".strip()
    images = _kit_images(row, data, inputs)

    passes = prepare_passes(row, problem_id, review, inputs=inputs, authority=authority) if problem_id else []
    if passes and not row.errors:
        passes = validate_passes(row, passes, problem_id=problem_id, stem=stem, query=query, images=images)

    answers = inputs.answers.get(problem_id)
    private = _kit_answer_fields(row, answers, passes, options)
    excluded = _kit_exclusion(row, review, authority)
    if row.errors:
        return None
    assert isinstance(language, str)  # one of ParentProblem.Language.values, else row.errors above
    fields = {
        "source_split": identity["source_split"],
        "source_sample_id": identity["source_sample_id"],
        "language": language,
        "raw_question": raw_question,
        "stem": stem,
        "query": query,
        "options": options,
        "answer": private["answer"],
        "solution": private["solution"],
        "answer_type": private["answer_type"],
        "domain": private["domain"],
        "segmentation": segmentation,
        "meta": {k: v for k, v in data.items() if k not in KNOWN_KIT_ROW_KEYS},
    }
    fields["kit_source"] = kit_source_record(
        row=data,
        review=review,
        passes={p.pass_no: (p.file_sha256, p.document_sha256) for p in passes},
        guard=kit_source_guard(
            stem=stem,
            query=query,
            options=options,
            language=language,
            source_name=identity["source_dataset"],
            split=identity["source_split"],
            sample=identity["source_sample_id"],
            images=[(i.image_id, i.info.sha256) for i in images],
        ),
    )
    return PreparedParent(
        report=row,
        problem_id=problem_id,
        source_name=identity["source_dataset"],
        source_license=(inputs.source_licenses or {}).get(identity["source_dataset"]),
        fields=fields,
        images=images,
        keep_private_on_update=answers is None,
        carries_private=answers is not None,
        passes=passes,
        is_kit=True,
        excluded=excluded,
    )


def _kit_segments(
    row: RowReport, data: dict[str, Any], review: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The row's ``segments`` and ``segmentation`` (the review state's ``segmentation_override`` replaces
    both); an invalid one is reported and read as empty."""
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
    return segments, segmentation


def _kit_identity(row: RowReport, data: dict[str, Any]) -> dict[str, str]:
    """``source_dataset``, ``source_split`` and ``source_sample_id``: each a non-empty string within its
    length (a missing one is reported and read as "")."""
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
    return identity


def _kit_images(row: RowReport, data: dict[str, Any], inputs: KitInputs) -> list[PreparedImage]:
    """The row's images, each with a valid, unique source image id; read and checked only when the
    upload has a dataset folder."""
    images: list[PreparedImage] = []
    images_value = data.get("images") if data.get("images") is not None else []
    if not isinstance(images_value, list):
        row.error("FIELD_INVALID", "The field 'images' must be a list.", field="images")
        images_value = []
    image_ids: set[str] = set()
    for index, entry in enumerate(images_value):
        label = f"image {index + 1}"
        image_id = _kit_image_id(row, entry, label=label, seen=image_ids)
        if image_id is None:
            continue
        image_ids.add(image_id)
        if inputs.dataset_root is None:
            continue
        declared = {k: entry.get(k) for k in ("sha256", "width", "height")}
        prepared = check_image(
            row,
            base=inputs.dataset_root,
            relative=entry.get("path"),
            image_id=image_id,
            label=label,
            declared=declared,
        )
        if prepared is not None:
            images.append(prepared)
    return images


def _kit_image_id(row: RowReport, entry: Any, *, label: str, seen: set[str]) -> str | None:
    """The image entry's ``image_id`` when the entry is an object and the id is usable: non-empty, within its
    length, not starting with V (reserved for rendered views) and not in ``seen``; else reported, None."""
    if not isinstance(entry, dict):
        row.error("FIELD_INVALID", f"{label}: must be an object {{image_id, path, width, height, sha256}}.")
        return None
    image_id = entry.get("image_id")
    if not isinstance(image_id, str) or not image_id or len(image_id) > MAX_LENGTHS["image_id"]:
        row.error("IMAGE_ID_INVALID", f"{label}: image_id must be a non-empty string.")
        return None
    if image_id.startswith("V"):
        row.error(
            "SOURCE_IMAGE_RENDER_ID_COLLISION",
            f"{label}: image id {image_id!r} starts with V, which is reserved for rendered views.",
        )
        return None
    if image_id in seen:
        row.error("IMAGE_ID_DUPLICATE", f"{label}: image id {image_id!r} appears twice.")
        return None
    return image_id


def _kit_answer_fields(
    row: RowReport, answers: dict[str, Any] | None, passes: list[PreparedPass], options: list[dict[str, str]]
) -> dict[str, str]:
    """``answer``, ``solution``, ``answer_type`` and ``domain``: from the answers file when it has the problem
    (the domain falling back to Pass 4's), else empty, the type from the options and the domain Pass 4's."""
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
    return {"answer": answer, "solution": solution, "answer_type": answer_type, "domain": domain}


def _kit_exclusion(row: RowReport, review: dict[str, Any], authority: ImportAuthority) -> bool:
    """An exclusion in the review state is a review decision: it counts only from an uploader who may review."""
    exclusion = review.get("exclusion")
    if not (isinstance(exclusion, dict) and exclusion.get("status") == "excluded"):
        return False
    if not authority.may_review:
        row.warn(
            "SOURCE_REVIEW_NOT_IMPORTED",
            "The review state excludes this problem; only source reviewers "
            "and admins can import review decisions, so the exclusion is ignored.",
        )
        return False
    return True


def refresh_kit_parent_status(
    parent: ParentProblem, prepared: PreparedParent, *, actor: Any, authority: ImportAuthority
) -> bool:
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
    event_record(
        actor=actor,
        verb="parent.status_changed",
        obj=parent,
        before={"status": before},
        after={"status": wanted, "by": "import"},
    )
    return True
