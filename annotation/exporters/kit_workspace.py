"""The annotation work as a Kit source workspace (Kit §2.1–§2.3), the layout ``import_kit_workspace`` and the Kit's
converter read::

    workspace_config.json        {"dataset_dir": "dataset", "path_base": "workspace"}
    blind/manifest.jsonl         one row per parent (no answer, no solution)
    passes/pass<n>/<pid>.json    every stored pass document (1–5)
    reviews/state.json           {"problems": {pid: {"stages": {...}, "exclusion"?: {...}}}}
    dataset/<path>               the original images, byte for byte
    private/answers.jsonl        answer, solution, answer type and domain (the app's sidecar; the Kit ignores it)
    sources.json                 each source's licence (the app's sidecar; the Kit ignores it)
    FILE_MANIFEST.json           {path: sha256} of every other file (the Kit's sealed-folder convention)

Every JSON file is the Kit's canonical form (sorted keys, compact, UTF-8, one newline), so the export is a pure
function of what is stored: exported, imported into a fresh database and exported again, it gives the same bytes.

The review state holds what the Kit records and the importer reads back:

- a stage ``{"status": "approved", "document_sha256", "reviewer"}`` for each *fresh* approval (the reviewer's
  username, or for an imported approval the reviewer name its file gave), with ``note`` when the review left one;
- ``{"status": "rejected", "document_sha256", "note"}`` for a rejected pass (the Kit keeps no rejecting reviewer);
- nothing for a draft, a submitted pass or a stale approval (approved for another document or problem content:
  the Kit would refuse it as SOURCE_REVIEW_HASH_STALE, and it is no approval here either);
- ``"exclusion": {"status": "excluded"}`` for an excluded parent.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from django.db.models import Prefetch, QuerySet

from kit.canonical import bytes_digest, canonical_bytes, write_json_bytes
from physalign_site.errors import ApplicationError

from ..importers.kit_rows import KNOWN_KIT_ROW_KEYS
from ..models import ParentProblem, PassDocument, ProblemImage, Source

CONFIG = {"dataset_dir": "dataset", "path_base": "workspace"}
DATASET_DIR = "dataset"
SOURCES_SCHEMA = "physalign_studio_sources_v1"
MANIFEST_KEYS = KNOWN_KIT_ROW_KEYS  # the row keys the importer reads; any other key round-trips through meta
PASSES = (1, 2, 3, 4, 5)
REVIEWED_PASSES = (1, 2, 3, 4)
Progress = Callable[[int, int], None]


@dataclass
class WorkspaceExportSummary:
    output: Path
    problems: int = 0
    images: int = 0
    pass_files: int = 0
    approved_stages: int = 0
    rejected_stages: int = 0
    excluded: int = 0
    files: int = 0
    bytes_written: int = 0
    skipped_not_approved: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "images": self.images,
            "pass_files": self.pass_files,
            "approved_stages": self.approved_stages,
            "rejected_stages": self.rejected_stages,
            "excluded": self.excluded,
            "files": self.files,
            "bytes": self.bytes_written,
            "skipped_not_approved": len(self.skipped_not_approved),
        }


class _Folder:
    """Writes files under ``root`` and remembers each one's SHA-256 for FILE_MANIFEST.json."""

    def __init__(self, root: Path, summary: WorkspaceExportSummary) -> None:
        self.root, self.summary = root, summary
        self.hashes: dict[str, str] = {}

    def write(self, relative: str, data: bytes) -> None:
        path = self.root.joinpath(*PurePosixPath(relative).parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.hashes[relative] = bytes_digest(data)
        self.summary.files += 1
        self.summary.bytes_written += len(data)


def workspace_parents(
    *, source: str | None = None, problem_ids: Iterable[str] | None = None
) -> QuerySet[ParentProblem]:
    """The parents an export holds, in problem-id order, with what it writes prefetched (a fixed number of
    queries whatever the count)."""
    parents = (
        ParentProblem.objects.select_related("source")
        .prefetch_related(
            Prefetch("images", queryset=ProblemImage.objects.order_by("ordinal")),
            Prefetch(
                "passes", queryset=PassDocument.objects.select_related("approved_by").order_by("pass_no")
            ),
        )
        .order_by("problem_id")
    )
    if source:
        parents = parents.filter(source__name=source)
    if problem_ids is not None:
        parents = parents.filter(problem_id__in=list(problem_ids))
    return parents


def check_selection(source: str | None, problem_ids: list[str] | None) -> None:
    if source and not Source.objects.filter(name=source).exists():
        raise ApplicationError(f"There is no source named {source!r}.", code="SOURCE_UNKNOWN", status=400)
    if problem_ids:
        known = set(
            ParentProblem.objects.filter(problem_id__in=problem_ids).values_list("problem_id", flat=True)
        )
        missing = sorted(set(problem_ids) - known)
        if missing:
            raise ApplicationError(
                f"Unknown problem ids: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}.",
                code="PARENT_UNKNOWN",
                status=400,
                extra={"missing": missing},
            )


def fully_approved(parent: ParentProblem) -> bool:
    """Passes 1–4 stored and freshly approved (the rule ``parent_passes_approved`` applies in SQL)."""
    passes = {p.pass_no: p for p in parent.passes.all()}
    return all(n in passes and passes[n].approval_fresh_for(parent.content_sha256) for n in REVIEWED_PASSES)


def export_kit_workspace(
    *,
    output: Path,
    source: str | None = None,
    problem_ids: list[str] | None = None,
    approved_only: bool = False,
    progress: Progress | None = None,
) -> WorkspaceExportSummary:
    """Write the selected parents as a Kit source workspace into ``output`` (which must not exist, or be an empty
    folder). A failure removes what was written, so no half workspace is left to be trusted."""
    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ApplicationError(
            f"{output} already exists and is not an empty folder; choose a new one.",
            code="OUTPUT_NOT_EMPTY",
            status=400,
        )
    check_selection(source, problem_ids)
    output.mkdir(parents=True, exist_ok=True)
    try:
        return _write_workspace(
            output, source=source, problem_ids=problem_ids, approved_only=approved_only, progress=progress
        )
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise


def _write_workspace(
    output: Path,
    *,
    source: str | None,
    problem_ids: list[str] | None,
    approved_only: bool,
    progress: Progress | None,
) -> WorkspaceExportSummary:
    summary = WorkspaceExportSummary(output=output)
    folder = _Folder(output, summary)
    parents = list(workspace_parents(source=source, problem_ids=problem_ids))
    if approved_only:
        summary.skipped_not_approved = [p.problem_id for p in parents if not fully_approved(p)]
        parents = [p for p in parents if fully_approved(p)]
    folder.write("workspace_config.json", write_json_bytes(CONFIG))
    manifest, answers, review_state, sources = [], [], {}, {}
    used_paths: set[str] = set()
    total = len(parents)
    for done, parent in enumerate(parents, start=1):
        row = _manifest_row(parent, used_paths)
        for image, entry in zip(parent.images.all(), row["images"], strict=True):
            with image.file.open("rb") as handle:
                data = handle.read()
            if bytes_digest(data) != image.sha256:
                raise ApplicationError(
                    f"{parent.problem_id}/{image.image_id}: the stored file does not match its SHA-256.",
                    code="IMAGE_FILE_CHANGED",
                    status=500,
                )
            folder.write(f"{DATASET_DIR}/{entry['path']}", data)
            summary.images += 1
        for doc in parent.passes.all():
            folder.write(f"passes/pass{doc.pass_no}/{parent.problem_id}.json", write_json_bytes(doc.document))
            summary.pass_files += 1
        entry = _review_entry(parent, summary)
        if entry:
            review_state[parent.problem_id] = entry
        manifest.append(canonical_bytes(row) + b"\n")
        answers.append(canonical_bytes(_answers_row(parent)) + b"\n")
        sources[parent.source.name] = {"license": parent.source.license}
        summary.problems += 1
        if progress is not None:
            progress(done, total)
    folder.write("blind/manifest.jsonl", b"".join(manifest))
    folder.write("private/answers.jsonl", b"".join(answers))
    folder.write("reviews/state.json", write_json_bytes({"problems": review_state}))
    folder.write("sources.json", write_json_bytes({"schema_version": SOURCES_SCHEMA, "sources": sources}))
    folder.write("FILE_MANIFEST.json", write_json_bytes(dict(sorted(folder.hashes.items()))))
    return summary


def _manifest_row(parent: ParentProblem, used_paths: set[str]) -> dict[str, Any]:
    """The blind manifest row (Kit §2.2): what the importer reads back into the same parent. Extra keys the
    parent was imported with (``meta``) come back too; ``workspace_schema_version`` is 1 unless they say."""
    row: dict[str, Any] = {k: v for k, v in (parent.meta or {}).items() if k not in MANIFEST_KEYS}
    row.setdefault("workspace_schema_version", 1)
    row.update(
        {
            "problem_id": parent.problem_id,
            "images": [
                {
                    "image_id": image.image_id,
                    "path": _image_path(parent, image, used_paths),
                    "width": image.width,
                    "height": image.height,
                    "sha256": image.sha256,
                }
                for image in parent.images.all()
            ],
            "language": parent.language,
            "raw_question": parent.raw_question,
            "segmentation": parent.segmentation or {},
            "segments": {
                "stem": parent.stem,
                "query": parent.query,
                "options": [{"label": o["id"], "text": o["text"]} for o in parent.options or []],
            },
            "source_dataset": parent.source.name,
            "source_split": parent.source_split,
            "source_sample_id": parent.source_sample_id,
        }
    )
    return row


def _safe_path(name: str) -> bool:
    pure = PurePosixPath(name)
    return bool(
        name
        and "\\" not in name
        and "\0" not in name
        and not pure.is_absolute()
        and ".." not in pure.parts
        and "." not in pure.parts
        and not name.endswith("/")
        and ":" not in pure.parts[0]
    )


def _image_path(parent: ParentProblem, image: ProblemImage, used: set[str]) -> str:
    """The image's path under the dataset folder: the path it was imported from when that is a safe relative
    path no earlier image of this export took, else ``images/<pid>/<image_id>.<ext>``."""
    name = image.original_name
    if not (_safe_path(name) and name not in used):
        suffix = PurePosixPath(image.file.name or "").suffix or ".png"
        name = f"images/{parent.problem_id}/{image.image_id}{suffix}"
    used.add(name)
    return name


def _review_entry(parent: ParentProblem, summary: WorkspaceExportSummary) -> dict[str, Any]:
    stages: dict[str, Any] = {}
    for doc in parent.passes.all():
        if doc.pass_no not in REVIEWED_PASSES:
            continue
        if doc.status == PassDocument.Status.APPROVED and doc.approval_fresh_for(parent.content_sha256):
            stage = {"status": "approved", "document_sha256": doc.document_sha256, "reviewer": _reviewer(doc)}
            summary.approved_stages += 1
        elif doc.status == PassDocument.Status.REJECTED:
            stage = {"status": "rejected", "document_sha256": doc.document_sha256}
            summary.rejected_stages += 1
        else:
            continue
        if doc.review_note:
            stage["note"] = doc.review_note
        stages[f"pass{doc.pass_no}"] = stage
    entry: dict[str, Any] = {"stages": stages} if stages else {}
    if parent.status == ParentProblem.Status.EXCLUDED:
        entry["exclusion"] = {"status": "excluded"}
        summary.excluded += 1
    return entry


def _reviewer(doc: PassDocument) -> str:
    """Who approved, as text: an imported approval's reviewer name from its file, else the approver's
    username (an account never leaves, only its name)."""
    if doc.approval_origin == PassDocument.ApprovalOrigin.IMPORT and doc.approval_provenance:
        return doc.approval_provenance
    if doc.approved_by is not None:
        return doc.approved_by.get_username()
    return doc.approval_provenance or "unknown"


def _answers_row(parent: ParentProblem) -> dict[str, Any]:
    return {
        "problem_id": parent.problem_id,
        "answer": parent.answer,
        "solution": parent.solution,
        "answer_type": parent.answer_type,
        "domain": parent.domain,
    }
