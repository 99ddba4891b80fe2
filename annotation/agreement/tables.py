"""The agreement pages' tables, one definition for the page and its CSV: per pass, the columns that pass's figures
have, with rows per pair of annotators (the summary) or per parent (a pair's page)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..analytics.figures import csv_value
from .selectors import PASSES, AgreementSummary, PairAgreement, ParentAgreement

TEXT, NUMBER, RATE, KAPPA, CURATION = "text", "number", "rate", "kappa", "curation"


@dataclass(frozen=True)
class Column:
    key: str  # the CSV header
    label: str  # the page's header
    kind: str
    title: str = ""  # the header's tooltip: what the figure is


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool
    url: str = ""
    hidden_label: str = ""  # what follows the text in a link's accessible name (its aria-label)


def _get(*path: str) -> Callable[[dict[str, Any]], Any]:
    def read(figures: dict[str, Any]) -> Any:
        value: Any = figures
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    return read


@dataclass(frozen=True)
class Figure:
    column: Column
    read: Callable[[dict[str, Any]], Any]


def _matching(prefix: str, collection: str, label: str) -> list[Figure]:
    return [
        Figure(Column(f"{prefix}_first", f"{label}, first", NUMBER), _get(collection, "first")),
        Figure(Column(f"{prefix}_second", f"{label}, second", NUMBER), _get(collection, "second")),
        Figure(Column(f"{prefix}_matched", "Matched", NUMBER), _get(collection, "matched")),
        Figure(
            Column(f"{prefix}_precision", "Precision", RATE, "matched ÷ the second's"),
            _get(collection, "precision"),
        ),
        Figure(
            Column(f"{prefix}_recall", "Recall", RATE, "matched ÷ the first's"), _get(collection, "recall")
        ),
        Figure(Column(f"{prefix}_f1", "F1", RATE), _get(collection, "f1")),
    ]


def _rate(key: str, label: str, title: str) -> list[Figure]:
    return [
        Figure(Column(key, label, RATE, title), _get(key, "rate")),
        Figure(Column(f"{key}_n", "n", NUMBER, "how many pairs were compared"), _get(key, "n")),
    ]


def _kappa(key: str, label: str) -> list[Figure]:
    return [
        Figure(
            Column(f"{key}_kappa", label, KAPPA, "Cohen's κ; — when undefined (one category)"),
            _get(key, "kappa", "kappa"),
        ),
        Figure(Column(f"{key}_kappa_n", "kappa n", NUMBER, "the pairs κ rests on"), _get(key, "kappa", "n")),
    ]


PASS_FIGURES: dict[int, list[Figure]] = {
    1: [
        *_matching("regions", "regions", "Regions"),
        Figure(
            Column("mean_iou", "Mean IoU", RATE, "mean IoU (a shape's own similarity) of matched regions"),
            _get("regions", "mean_score"),
        ),
        *_rate(
            "transcription", "Transcription", "equal text after the label normalizer on matched text regions"
        ),
        *_rate("region_type", "Region type", "equal type on matched regions"),
    ],
    2: [
        *_matching("entities", "entities", "Entities"),
        *_rate("entity_type", "Entity type", "equal type on matched entities"),
        *_kappa("entity_type", "Type kappa"),
        *_rate("binding", "Binding", "the same matched entities on matched bound regions"),
    ],
    3: [
        *_matching("quantities", "quantities", "Quantities"),
        *_rate("quantity_kind", "Kind", "equal kind on matched quantities"),
        *_kappa("quantity_kind", "Kind kappa"),
        Figure(
            Column("quantity_value", "Value", RATE, "equal value after the label normalizer"),
            _get("quantity_value", "rate"),
        ),
        Figure(
            Column("quantity_unit", "Unit", RATE, "equal unit after the label normalizer"),
            _get("quantity_unit", "rate"),
        ),
        Figure(
            Column("quantity_owner", "Owner", RATE, "the owner's match is the second's owner"),
            _get("quantity_owner", "rate"),
        ),
        Figure(
            Column("mentions_f1", "Mentions F1", RATE, "text mentions with the same span"),
            _get("mentions", "f1"),
        ),
    ],
}
PASS_TITLES = {
    1: "Pass 1 — regions and transcription",
    2: "Pass 2 — entities and bindings",
    3: "Pass 3 — quantities",
}


@dataclass(frozen=True)
class Table:
    slug: str
    title: str
    columns: list[Column]
    rows: list[list[Any]]
    links: list[dict[int, tuple[str, str]]]  # per row: column index -> (url, the link's hidden label)

    def display_rows(self) -> list[list[Cell]]:
        return [
            [
                Cell(
                    display(value, column.kind),
                    column.kind not in (TEXT, CURATION),
                    *links.get(index, ("", "")),
                )
                for index, (value, column) in enumerate(zip(row, self.columns, strict=True))
            ]
            for row, links in zip(self.rows, self.links, strict=True)
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
    if kind in (RATE, KAPPA):
        return f"{value:.3f}"
    if kind == CURATION:
        return "Curate"
    return str(value)


PAIR_COLUMNS = [
    Column("first_annotator", "First annotator", TEXT, "the last saver of the first annotation's pass"),
    Column("second_annotator", "Second annotator", TEXT),
    Column("parents", "Parents", NUMBER, "parents with both annotations of this pass"),
    Column("submitted", "Submitted", NUMBER, "of them, the second annotation submitted"),
]
PARENT_COLUMNS = [
    Column("problem_id", "Problem", TEXT),
    Column("source", "Source", TEXT),
    Column("second_status", "Second's status", TEXT),
]
CURATE = Column("curation", "Curation", CURATION, "the curation page of this parent and pass")


def summary_table(summary: AgreementSummary, pass_no: int, pair_url: Callable[[PairAgreement], str]) -> Table:
    figures = PASS_FIGURES[pass_no]
    pairs = summary.pairs_of(pass_no)
    rows = [
        [p.first.name, p.second.name, p.parents, p.submitted, *(f.read(p.figures) for f in figures)]
        for p in pairs
    ]
    links = [
        {2: (pair_url(p), f" parents of {p.first.name} and {p.second.name}, Pass {pass_no}")} for p in pairs
    ]
    return Table(
        f"pass{pass_no}", PASS_TITLES[pass_no], [*PAIR_COLUMNS, *(f.column for f in figures)], rows, links
    )


def parents_table(parents: list[ParentAgreement], pass_no: int) -> Table:
    figures = PASS_FIGURES[pass_no]
    rows = [
        [p.problem_id, p.source, p.second_status, *(f.read(p.figures) for f in figures), p.curation_url]
        for p in parents
    ]
    last = len(PARENT_COLUMNS) + len(figures)
    links = [{last: (p.curation_url, f" {p.problem_id}, Pass {pass_no}")} for p in parents]
    return Table(
        f"pass{pass_no}-parents",
        f"{PASS_TITLES[pass_no]}, per parent",
        [*PARENT_COLUMNS, *(f.column for f in figures), CURATE],
        rows,
        links,
    )


SUMMARY_TABLES = tuple(f"pass{n}" for n in PASSES)
