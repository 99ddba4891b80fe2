"""Record-level diffs between two pass documents (history page and API). Pure: no Django.

Collections (lists of records with an ``id`` or ``step_id``) are compared record by record, keyed by
ID; every other top-level key is compared as a whole value. The result lists what was added, removed
and changed, with the changed fields of each changed record, in a stable order.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldChange:
    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class RecordChange:
    collection: str
    record_id: str
    change: str  # added | removed | changed
    fields: tuple[FieldChange, ...] = ()
    before: Any = None
    after: Any = None


@dataclass(frozen=True)
class DocumentDiff:
    changes: tuple[RecordChange, ...] = field(default_factory=tuple)

    @property
    def counts(self) -> dict[str, int]:
        out = {"added": 0, "removed": 0, "changed": 0}
        for change in self.changes:
            out[change.change] += 1
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "changes": [asdict(c) for c in self.changes]}


def _record_key(record: Any) -> str | None:
    if isinstance(record, dict):
        for key in ("id", "step_id"):
            if isinstance(record.get(key), str) and record[key]:
                return record[key]
    return None


def _is_collection(value: Any) -> bool:
    return isinstance(value, list) and all(_record_key(item) is not None for item in value) and bool(value)


def _keyed(records: list[Any]) -> dict[str, Any]:
    return {_record_key(record): record for record in records}  # type: ignore[misc]


def document_diff(before: Any, after: Any) -> DocumentDiff:
    """What changed from ``before`` to ``after`` (either may be ``None`` for an absent document)."""
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    changes: list[RecordChange] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if (_is_collection(old) or old in (None, [])) and (_is_collection(new) or new in (None, [])):
            old_records, new_records = _keyed(old or []), _keyed(new or [])
            for record_id in sorted(set(old_records) | set(new_records)):
                a, b = old_records.get(record_id), new_records.get(record_id)
                if a == b:
                    continue
                if a is None:
                    changes.append(RecordChange(key, record_id, "added", after=b))
                elif b is None:
                    changes.append(RecordChange(key, record_id, "removed", before=a))
                else:
                    fields = tuple(
                        FieldChange(name, a.get(name), b.get(name))
                        for name in sorted(set(a) | set(b))
                        if a.get(name) != b.get(name)
                    )
                    changes.append(RecordChange(key, record_id, "changed", fields=fields, before=a, after=b))
        else:
            change = "added" if key not in before else "removed" if key not in after else "changed"
            changes.append(
                RecordChange(key, "", change, fields=(FieldChange(key, old, new),), before=old, after=new)
            )
    return DocumentDiff(tuple(changes))
