"""The curated document of one pass, built from the two annotations, their record pairs and the curator's
choices. Pure: no Django, no app (the pairs are anything with ``collection``, ``first_id`` and ``second_id``,
e.g. ``annotation.agreement.core.RecordPair``).

The rule, in order:

1. **Choices.** Every pair gets one: a matched pair (both ids) ``first`` (keep the first's record) or
   ``second`` (take the second's); a first-only record ``first`` (keep) or ``drop``; a second-only record
   ``second`` (add it) or ``drop``. A pair the curator left out takes its default: ``first`` for matched pairs
   and first-only records, ``drop`` for second-only records — so no choices at all gives back the first
   document unchanged. What no pair covers (scalars, ambiguities, Pass 3's query target) stays the first's.
2. **Ids.** The curated document keeps the first document's record ids, so what later passes refer to stays
   put: a taken record is the second's content under the first's id, in the first's place. An added record is
   appended to its collection under a fresh id with the collection's prefix (``v``, ``p``, ``q``, …): one past
   the highest number there (Pass 3's new entities count Pass 2's too). A Pass 3 entity the second only
   updated (its id is one of the second's Pass 2 entities) is added as an update of the first's matching
   Pass 2 entity, under that entity's id.
3. **References.** Every id a taken or added record refers to (under a ``…_id``/``…_ids`` key, ``image_id``
   aside) is the second's and is translated: through this pass's pairs (a matched record → the first's id, an
   added one → its fresh id) and through ``earlier_pairs`` (the matches of the earlier passes' records, e.g.
   regions for a Pass 2 entity). An id with no counterpart in the curated document (a dropped record, an
   unmatched earlier one) is left out of its list (or a single reference is set to "") and reported in
   ``unresolved``; so is any reference of a kept first record to a record that was dropped.
4. **Order and numbering.** Pass 3 (and 4) mentions are put in textual order (stem, then query; by where the
   quote's occurrence starts) when the texts are given. Then every collection whose ids must run
   ``x001, x002, …`` is renumbered in order (Pass 3's new entities after Pass 2's), and each rename follows
   through the whole document (``renamed``: the first's id → the curated id). With no drop and no reorder
   nothing is renamed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kit.passes.spans import find_exact_matches
from kit.passes.validator import ID_PREFIXES, PASS_LAYOUTS, RECORD_SPECS

KEEP_FIRST = "first"
TAKE_SECOND = "second"
DROP = "drop"
KEEPS = (KEEP_FIRST, TAKE_SECOND, DROP)
REFERENCE_KEY = re.compile(r"(^|_)ids?$")
NOT_A_RECORD_REFERENCE = frozenset({"image_id"})  # images are the problem's, the same on both sides
MENTION_SECTIONS = ("stem", "query")

Doc = dict[str, Any]
PairKey = tuple[str, str | None, str | None]


class PairLike(Protocol):
    @property
    def collection(self) -> str: ...
    @property
    def first_id(self) -> str | None: ...
    @property
    def second_id(self) -> str | None: ...


class ChoiceError(ValueError):
    """A choice that names no pair, or a keep the pair does not allow (the message says which)."""


@dataclass(frozen=True)
class Choice:
    collection: str
    first_id: str | None
    second_id: str | None
    keep: str

    @property
    def key(self) -> PairKey:
        return (self.collection, self.first_id, self.second_id)


@dataclass(frozen=True)
class Unresolved:
    """A reference left out of the curated document: ``record_id`` (its curated id) in ``collection`` referred,
    under ``field``, to ``missing`` (an id of ``side``'s document) that has no counterpart there."""

    collection: str
    record_id: str
    field: str
    missing: str
    side: str  # "first" | "second"


@dataclass(frozen=True)
class MergeResult:
    document: Doc
    choices: tuple[Choice, ...]  # one per pair, in the pairs' order (defaults filled in)
    taken: tuple[str, ...]  # first ids whose content is now the second's (ids before any renumbering)
    added: dict[str, str]  # second id -> the curated id it was added under (before renumbering)
    dropped: tuple[str, ...]  # first ids removed
    renamed: dict[str, str]  # id before renumbering -> id in the curated document (only those that changed)
    unresolved: tuple[Unresolved, ...]

    def final_id(self, record_id: str) -> str:
        return self.renamed.get(record_id, record_id)


def pair_key(pair: PairLike) -> PairKey:
    return (pair.collection, pair.first_id, pair.second_id)


def default_keep(pair: PairLike) -> str:
    return KEEP_FIRST if pair.first_id is not None else DROP


def allowed_keeps(pair: PairLike) -> tuple[str, ...]:
    if pair.first_id is not None and pair.second_id is not None:
        return (KEEP_FIRST, TAKE_SECOND)
    if pair.first_id is not None:
        return (KEEP_FIRST, DROP)
    return (TAKE_SECOND, DROP)


def choices_for(pairs: Sequence[PairLike], given: Iterable[Choice]) -> tuple[Choice, ...]:
    """One choice per pair, in the pairs' order: the given one, else the default. A given choice that names
    no pair, names one twice, or keeps what its pair does not allow raises ``ChoiceError``."""
    by_key = {pair_key(p): p for p in pairs}
    chosen: dict[PairKey, str] = {}
    for choice in given:
        pair = by_key.get(choice.key)
        if pair is None:
            raise ChoiceError(
                f"No record pair {choice.collection} {choice.first_id or '—'} / {choice.second_id or '—'}: "
                "reload the page (one of the documents changed)."
            )
        if choice.key in chosen:
            raise ChoiceError(
                f"The pair {choice.collection} {choice.first_id} / {choice.second_id} is chosen twice."
            )
        if choice.keep not in allowed_keeps(pair):
            raise ChoiceError(
                f"{choice.keep!r} is not a choice for {choice.collection} "
                f"{choice.first_id or '—'} / {choice.second_id or '—'}: one of {', '.join(allowed_keeps(pair))}."
            )
        chosen[choice.key] = choice.keep
    return tuple(Choice(*pair_key(p), chosen.get(pair_key(p), default_keep(p))) for p in pairs)


# --- small readers ------------------------------------------------------------------------------------------


def _layout_spec(collection: str, pass_no: int) -> Any:
    record = next(c.record for c in PASS_LAYOUTS[pass_no].collections if c.key == collection)
    return RECORD_SPECS[record]


def _id_key(collection: str, pass_no: int) -> str:
    return str(_layout_spec(collection, pass_no).id_key or "id")


def _prefix(collection: str, pass_no: int) -> str:
    kind = _layout_spec(collection, pass_no).id_kind
    assert kind is not None, collection
    return ID_PREFIXES[kind]


def _records(document: Mapping[str, Any] | None, collection: str) -> list[dict[str, Any]]:
    rows = document.get(collection) if isinstance(document, Mapping) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _number(record_id: object, prefix: str) -> int:
    """The number of ``p012`` (12); 0 for anything else."""
    if isinstance(record_id, str) and record_id.startswith(prefix):
        digits = record_id[len(prefix) :]
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return 0


def _fresh(prefix: str, taken_ids: Iterable[object]) -> str:
    highest = max((_number(i, prefix) for i in taken_ids), default=0)
    return f"{prefix}{highest + 1:03d}"


# --- the curated document -----------------------------------------------------------------------------------


def curated_document(
    pass_no: int,
    first: Mapping[str, Any],
    second: Mapping[str, Any],
    pairs: Sequence[PairLike],
    choices: Iterable[Choice] = (),
    *,
    earlier_pairs: Sequence[PairLike] = (),
    first_earlier: Mapping[int, Mapping[str, Any]] | None = None,
    second_earlier: Mapping[int, Mapping[str, Any]] | None = None,
    texts: Mapping[str, str] | None = None,
) -> MergeResult:
    """The curated Pass ``pass_no`` document (the module docstring's rule). ``pairs`` are this pass's record
    pairs, ``earlier_pairs`` those of the passes before it (each side's documents in ``first_earlier`` /
    ``second_earlier``: {1: pass 1, 2: pass 2}), ``texts`` the problem's ``{"stem": …, "query": …}``.
    Raises ``ChoiceError`` for a choice that fits no pair (see ``choices_for``)."""
    if pass_no not in PASS_LAYOUTS or pass_no == 5:
        raise ChoiceError(f"Curation reconciles passes 1–4, not {pass_no!r}.")
    chosen = choices_for(pairs, choices)
    document: Doc = copy.deepcopy(dict(first))
    first_pass2 = _ids(_records((first_earlier or {}).get(2), "physical_nodes"))
    second_pass2 = _ids(_records((second_earlier or {}).get(2), "physical_nodes"))

    # the second's ids -> the curated document's (before renumbering)
    mapping = reference_map(pairs, earlier_pairs)
    unresolved: list[Unresolved] = []
    added = _allocate(pass_no, document, chosen, mapping, first_pass2, second_pass2, unresolved)
    mapping.update(added)
    taken, dropped = _apply(pass_no, document, second, chosen, mapping, added, unresolved)
    # a dropped Pass 3 update leaves the Pass 2 entity it updated: references to it stay
    removed = {i for i in dropped if not (pass_no == 3 and i in first_pass2)}
    _strip_references(document, removed, pass_no, unresolved)
    if texts is not None and pass_no in (3, 4):
        _order_mentions(document, texts)
    renamed = _renumber(document, pass_no, first_pass2)
    return MergeResult(
        document=_rename(document, "", renamed) if renamed else document,
        choices=chosen,
        taken=tuple(taken),
        added=added,
        dropped=tuple(dropped),
        renamed=renamed,
        unresolved=tuple(
            Unresolved(u.collection, renamed.get(u.record_id, u.record_id), u.field, u.missing, u.side)
            for u in unresolved
        ),
    )


def _allocate(
    pass_no: int,
    document: Doc,
    chosen: Sequence[Choice],
    mapping: Mapping[str, str],
    first_pass2: set[str],
    second_pass2: set[str],
    unresolved: list[Unresolved],
) -> dict[str, str]:
    """The curated id of every second-only record the curator adds (second id -> id), in the pairs' order."""
    added: dict[str, str] = {}
    added_in: dict[str, set[str]] = {}
    for choice in chosen:
        if choice.first_id is not None or choice.second_id is None or choice.keep != TAKE_SECOND:
            continue
        collection = choice.collection
        present = _ids(_records(document, collection), _id_key(collection, pass_no))
        entities3 = pass_no == 3 and collection == "new_or_updated_physical_nodes"
        if entities3 and choice.second_id in second_pass2:
            # the second updated one of its Pass 2 entities: the update goes to the first's matching entity
            target = mapping.get(choice.second_id)
            if target is None or target in present or target in added_in.get(collection, set()):
                unresolved.append(Unresolved(collection, "", "id", choice.second_id, "second"))
                continue
        else:
            pool = present | added_in.get(collection, set()) | (first_pass2 if entities3 else set())
            target = _fresh(_prefix(collection, pass_no), pool)
        added[choice.second_id] = target
        added_in.setdefault(collection, set()).add(target)
    return added


def _apply(
    pass_no: int,
    document: Doc,
    second: Mapping[str, Any],
    chosen: Sequence[Choice],
    mapping: Mapping[str, str],
    added: Mapping[str, str],
    unresolved: list[Unresolved],
) -> tuple[list[str], list[str]]:
    """Carry out the choices on ``document`` (the first's copy): take, drop, add. Returns (taken, dropped)."""
    taken: list[str] = []
    dropped: list[str] = []
    for choice in chosen:
        collection, id_key = choice.collection, _id_key(choice.collection, pass_no)
        rows = document.get(collection)
        if not isinstance(rows, list):
            rows = document[collection] = []
        if choice.keep == TAKE_SECOND and choice.second_id is not None:
            record = _second_record(second, collection, choice.second_id, id_key)
            if choice.first_id is not None:
                index = _index(rows, choice.first_id, id_key)
                if record is not None and index is not None:
                    rows[index] = _carried(record, choice.first_id, collection, id_key, mapping, unresolved)
                    taken.append(choice.first_id)
            elif record is not None and choice.second_id in added:
                new_id = added[choice.second_id]
                rows.append(_carried(record, new_id, collection, id_key, mapping, unresolved))
        elif choice.keep == DROP and choice.first_id is not None:
            index = _index(rows, choice.first_id, id_key)
            if index is not None:
                del rows[index]
                dropped.append(choice.first_id)
    return taken, dropped


def _ids(records: Iterable[Mapping[str, Any]], id_key: str = "id") -> set[str]:
    return {r[id_key] for r in records if isinstance(r.get(id_key), str)}


def _index(rows: list[Any], record_id: str, id_key: str) -> int | None:
    return next((i for i, r in enumerate(rows) if isinstance(r, dict) and r.get(id_key) == record_id), None)


def _second_record(
    second: Mapping[str, Any], collection: str, record_id: str, id_key: str
) -> dict[str, Any] | None:
    return next((r for r in _records(second, collection) if r.get(id_key) == record_id), None)


def _carried(
    record: Mapping[str, Any],
    new_id: str,
    collection: str,
    id_key: str,
    mapping: Mapping[str, str],
    unresolved: list[Unresolved],
) -> dict[str, Any]:
    """The second's ``record`` as the curated document holds it: under ``new_id``, its references translated."""
    missing: list[tuple[str, str]] = []
    carried = _translate(copy.deepcopy(dict(record)), "", mapping, missing, top=True, id_key=id_key)
    carried[id_key] = new_id
    unresolved.extend(Unresolved(collection, new_id, field, gone, "second") for field, gone in missing)
    return dict(carried)


def _is_reference(key: str) -> bool:
    return bool(REFERENCE_KEY.search(key)) and key not in NOT_A_RECORD_REFERENCE


def _translate(
    value: Any,
    key: str,
    mapping: Mapping[str, str],
    missing: list[tuple[str, str]],
    *,
    top: bool,
    id_key: str,
) -> Any:
    """``value`` with every reference mapped through ``mapping``; a reference ``mapping`` lacks is left out of
    its list (or a single one becomes "") and noted in ``missing`` as (field, id). ``top``: ``value`` is the
    record itself, whose own ``id_key`` is not a reference."""
    if isinstance(value, dict):
        return {
            k: v if top and k == id_key else _translate(v, k, mapping, missing, top=False, id_key=id_key)
            for k, v in value.items()
        }
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            if _is_reference(key) and isinstance(item, str) and item:
                if item not in mapping:
                    missing.append((key, item))
                elif mapping[item] not in out:
                    out.append(mapping[item])
            else:
                out.append(_translate(item, key, mapping, missing, top=False, id_key=id_key))
        return out
    if _is_reference(key) and isinstance(value, str) and value:
        if value in mapping:
            return mapping[value]
        missing.append((key, value))
        return ""
    return value


class _AllBut(dict[str, str]):
    """Every id to itself, except ``removed`` (which it lacks): ``_translate`` with it strips references to them."""

    def __init__(self, removed: set[str]) -> None:
        super().__init__()
        self.removed = removed

    def __contains__(self, key: object) -> bool:
        return key not in self.removed

    def __getitem__(self, key: str) -> str:
        return key


def _strip_references(document: Doc, removed: set[str], pass_no: int, unresolved: list[Unresolved]) -> None:
    """Take the references to ``removed`` records out of every record of the document (and the query target)."""
    if not removed:
        return
    mapping = _AllBut(removed)
    for key, value in list(document.items()):
        if isinstance(value, list):
            id_key = _id_key(key, pass_no) if _is_collection(key, pass_no) else "id"
            cleaned = []
            for record in value:
                missing: list[tuple[str, str]] = []
                cleaned.append(_translate(record, "", mapping, missing, top=True, id_key=id_key))
                record_id = str(record.get(id_key, "")) if isinstance(record, dict) else ""
                unresolved.extend(Unresolved(key, record_id, field, gone, "first") for field, gone in missing)
            document[key] = cleaned
        elif isinstance(value, dict):
            missing = []
            document[key] = _translate(value, "", mapping, missing, top=False, id_key="")
            unresolved.extend(Unresolved(key, "", field, gone, "first") for field, gone in missing)


def _is_collection(key: str, pass_no: int) -> bool:
    return any(c.key == key for c in PASS_LAYOUTS[pass_no].collections)


def _order_mentions(document: Doc, texts: Mapping[str, str]) -> None:
    """Mentions in textual order: stem before query, then by where the quote's occurrence starts (one whose
    occurrence is not in the text sits at the end of its section); ties keep their order."""
    rows = document.get("text_mentions")
    if not isinstance(rows, list):
        return

    def position(mention: Any) -> tuple[int, int]:
        if not isinstance(mention, dict) or mention.get("section") not in MENTION_SECTIONS:
            return (len(MENTION_SECTIONS), 0)
        section = MENTION_SECTIONS.index(mention["section"])
        quote, occurrence = mention.get("quote"), mention.get("occurrence")
        text = texts.get(mention["section"], "")
        if isinstance(quote, str) and quote and isinstance(occurrence, int) and occurrence >= 1:
            matches = find_exact_matches(text, quote)
            if occurrence <= len(matches):
                return (section, matches[occurrence - 1][0])
        return (section, 10**9)

    document["text_mentions"] = sorted(rows, key=position)


def _renumber(document: Doc, pass_no: int, pass2_ids: set[str]) -> dict[str, str]:
    """Renumber every collection whose ids must run x001, x002, … in order (Pass 3's new entities after Pass 2's
    highest); returns the renames (old id -> new id) without applying them to references."""
    renamed: dict[str, str] = {}
    for collection in PASS_LAYOUTS[pass_no].collections:
        spec = RECORD_SPECS[collection.record]
        if spec.id_kind is None:
            continue
        rows = _records(document, collection.key)
        prefix, id_key = ID_PREFIXES[spec.id_kind], spec.id_key or "id"
        if collection.contiguous:
            numbered = [(row, i) for i, row in enumerate(rows, start=1)]
        elif pass_no == 3 and collection.key == "new_or_updated_physical_nodes":
            start = max((_number(i, prefix) for i in pass2_ids), default=0)
            new = [row for row in rows if row.get(id_key) not in pass2_ids]
            numbered = [(row, start + i) for i, row in enumerate(new, start=1)]
        else:
            continue
        for row, number in numbered:
            want = f"{prefix}{number:03d}"
            if isinstance(row.get(id_key), str) and row[id_key] != want:
                renamed[row[id_key]] = want
    return renamed


def _rename(value: Any, key: str, mapping: Mapping[str, str]) -> Any:
    """``value`` with ids renamed everywhere: record ids and references (keys ending in id / ids, but
    ``image_id``), all at once (so v003 → v002 and v002 → v001 do not collide)."""
    if isinstance(value, dict):
        return {k: _rename(v, k, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, key, mapping) for v in value]
    if isinstance(value, str) and _is_reference(key):
        return mapping.get(value, value)
    return value


# --- what the curation page and the service read -------------------------------------------------------------


def reference_map(pairs: Iterable[PairLike], earlier_pairs: Iterable[PairLike] = ()) -> dict[str, str]:
    """The second's ids -> the first's, for every matched record of this pass and of the earlier ones."""
    mapping = {p.second_id: p.first_id for p in earlier_pairs if p.first_id and p.second_id}
    mapping.update({p.second_id: p.first_id for p in pairs if p.first_id and p.second_id})
    return mapping


def in_first_terms(
    record: Mapping[str, Any], first_id: str, *, id_key: str, mapping: Mapping[str, str]
) -> dict[str, Any]:
    """The second's ``record`` as taking it would store it under ``first_id`` (references translated, those without
    a counterpart left out): what the page compares with the first's record to say whether the two differ."""
    carried = _translate(copy.deepcopy(dict(record)), "", mapping, [], top=True, id_key=id_key)
    carried[id_key] = first_id
    return dict(carried)


def id_key_of(collection: str, pass_no: int) -> str:
    """The key holding a record's own id in ``collection`` of a Pass ``pass_no`` document."""
    return _id_key(collection, pass_no)


def references_to(documents: Mapping[int, Any], ids: Iterable[str]) -> dict[str, list[str]]:
    """Where the documents (later passes, by number) refer to any of ``ids``: id -> ["Pass 2 b003", …], under a
    ``…_id``/``…_ids`` key that is not a record's own id."""
    wanted = set(ids)
    found: dict[str, list[str]] = {}
    for pass_no in sorted(documents):
        document = documents[pass_no]
        if not isinstance(document, dict):
            continue
        for key, value in document.items():
            rows = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
            for row in rows:
                if not isinstance(row, dict):
                    continue
                own = row.get("step_id") if key == "solution_steps" else row.get("id")
                where = f"Pass {pass_no} {own if isinstance(own, str) and isinstance(value, list) else key}"
                for ref in _references(row, "", top=True):
                    if ref in wanted and where not in found.setdefault(ref, []):
                        found[ref].append(where)
    return {ref: sorted(found[ref], key=_where_order) for ref in sorted(found)}


def _where_order(where: str) -> tuple[int, str]:
    _, number, record = where.split(" ", 2)
    return (int(number), record)


def _references(value: Any, key: str, *, top: bool) -> Iterable[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if not (top and k in ("id", "step_id")):
                yield from _references(v, k, top=False)
    elif isinstance(value, list):
        for item in value:
            yield from _references(item, key, top=False)
    elif isinstance(value, str) and value and _is_reference(key):
        yield value
