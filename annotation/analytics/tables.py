"""The analytics page's tables, one definition for both the page and its CSV downloads: each table's columns, its
rows as raw values (the CSV) and as display text (the page)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .figures import FIGURE_COLUMNS, RATE_FIELDS, Tally, csv_value, duration_label, figure_values
from .selectors import AnnotationAnalytics, GroupRow

TEXT, NUMBER, RATE, RATIO, SECONDS = "text", "number", "rate", "ratio", "seconds"


@dataclass(frozen=True)
class Column:
    key: str  # the CSV header
    label: str  # the page's header
    kind: str


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool


@dataclass(frozen=True)
class Table:
    slug: str
    title: str
    columns: list[Column]
    rows: list[list[Any]]

    def display_rows(self) -> list[list[Cell]]:
        return [
            [
                Cell(display(value, column.kind), column.kind != TEXT)
                for value, column in zip(row, self.columns, strict=True)
            ]
            for row in self.rows
        ]

    def csv_text(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow([column.key for column in self.columns])
        for row in self.rows:
            writer.writerow([csv_value(value) for value in row])
        return out.getvalue()


def display(value: Any, kind: str) -> str:
    if value is None:
        return "—"
    if kind == RATE:
        return f"{100 * value:.1f}%"
    if kind == RATIO:
        return f"{value:.2f}"
    if kind == SECONDS:
        return duration_label(value)
    return str(value)


FIGURES = [
    Column(
        key,
        label,
        RATIO
        if key == "findings_per_document"
        else RATE
        if key in RATE_FIELDS
        else SECONDS
        if key == "active_seconds"
        else NUMBER,
    )
    for key, label, _ in FIGURE_COLUMNS
]


def _group_table(slug: str, title: str, name: Column, groups: list[GroupRow]) -> Table:
    return Table(slug, title, [name, *FIGURES], [[g.name, *figure_values(g.tally)] for g in groups])


def annotators_table(data: AnnotationAnalytics) -> Table:
    return Table(
        "annotators",
        "Per annotator and pass",
        [Column("annotator", "Annotator", TEXT), Column("pass", "Pass", NUMBER), *FIGURES],
        [[row.username, row.pass_no, *figure_values(row.tally)] for row in data.annotators],
    )


def annotator_totals_table(data: AnnotationAnalytics) -> Table:
    return _group_table(
        "annotator_totals",
        "Per annotator, every pass",
        Column("annotator", "Annotator", TEXT),
        data.annotator_totals,
    )


def sources_table(data: AnnotationAnalytics) -> Table:
    return _group_table("sources", "Per problem source", Column("source", "Source", TEXT), data.sources)


def domains_table(data: AnnotationAnalytics) -> Table:
    return _group_table("domains", "Per domain", Column("domain", "Domain", TEXT), data.domains)


def rejections_table(data: AnnotationAnalytics) -> Table:
    columns = [
        Column("rejected_at", "Rejected", TEXT),
        Column("problem_id", "Problem", TEXT),
        Column("pass", "Pass", NUMBER),
        Column("source", "Source", TEXT),
        Column("domain", "Domain", TEXT),
        Column("annotator", "Annotator", TEXT),
        Column("reviewer", "Reviewer", TEXT),
        Column("note", "Reason (the reviewer's note)", TEXT),
        Column("record_comments", "Record comments", TEXT),
    ]
    rows = [
        [
            r.at.strftime("%Y-%m-%d %H:%M:%S"),
            r.problem_id,
            r.pass_no,
            r.source,
            r.domain,
            r.annotator,
            r.reviewer,
            r.note,
            " | ".join(r.comments),
        ]
        for r in data.rejections
    ]
    return Table("rejections", "Rejections and their reasons", columns, rows)


TABLES: dict[str, Callable[[AnnotationAnalytics], Table]] = {
    "annotators": annotators_table,
    "annotator_totals": annotator_totals_table,
    "sources": sources_table,
    "domains": domains_table,
    "rejections": rejections_table,
}


def chart_data(data: AnnotationAnalytics) -> dict[str, Any]:
    """What the page's charts draw (``static/js/annotation_analytics.js``), as JSON-ready values."""
    names = [row.name for row in data.annotator_totals]
    passes = sorted({row.pass_no for row in data.annotators})
    by_key = {(row.username, row.pass_no): row.tally for row in data.annotators}

    def hours(tally: Tally | None) -> float:
        return round(tally.active_seconds / 3600, 3) if tally else 0.0

    def percent(value: float | None) -> float | None:
        return round(100 * value, 1) if value is not None else None

    return {
        "annotators": names,
        "active_hours": [
            {"label": f"Pass {p}", "values": [hours(by_key.get((name, p))) for name in names]} for p in passes
        ],
        "submissions": [row.tally.submissions for row in data.annotator_totals],
        "rejections": [row.tally.rejections for row in data.annotator_totals],
        "rates": [
            {
                "label": label,
                "values": [percent(getattr(row.tally, attribute)) for row in data.annotator_totals],
            }
            for label, attribute in (
                ("Draft acceptance", "draft_acceptance_rate"),
                ("Draft edit rate", "draft_edit_rate"),
                ("OCR acceptance", "ocr_acceptance_rate"),
                ("OCR edit rate", "ocr_edit_rate"),
            )
        ],
        "sources": [row.name for row in data.sources],
        "source_findings": [row.tally.findings_per_document for row in data.sources],
    }
