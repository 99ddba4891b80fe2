"""Reading a Kit workspace's files: the dataset root, the review state and the private answers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .report import ImportReport, RowReport
from .rows import parse_stored_json, read_jsonl


@dataclass
class KitInputs:
    workspace: Path
    dataset_root: Path | None
    review_problems: dict[str, Any]
    answers: dict[str, dict[str, Any]]
    source_licenses: dict[str, str] | None = None  # ``sources.json`` (the app's export sidecar), if any


def read_json_file(path: Path, report: ImportReport | RowReport, *, code: str) -> tuple[bool, Any]:
    """(found, value) — a missing file is (False, None); an unreadable one records ``code``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return False, None
    except OSError as exc:
        report.error(code, f"{path.name} could not be read ({exc.strerror}).")
        return True, None
    try:
        return True, parse_stored_json(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        report.error(code, f"{path.name} is not valid JSON ({exc}).")
        return True, None


def resolve_dataset_root(
    workspace: Path, dataset_root: Path | None, report: ImportReport, confine_to: Path | None
) -> Path | None:
    found, config = read_json_file(
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


def read_review_state(workspace: Path, report: ImportReport) -> dict[str, Any]:
    found, state = read_json_file(workspace / "reviews" / "state.json", report, code="REVIEW_STATE_INVALID")
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


def read_answers_sidecar(workspace: Path, report: ImportReport) -> dict[str, dict[str, Any]]:
    path = workspace / "private" / "answers.jsonl"
    if not path.exists():
        return {}
    scratch = ImportReport(kind=report.kind)
    lines = read_jsonl(path, scratch, missing_code="ANSWERS_INVALID")
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


SOURCES_SCHEMA = "physalign_studio_sources_v1"


def read_sources_sidecar(workspace: Path, report: ImportReport) -> dict[str, str]:
    """``sources.json`` (written by ``export_kit_workspace``; the Kit ignores it): each source's licence, so a
    workspace exported here and imported elsewhere keeps it. Missing: {}; malformed: an error."""
    found, value = read_json_file(workspace / "sources.json", report, code="SOURCES_INVALID")
    if not found or value is None:
        return {}
    sources = value.get("sources") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or value.get("schema_version") != SOURCES_SCHEMA
        or not isinstance(sources, dict)
        or not all(isinstance(v, dict) and isinstance(v.get("license", ""), str) for v in sources.values())
    ):
        report.error(
            "SOURCES_INVALID",
            f'sources.json must be {{"schema_version": "{SOURCES_SCHEMA}", "sources": {{name: {{"license": "..."}}}}}}.',
        )
        return {}
    return {name: entry.get("license", "") for name, entry in sources.items()}
