"""Reads for curation: the two annotations of one pass (the first annotator's ``PassDocument`` and the second's
``IndependentPassDocument``), their record pairs (``annotation.agreement.core.record_pairs``) and the rows the page
and the API show, one per pair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch

from physalign_site.errors import ApplicationError

from ..agreement.core import RecordPair, record_pairs
from ..models import (
    Curation,
    IndependentPassDocument,
    ParentProblem,
    PassDocument,
    ProblemImage,
    SecondAnnotation,
)
from ..record_comments import COLLECTION_NOUNS
from .merge import allowed_keeps, default_keep, id_key_of, in_first_terms, reference_map
from .permissions import curation_refusal, is_second_annotator

CURATION_PASSES = (1, 2, 3, 4)
Doc = dict[str, Any]


@dataclass(frozen=True)
class CurationSides:
    """Everything a curation of Pass ``pass_no`` of ``parent`` is computed from."""

    parent: ParentProblem
    pass_no: int
    first: PassDocument
    second: IndependentPassDocument
    second_annotation: SecondAnnotation
    first_earlier: dict[int, Doc]  # the first annotator's earlier passes, by number
    second_earlier: dict[int, Doc]  # the second annotator's
    first_later: dict[
        int, Doc
    ]  # the first annotator's later passes (1–4), whose references a drop could break
    pairs: list[RecordPair]
    earlier_pairs: list[RecordPair]  # the matches of the earlier passes' records (references go through them)

    @property
    def texts(self) -> dict[str, str]:
        return {"stem": self.parent.stem, "query": self.parent.query}


def curation_parent(*, problem_id: str) -> ParentProblem:
    """The parent (without its private columns) and its images in order; 404 when there is none."""
    parent = (
        ParentProblem.objects.defer("answer", "solution", "raw_question", "meta", "segmentation")
        .prefetch_related(Prefetch("images", queryset=ProblemImage.objects.order_by("ordinal")))
        .filter(problem_id=problem_id)
        .first()
    )
    if parent is None:
        raise ApplicationError(f"There is no problem {problem_id!r}.", code="not_found", status=404)
    return parent


def curation_sides(*, user: Any, parent: ParentProblem, pass_no: int, lock: bool = False) -> CurationSides:
    """Both annotations of the pass, after the access rule (``permissions.curation_refusal``). Refusals, in this
    order: a pass that is not 1–4, a parent without a second annotation (404); the second annotator (403, before
    anything of the first annotation is read); a missing first or second document (404); the first document's
    last editor (403). ``lock``: the first document is read ``FOR UPDATE`` (the service's write)."""
    if pass_no not in CURATION_PASSES:
        raise ApplicationError("Curation reconciles passes 1–4.", code="not_found", status=404)
    second_annotation = SecondAnnotation.objects.select_related("annotator").filter(parent=parent).first()
    if second_annotation is None:
        raise ApplicationError(
            f"{parent.problem_id} has no second annotation: only the parents of a double-annotation sample can be "
            "curated.",
            code="no_second_annotation",
            status=404,
        )
    if is_second_annotator(user, second_annotator_id=second_annotation.annotator_id):
        raise ApplicationError(
            curation_refusal(user, second_annotator_id=second_annotation.annotator_id, last_editor_id=None),
            code="curation_forbidden",
            status=403,
        )
    firsts = PassDocument.objects.select_related("updated_by").filter(parent=parent)
    if lock:
        firsts = firsts.select_for_update(of=("self",))
    first_docs = {doc.pass_no: doc for doc in firsts}
    first = first_docs.get(pass_no)
    if first is None:
        raise ApplicationError(
            f"The first annotation of {parent.problem_id} has no Pass {pass_no} document yet.",
            code="no_first_document",
            status=404,
        )
    seconds = {doc.pass_no: doc for doc in IndependentPassDocument.objects.filter(second=second_annotation)}
    second = seconds.get(pass_no)
    if second is None:
        raise ApplicationError(
            f"The second annotator ({second_annotation.annotator.get_username()}) has no Pass {pass_no} document "
            f"of {parent.problem_id} yet.",
            code="no_second_document",
            status=404,
        )
    refusal = curation_refusal(
        user, second_annotator_id=second_annotation.annotator_id, last_editor_id=first.updated_by_id
    )
    if refusal:
        raise ApplicationError(refusal, code="curation_forbidden", status=403)
    first_earlier = {n: doc.document for n, doc in first_docs.items() if n < pass_no}
    second_earlier = {n: doc.document for n, doc in seconds.items() if n < pass_no}
    earlier_pairs: list[RecordPair] = []
    if pass_no in (2, 3) and 1 in first_earlier and 1 in second_earlier:
        earlier_pairs += record_pairs(1, first_earlier[1], second_earlier[1])
    if pass_no == 3 and 2 in first_earlier and 2 in second_earlier:
        earlier_pairs += record_pairs(
            2,
            first_earlier[2],
            second_earlier[2],
            first_earlier=_only(first_earlier, 1),
            second_earlier=_only(second_earlier, 1),
        )
    pairs = record_pairs(
        pass_no,
        first.document,
        second.document,
        first_earlier=_only(first_earlier, 1, 2),
        second_earlier=_only(second_earlier, 1, 2),
    )
    return CurationSides(
        parent=parent,
        pass_no=pass_no,
        first=first,
        second=second,
        second_annotation=second_annotation,
        first_earlier=first_earlier,
        second_earlier=second_earlier,
        first_later={n: doc.document for n, doc in first_docs.items() if pass_no < n <= 4},
        pairs=pairs,
        earlier_pairs=earlier_pairs,
    )


def _only(documents: dict[int, Doc], *numbers: int) -> dict[int, Doc]:
    return {n: documents[n] for n in numbers if n in documents}


# --- the rows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CurationRow:
    index: int
    collection: str
    noun: str
    first_id: str | None
    second_id: str | None
    score: float
    kind: str  # matched | first_only | second_only
    allowed: tuple[str, ...]
    default: str
    first_label: str
    second_label: str
    first_regions: tuple[str, ...]  # the regions of the first's record (its diagram), to highlight
    second_regions: tuple[str, ...]
    differs: tuple[str, ...]  # matched: the fields in which the second's record (in the first's ids) differs


def region_nodes(pass_no: int, document: Doc, earlier: dict[int, Doc]) -> list[dict[str, Any]]:
    """The regions a side's pass is drawn over: its own (Passes 1 and 4), else its Pass 1's."""
    source = document if pass_no in (1, 4) else earlier.get(1)
    rows = source.get("visual_nodes") if isinstance(source, dict) else None
    return (
        [r for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str)]
        if isinstance(rows, list)
        else []
    )


def curation_rows(sides: CurationSides) -> list[CurationRow]:
    pass_no = sides.pass_no
    first_regions = {r["id"] for r in region_nodes(pass_no, sides.first.document, sides.first_earlier)}
    second_regions = {r["id"] for r in region_nodes(pass_no, sides.second.document, sides.second_earlier)}
    mapping = reference_map(sides.pairs, sides.earlier_pairs)
    rows = []
    for index, pair in enumerate(sides.pairs):
        id_key = id_key_of(pair.collection, pass_no)
        mine = _record(sides.first.document, pair.collection, pair.first_id, id_key)
        theirs = _record(sides.second.document, pair.collection, pair.second_id, id_key)
        kind = "matched" if mine and theirs else "first_only" if mine else "second_only"
        differs: tuple[str, ...] = ()
        if mine is not None and theirs is not None and pair.first_id is not None:
            carried = in_first_terms(theirs, pair.first_id, id_key=id_key, mapping=mapping)
            differs = tuple(k for k in dict.fromkeys([*mine, *carried]) if mine.get(k) != carried.get(k))
        rows.append(
            CurationRow(
                index=index,
                collection=pair.collection,
                noun=COLLECTION_NOUNS.get(pair.collection, ("record", "records"))[0],
                first_id=pair.first_id,
                second_id=pair.second_id,
                score=round(pair.score, 4),
                kind=kind,
                allowed=allowed_keeps(pair),
                default=default_keep(pair),
                first_label=record_label(pair.collection, mine),
                second_label=record_label(pair.collection, theirs),
                first_regions=_regions(pair.collection, mine, first_regions),
                second_regions=_regions(pair.collection, theirs, second_regions),
                differs=differs,
            )
        )
    return rows


def _record(document: Doc, collection: str, record_id: str | None, id_key: str) -> dict[str, Any] | None:
    if record_id is None:
        return None
    rows = document.get(collection) if isinstance(document, dict) else None
    if not isinstance(rows, list):
        return None
    return next((r for r in rows if isinstance(r, dict) and r.get(id_key) == record_id), None)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


REGION_KEYS = ("visual_anchor_ids", "evidence_visual_ids")


def _regions(collection: str, record: dict[str, Any] | None, regions: set[str]) -> tuple[str, ...]:
    """The regions ``record`` stands for or rests on: itself (a region), its anchors and visual evidence, a
    binding's region end."""
    if record is None:
        return ()
    found: list[str] = []
    if collection == "visual_nodes" and isinstance(record.get("id"), str):
        found.append(record["id"])
    for key in REGION_KEYS:
        found += _strings(record.get(key))
    if collection == "bindings" and isinstance(record.get("from_id"), str):
        found.append(record["from_id"])
    return tuple(r for r in dict.fromkeys(found) if r in regions)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def record_label(collection: str, record: dict[str, Any] | None) -> str:
    """One line naming a record as a curator compares it: its kind, its words, its numbers."""
    if record is None:
        return ""
    get = record.get
    if collection == "visual_nodes":
        kind = "/".join(p for p in (_text(get("type")), _text(get("subtype"))) if p)
        text = f" “{_text(get('text'))}”" if _text(get("text")) else ""
        box = get("bbox_1000")
        return f"{kind}{text} {box}" if isinstance(box, list) else f"{kind}{text}"
    if collection in ("physical_nodes", "new_or_updated_physical_nodes"):
        symbol = f" ({_text(get('symbol'))})" if _text(get("symbol")) else ""
        anchors = ", ".join(_strings(get("visual_anchor_ids")))
        return f"{_text(get('type'))} “{_text(get('name'))}”{symbol}" + (f" on {anchors}" if anchors else "")
    if collection == "bindings":
        return f"{_text(get('type'))} {_text(get('from_id'))} → {_text(get('to_id'))}"
    if collection == "text_mentions":
        return f"{_text(get('section'))} “{_text(get('quote'))}” #{get('occurrence')} ({_text(get('role'))})"
    if collection == "quantities":
        value = " ".join(p for p in (_text(get("value_latex")), _text(get("unit_latex"))) if p)
        owner = f" of {_text(get('owner_id'))}" if _text(get("owner_id")) else ""
        return f"{_text(get('kind'))} {_text(get('symbol_latex'))}" + (f" = {value}" if value else "") + owner
    if collection == "constraints":
        subjects = ", ".join(_strings(get("subject_ids")))
        return f"{_text(get('kind'))} on {subjects}: “{_text(get('value_text'))}”"
    if collection == "relations":
        return f"{_text(get('subject_id'))} {_text(get('predicate'))} {_text(get('object_id'))}"
    return _text(get("type")) or _text(get("kind"))


def curation_list(*, parent: ParentProblem, pass_no: int) -> list[Curation]:
    """The pass's curations, newest first."""
    return list(Curation.objects.filter(parent=parent, pass_no=pass_no).select_related("curator"))
