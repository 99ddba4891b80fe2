"""The Kit source workspace importer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..models import ImportJob
from .authority import ImportAuthority
from .kit_files import (
    KitInputs,
    read_answers_sidecar,
    read_review_state,
    read_sources_sidecar,
    resolve_dataset_root,
)
from .kit_rows import prepare_kit_row
from .prepared import PreparedParent
from .progress import job_progress, job_start
from .report import PASS_NUMBERS, ImportReport
from .rows import read_jsonl
from .writes import write_or_refuse


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
      ``segmentation`` kept, other keys kept in ``meta``; ``sources.json`` (optional, the app's export sidecar)
      gives each source's licence; a review-state ``segmentation_override``
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
    - A problem with an approved pass keeps its statement, question, options and images unless the uploader
      may review: for anyone else the row is ``refused`` whole (APPROVED_CONTENT_CHANGE_REFUSED, nothing of the
      problem or its passes written). A reviewer's or admin's change makes those approvals stale
      (APPROVALS_STALE), and the file's own approvals of the same documents do not renew them
      (SOURCE_REVIEW_CONTENT_CHANGED): approvals are bound to the problem's content (``annotation.binding``).
    - Parent status follows what is stored: excluded if an allowed review state excludes it, annotated if
      Passes 1–4 are freshly approved, in_annotation if it has pass documents, else new.

    ``confine_to`` (uploads): the dataset folder must lie inside it.
    """
    workspace = Path(workspace)
    report = ImportReport(kind=ImportJob.Kind.KIT_WORKSPACE.value)
    resolved_dataset = resolve_dataset_root(workspace, dataset_root, report, confine_to)
    review_problems = read_review_state(workspace, report)
    answers = read_answers_sidecar(workspace, report)
    inputs = KitInputs(
        workspace=workspace,
        dataset_root=resolved_dataset,
        review_problems=review_problems,
        answers=answers,
        source_licenses=read_sources_sidecar(workspace, report),
    )
    authority = ImportAuthority.of(actor)
    lines = read_jsonl(workspace / "blind" / "manifest.jsonl", report, missing_code="MANIFEST_MISSING")
    prepared_rows: list[PreparedParent] = []
    if lines is not None:
        if not lines:
            report.error("MANIFEST_EMPTY", "blind/manifest.jsonl has no rows.")
        job_start(job, total=len(lines))
        seen_ids: dict[str, int] = {}
        for done, ((_number, data), row) in enumerate(zip(lines, report.rows, strict=True), start=1):
            if data is not None:
                prepared = prepare_kit_row(row, data, inputs=inputs, seen_ids=seen_ids, authority=authority)
                if prepared is not None:
                    prepared_rows.append(prepared)
            job_progress(job, done=done)
        _warn_orphans(report, workspace, set(seen_ids), answers)
    return write_or_refuse(report, prepared_rows, actor=actor, job=job, write_passes=True)


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
