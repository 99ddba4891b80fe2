"""The datasheet as tables, one definition for the release page, the CSV, the Markdown of the Hugging Face dataset
card and the release folder's files (pure: no Django).

CSV (``csv_text``): one long CSV for every table, a row per cell, columns ``table,row,column,value``: ``table`` is
the table's slug (``table1a_sources``, ``table1b_partition``, ``table6_domains``, ``table7a_density``,
``table7b_summaries``, ``figure3_radar``, ``figure6_families``, ``figure6_terms`` and, when the release's
parents were double-annotated, ``agreement``), ``row`` the row's label (a source, a split, a domain group, …),
``column`` the column's key and ``value`` the raw value: counts as integers without separators, percentages and
ratios as the two-decimal text the page shows ("48.48"), nothing to divide as an empty cell. Pivot it on
``table`` and ``row`` to get each table back.

In the release folder (``folder_files``): ``datasheet.json`` (``figures.datasheet_json``) and ``datasheet.csv``,
at the top of the folder, beside release.json: neither the public part a model is given nor the private part the
validation rebuilds (see ``probes.releases``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from .figures import FULL, Datasheet, datasheet_json

TEXT, COUNT, VALUE, NOTE = "text", "count", "value", "note"  # NOTE: text in a column (left-aligned)
JSON_NAME, CSV_NAME = "datasheet.json", "datasheet.csv"


@dataclass(frozen=True)
class Column:
    key: str  # the CSV column
    label: str  # the page's and the card's header
    kind: str  # text (the row label), count (an integer), value (as computed: "48.48", "3; 1–6"), note (text)

    @property
    def numeric(self) -> bool:
        return self.kind in (COUNT, VALUE)


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool


@dataclass(frozen=True)
class Table:
    slug: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    total_last: bool = False  # the last row is the full release (shown in bold)

    def display_rows(self) -> list[list[Cell]]:
        return [
            [Cell(display(v, c.kind), c.numeric) for v, c in zip(row, self.columns, strict=True)]
            for row in self.rows
        ]


def display(value: Any, kind: str) -> str:
    if value is None:
        return "—"
    if kind == COUNT and isinstance(value, int):
        return f"{value:,}"
    return str(value)


def csv_cell(value: Any) -> str:
    """A CSV cell: None → empty; text a spreadsheet would run as a formula gets a leading ``'``."""
    if value is None:
        return ""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _c(key: str, label: str, kind: str = COUNT) -> Column:
    return Column(key, label, kind)


def datasheet_tables(sheet: Datasheet) -> list[Table]:
    """Every table of the datasheet in the paper's order (the agreement table only when there is one)."""
    tables = [
        Table(
            "table1a_sources",
            "Table 1(a). Source coverage",
            (
                _c("source", "Source dataset", TEXT),
                _c("parents", "Parents"),
                _c("parents_paired", "Parents with +GT"),
            ),
            tuple((r.source, r.parents, r.parents_paired) for r in sheet.sources),
            "Parents with +GT: parents with at least one paired +GT variant in the release.",
            total_last=True,
        ),
        Table(
            "table1b_partition",
            "Table 1(b). Development/test partition",
            (
                _c("split", "Split", TEXT),
                _c("parents", "Parents"),
                _c("probes", "Local probes"),
                _c("paired", "Paired +GT"),
            ),
            tuple((r.label, r.parents, r.probes, r.paired) for r in sheet.partition),
            "Paired +GT inputs are variants, not additional unique probes.",
            total_last=True,
        ),
        Table(
            "table6_domains",
            "Table 6. Estimated domain composition and parent-level paired-input coverage",
            (
                _c("group", "Domain group", TEXT),
                _c("count", "Count"),
                _c("share", "Share (%)", VALUE),
                _c("paired", "Paired"),
                _c("unpaired", "Unpaired"),
                _c("rate", "Rate (%)", VALUE),
            ),
            tuple((r.label, r.count, r.share, r.paired, r.unpaired, r.rate) for r in sheet.domains),
            f"Counts are parent problems. Share = 100·N_d/{sheet.parents:,}; Rate = 100·H_d/N_d; Unpaired = "
            "N_d − H_d (H_d: parents with at least one paired +GT variant). Domain groups are estimated from each "
            "parent's domain label; Cross-domain / uncertain and Unclassified are residual labels, not domains.",
            total_last=True,
        ),
        Table(
            "table7a_density",
            "Table 7(a). Split-level density and paired-probe coverage",
            (
                _c("split", "Split", TEXT),
                _c("density", "Localized probes / parent", VALUE),
                _c("coverage", "Paired-probe coverage (%)", VALUE),
            ),
            tuple((r.label, r.density, r.coverage) for r in sheet.partition),
            "Density = |G_s|/N_s; coverage = 100·|P_s|/|G_s|: "
            + ", ".join(f"{r.paired:,}/{r.probes:,} ({r.label.lower()})" for r in sheet.partition)
            + ".",
            total_last=True,
        ),
        Table(
            "table7b_summaries",
            "Table 7(b). Full-release summaries and counting units",
            (
                _c("statistic", "Statistic", TEXT),
                _c("value", "Value", VALUE),
                _c("unit", "Denominator / counting unit", NOTE),
            ),
            tuple((s.statistic, s.value, s.unit) for s in sheet.summaries),
            "Image files are files under public/images/ (originals and rendered views, deduplicated by bytes), not "
            "unique source diagrams.",
        ),
        Table(
            "figure3_radar",
            "Figure 3. Domain coverage (percentages within each collection)",
            (
                _c("group", "Domain group", TEXT),
                *(
                    col
                    for series in sheet.radar
                    for col in (
                        _c(_slug(series.label), f"{series.label} (n)"),
                        _c(_slug(series.label) + "_percent", f"{series.label} (%)", VALUE),
                    )
                ),
            ),
            tuple(
                (label, *(v for s in sheet.radar for v in (s.counts[i], s.percents[i])))
                for i, label in enumerate(sheet.radar_labels)
            ),
            "Cross-disciplinary joins Table 6's two residual groups, as the paper's Figure 3 does.",
        ),
        Table(
            "figure6_families",
            "Figure 6 (left). Concept families of the problem text",
            (
                _c("family", "Concept family", TEXT),
                _c("parents", "Parents mentioning it"),
                _c("share", "Share of parents (%)", VALUE),
                _c("occurrences", "Occurrences"),
                _c("top_terms", "Most frequent terms", NOTE),
            ),
            tuple(
                (
                    f.family,
                    f.parents,
                    f.share,
                    f.occurrences,
                    ", ".join(f"{t.term} ({t.parents:,})" for t in f.terms if t.parents)[:300] or None,
                )
                for f in sheet.families
            ),
            f"Vocabulary {sheet.vocabulary_version}: each parent's statement, question and options (never its "
            "answer or solution). Descriptive only: not used for domains, probes or scoring.",
        ),
        Table(
            "figure6_terms",
            "Figure 6 (right). Prominent terms",
            (
                _c("term", "Term", TEXT),
                _c("family", "Concept family", NOTE),
                _c("parents", "Parents mentioning it"),
                _c("occurrences", "Occurrences"),
            ),
            tuple((t.term, t.family, t.parents, t.occurrences) for t in sheet.terms),
        ),
    ]
    agreement = sheet.agreement
    if agreement is not None and agreement.double_annotated:
        tables.append(
            Table(
                "agreement",
                "Annotation agreement (double-annotated parents)",
                (
                    _c("statistic", "Statistic", TEXT),
                    _c("value", "Value", VALUE),
                    _c("unit", "Counting unit", NOTE),
                ),
                (
                    (
                        "Parents with a second, independent annotation",
                        f"{agreement.double_annotated:,}",
                        f"of {sheet.parents:,} parents",
                    ),
                    (
                        "Second annotations with a pass submitted",
                        f"{agreement.submitted:,}",
                        f"of {agreement.double_annotated:,} double-annotated parents",
                    ),
                    *agreement.figures,
                ),
            )
        )
    return tables


def _slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in label.lower()).replace("__", "_").strip("_")


def csv_text(sheet: Datasheet) -> str:
    """The long CSV (module docstring): ``table,row,column,value``, one line per cell but the row label."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["table", "row", "column", "value"])
    for table in datasheet_tables(sheet):
        for row in table.rows:
            for column, value in zip(table.columns[1:], row[1:], strict=True):
                writer.writerow([table.slug, csv_cell(row[0]), column.key, csv_cell(value)])
    return out.getvalue()


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(sheet: Datasheet, *, heading: str = "## Datasheet") -> str:
    """The datasheet as Markdown tables (the Hugging Face dataset card's "Datasheet" section)."""
    parts = [
        heading,
        "",
        f"Computed by PhysAlign Studio from release `{sheet.release_id}` (split {sheet.split}): "
        f"{sheet.parents:,} parent problems, {sheet.probes:,} localized probes, {sheet.paired_probes:,} paired +GT "
        f"inputs from {sheet.paired_parents:,} parents. Percentages are rounded half up to two decimals; "
        "'—' means nothing to divide.",
    ]
    for table in datasheet_tables(sheet):
        rows = table.display_rows()
        parts += [
            "",
            f"### {table.title}",
            "",
            "| " + " | ".join(_md(c.label) for c in table.columns) + " |",
            "|" + "|".join("---:" if c.numeric else "---" for c in table.columns) + "|",
        ]
        for n, row in enumerate(rows):
            cells = [_md(cell.text) for cell in row]
            if table.total_last and n == len(rows) - 1:
                cells = [f"**{cell}**" for cell in cells]
            parts.append("| " + " | ".join(cells) + " |")
        if table.note:
            parts += ["", _md(table.note)]
    for note in sheet.notes:
        parts += ["", f"Note: {_md(note)}"]
    return "\n".join(parts) + "\n"


def chart_data(sheet: Datasheet) -> dict[str, Any]:
    """What the page's charts draw (``static/js/release_datasheet.js``): Figure 3's radar (percentages within each
    collection, counts for the tooltips) and Figure 6's bars (families and prominent terms by parents)."""

    def number(text: str | None) -> float:
        return float(text) if text is not None else 0.0

    return {
        "radar": {
            "labels": list(sheet.radar_labels),
            "series": [
                {
                    "label": f"{s.label} ({s.total:,})",
                    "percents": [number(p) for p in s.percents],
                    "counts": list(s.counts),
                }
                for s in sheet.radar
            ],
        },
        "families": {
            "labels": [f.family for f in sheet.families],
            "parents": [f.parents for f in sheet.families],
            "shares": [number(f.share) for f in sheet.families],
        },
        "terms": {
            "labels": [t.term for t in sheet.terms],
            "parents": [t.parents for t in sheet.terms],
            "occurrences": [t.occurrences for t in sheet.terms],
        },
        "parents": sheet.parents,
        "full_label": FULL,
    }


def json_text(sheet: Datasheet) -> str:
    return json.dumps(datasheet_json(sheet), ensure_ascii=False, indent=2) + "\n"


def folder_files(sheet: Datasheet) -> dict[str, bytes]:
    """The datasheet's files in the release folder, by their path in it."""
    return {JSON_NAME: json_text(sheet).encode("utf-8"), CSV_NAME: csv_text(sheet).encode("utf-8")}
