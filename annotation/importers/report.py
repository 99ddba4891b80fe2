"""What an import found: one report per row, and the whole import's report."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..models import SAFE_ID_PATTERN, ImportJob

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


@dataclass
class RowReport:
    """What happened to one input row. ``row`` is the 1-based line number in the manifest.

    ``changed`` names what the import wrote for this problem (``problem`` for a new one, else the fields:
    ``stem``, ``images``, ``source`` …, ``source.license``, ``pass<n>`` for a document, ``pass<n>.review`` for a
    review decision, ``status``); ``refused`` lists what the file asked for and the uploader may not change, each
    with the ``fields`` it concerns. A refused change is never applied and never reported as ``unchanged``."""

    row: int
    problem_id: str = ""
    outcome: str = "pending"  # created | updated | unchanged | refused | rejected | not_imported
    errors: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def error(self, code: str, message: str, **extra: Any) -> None:
        self.errors.append({"code": code, "message": message, **extra})

    def warn(self, code: str, message: str, **extra: Any) -> None:
        self.warnings.append({"code": code, "message": message, **extra})

    def refuse(self, code: str, message: str, *, fields: list[str]) -> None:
        self.refused.append({"code": code, "message": message, "fields": list(fields)})

    def note_changed(self, *names: str) -> None:
        for name in names:
            if name not in self.changed:
                self.changed.append(name)

    def settle(self, written: str) -> None:
        """The row's outcome from what was written: ``created``; ``updated`` when anything changed; ``refused``
        when nothing changed but something was refused; else ``unchanged``."""
        if written == "created":
            self.outcome = "created"
        elif self.changed:
            self.outcome = "updated"
        elif self.refused:
            self.outcome = "refused"
        else:
            self.outcome = "unchanged"

    def as_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "problem_id": self.problem_id,
            "outcome": self.outcome,
            "changed": list(self.changed),
            "refused": list(self.refused),
            "errors": list(self.errors),
            "warnings": list(self.warnings),
        }


@dataclass
class SourceReport:
    """What an import did to one source: created, fields changed (by an admin) and fields refused."""

    name: str
    created: bool = False
    changed: dict[str, dict[str, Any]] = field(default_factory=dict)  # field → {before, after}
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)  # field → {stored, file}

    @property
    def outcome(self) -> str:
        if self.created:
            return "created"
        if self.changed:
            return "updated"
        return "refused" if self.refused else "unchanged"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "changed": dict(self.changed),
            "refused": dict(self.refused),
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
    sources: dict[str, SourceReport] = field(default_factory=dict)

    def source(self, name: str) -> SourceReport:
        if name not in self.sources:
            self.sources[name] = SourceReport(name=name)
        return self.sources[name]

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
            "refused": 0,
            "rejected": 0,
            "not_imported": 0,
        }
        for row in self.rows:
            if row.outcome in counts:
                counts[row.outcome] += 1
        counts["refusals"] = sum(len(row.refused) for row in self.rows)
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
            "sources": [entry.as_dict() for _, entry in sorted(self.sources.items())],
            "rows": [row.as_dict() for row in self.rows],
        }

    def summary(self) -> str:
        c = self.counts
        if self.succeeded:
            refused = f", {c['refused']} refused" if c["refused"] else ""
            refusals = f"; {c['refusals']} changes refused" if c["refusals"] else ""
            return (
                f"Imported {c['rows']} rows: {c['created']} created, {c['updated']} updated, "
                f"{c['unchanged']} unchanged{refused}{refusals}; {c['warnings']} warnings."
            )
        return (
            f"Nothing imported: {c['errors']} errors in {c['rejected']} of {c['rows']} rows"
            f"{' and the files' if self.errors else ''}; {c['warnings']} warnings."
        )

    def text_lines(self) -> list[str]:
        """The report as plain text lines, one per row and one per problem (for the CLI)."""
        lines = [f"ERROR {issue['code']}: {issue['message']}" for issue in self.errors]
        lines += [f"WARNING {issue['code']}: {issue['message']}" for issue in self.warnings]
        for entry in (self.sources[name] for name in sorted(self.sources)):
            if entry.outcome != "unchanged":
                lines.append(f"source {entry.name}: {entry.outcome}")
                lines += [
                    f"  CHANGED {name}: {c['before']!r} -> {c['after']!r}"
                    for name, c in entry.changed.items()
                ]
                lines += [f"  REFUSED {name}: kept {r['stored']!r}" for name, r in entry.refused.items()]
        for row in self.rows:
            changed = f" ({', '.join(row.changed)})" if row.changed else ""
            lines.append(f"row {row.row} {row.problem_id or '-'}: {row.outcome}{changed}")
            lines += [f"  REFUSED {issue['code']}: {issue['message']}" for issue in row.refused]
            lines += [f"  ERROR {issue['code']}: {issue['message']}" for issue in row.errors]
            lines += [f"  WARNING {issue['code']}: {issue['message']}" for issue in row.warnings]
        return lines

    def mark_failed(self) -> None:
        """Nothing was written: no row changed anything, and no source either."""
        self.status = FAILED
        self.sources.clear()
        for row in self.rows:
            row.outcome = "rejected" if row.errors else "not_imported"
            row.changed.clear()
