"""The release leakage scan (``release_layout.leakage_scan``) applied to an exported folder.

An export is rebuilt as the public part the scan knows: every exported file's text goes into one JSON file under
a scratch ``public/`` (the scan's global private tokens: canonical entity ids, source record ids and file hashes,
key field names), and every exported row is turned back into its public QA record (``qa_raw.json``,
``qa_gold.json``; the scan's per-probe tokens: gold answers, the source's answer, solution and entity names, the
reading packet in the raw condition). The private strings come from the release's own ``private/`` part.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from probes.release_layout import ValidationReport, leakage_scan

FileText = Callable[[Path], str]


def release_secrets(root: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The frozen records and the source's private strings of a release folder."""
    frozen = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((root / "private" / "frozen").glob("*.json"))
    ]
    private_path = root / "private" / "project" / "source" / "source_private.json"
    private = json.loads(private_path.read_text(encoding="utf-8")) if private_path.is_file() else {}
    return frozen, private


def export_leaks(
    release_root: Path,
    export_root: Path,
    records: Iterable[dict[str, Any]],
    file_text: FileText,
) -> list[dict[str, str]]:
    """The leakage scan's findings on an export: ``records`` are its rows as public QA records, ``file_text``
    gives the text of one exported file (binary formats decoded to the strings they hold)."""
    frozen, private = release_secrets(release_root)
    by_condition: dict[str, list[dict[str, Any]]] = {"raw": [], "gold": []}
    for record in records:
        by_condition.setdefault(str(record.get("condition")), []).append(record)
    report = ValidationReport()
    with tempfile.TemporaryDirectory(prefix="physalign-export-scan-") as scratch:
        public = Path(scratch) / "public"
        public.mkdir()
        for index, path in enumerate(sorted(p for p in export_root.rglob("*") if p.is_file())):
            name = path.relative_to(export_root).as_posix()
            (public / f"file_{index:05d}.json").write_text(
                json.dumps({"file": name, "text": file_text(path)}, ensure_ascii=False), encoding="utf-8"
            )
        for condition, rows in by_condition.items():
            (public / f"qa_{condition}.json").write_text(
                json.dumps(rows, ensure_ascii=False), encoding="utf-8"
            )
        leakage_scan(Path(scratch), frozen, private, report)
    return report.errors
