"""The records of a pass document a source reviewer can comment on, and what changed since the last review, in
the words a reviewer reads ("2 regions added, 1 moved"). Pure: no Django.

A record is named ``<collection>:<id>`` (``visual_nodes:v003``), the Kit's own record key without the file hash
(``SourceIndex.records``); regions are Pass 1's ``visual_nodes``, whose geometry fields make a change a move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .workspace_diff import DocumentDiff, RecordChange, document_diff

# How each collection's record is called on a page, and the field that names it best.
COLLECTION_NOUNS = {
    "visual_nodes": ("region", "regions"),
    "physical_nodes": ("entity", "entities"),
    "new_or_updated_physical_nodes": ("entity", "entities"),
    "text_mentions": ("mention", "mentions"),
    "quantities": ("quantity", "quantities"),
    "bindings": ("binding", "bindings"),
    "relations": ("relation", "relations"),
    "constraints": ("constraint", "constraints"),
    "ambiguities": ("ambiguity", "ambiguities"),
    "solution_steps": ("step", "steps"),
}
_LABEL_FIELDS = ("text", "name", "quote", "symbol_latex", "predicate", "description", "type", "kind")
GEOMETRY_FIELDS = frozenset({"bbox_1000", "keypoints_1000", "center_1000", "radius_1000", "image_id"})
MAX_COMMENT = 2000


@dataclass(frozen=True)
class RecordRef:
    collection: str
    record_id: str
    label: str

    @property
    def key(self) -> str:
        return f"{self.collection}:{self.record_id}"

    @property
    def noun(self) -> str:
        return COLLECTION_NOUNS.get(self.collection, ("record", "records"))[0]


def _record_id(record: Any) -> str:
    if isinstance(record, dict):
        for key in ("id", "step_id"):
            if isinstance(record.get(key), str) and record[key]:
                return record[key]
    return ""


def _label(record: dict[str, Any]) -> str:
    for name in _LABEL_FIELDS:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:60]
    return ""


def document_records(document: Any) -> list[RecordRef]:
    """Every record of the document that has an id, collection by collection in the document's key order."""
    if not isinstance(document, dict):
        return []
    refs = []
    for collection, value in document.items():
        if collection not in COLLECTION_NOUNS or not isinstance(value, list):
            continue
        for record in value:
            if record_id := _record_id(record):
                refs.append(RecordRef(collection, record_id, _label(record)))
    return refs


def parse_record_key(key: str, document: Any) -> RecordRef | None:
    """The record ``key`` names in ``document``, or None when the document has no such record."""
    return next((ref for ref in document_records(document) if ref.key == key), None)


@dataclass(frozen=True)
class ChangeLine:
    noun: str  # region | entity | ...
    record_id: str
    what: str  # added | moved | removed | changed
    fields: tuple[str, ...]


@dataclass(frozen=True)
class ReviewChanges:
    """What changed in a pass since the document its last review saw."""

    lines: tuple[ChangeLine, ...]

    @property
    def summary(self) -> str:
        """ "2 regions added, 1 region moved, 1 quantity changed" (nothing: "no change")."""
        counts: dict[tuple[str, str], int] = {}
        for line in self.lines:
            counts[(line.noun, line.what)] = counts.get((line.noun, line.what), 0) + 1
        parts = []
        for (noun, what), n in counts.items():
            plural = next((p for s, p in COLLECTION_NOUNS.values() if s == noun), f"{noun}s")
            parts.append(f"{n} {noun if n == 1 else plural} {what}")
        return ", ".join(parts) if parts else "no change"


def _line(change: RecordChange) -> ChangeLine:
    noun = COLLECTION_NOUNS.get(change.collection, ("field", "fields"))[0]
    fields = tuple(f.field for f in change.fields)
    what = change.change
    if what == "changed" and change.collection == "visual_nodes" and set(fields) <= GEOMETRY_FIELDS:
        what = "moved"
    record_id = change.record_id or change.collection
    return ChangeLine(noun, record_id, what, fields)


def changes_since(reviewed: Any, current: Any) -> ReviewChanges:
    """The record-level changes from the reviewed document to the current one: a region whose only changed
    fields are its geometry moved; any other field change is a change."""
    diff: DocumentDiff = document_diff(reviewed, current)
    return ReviewChanges(tuple(_line(c) for c in diff.changes))
