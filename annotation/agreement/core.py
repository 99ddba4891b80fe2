"""Agreement between two annotations of one parent, pass by pass. Pure: no Django, no app.

``record_pairs`` matches the records of two pass documents (the first annotator's and the second's);
``pass_agreement`` turns the matching into JSON-able figures; ``combine`` pools the figures of many parents
(counts are summed and every rate and κ recomputed from the sums, a micro average); ``cohen_kappa`` is the
chance-corrected agreement on a category. The rules:

Regions (Pass 1 ``visual_nodes``)
    One-to-one optimal assignment (``scipy.optimize.linear_sum_assignment``) maximising the similarity of
    the pairs; a pair below ``threshold`` (default 0.5) is not a match. Regions on different images have
    similarity 0. The similarity is the IoU of ``bbox_1000``, except when both regions draw the same shape
    (``kit.passes.shapes.shape_of``), which then uses the shape's own rule, with a point tolerance
    ``tolerance`` (default 25 units of 1000):

    - point: ``max(0, 1 − d / tolerance)``, ``d`` the distance of the two keypoints;
    - arrow: the mean of the point similarities of tail↔tail and head↔head (direction matters: a reversed
      arrow pairs tail with head);
    - line, polyline, curve (same keypoint count): the mean point similarity of the keypoints in order or
      reversed, whichever is higher (a line has no direction); different counts fall back to box IoU;
    - angle: the mean of the vertex's similarity and of the arms' (in whichever order is higher);
    - circle: the IoU of the two discs (centre and radius as stored, i.e. exact on a square image);
    - arc: the disc IoU times the arrow rule on its two end points (an arc runs clockwise from the first).

    Figures: regions on each side, matched, unmatched on each side, mean similarity of the matches
    (``mean_score``, the mean IoU for boxes), precision = matched / second, recall = matched / first,
    F1; and the type agreement of matched regions.
Transcription
    On matched regions of which at least one is a ``text_glyph`` or carries text: exact equality of the
    texts after the Kit's label normalizer ``kit.normalizers.normalize(…, "ocr_label_v2_1")``; a text that
    profile refuses (TeX left in it) is compared as the literal profile gives it (NFC, stripped), and a text
    without meaningful characters as "".
Text mentions (Pass 3 ``text_mentions``)
    Matched when section, quote and occurrence are equal (they name the same span of the problem text).
Entities (Pass 2 ``physical_nodes``; in Pass 3, Pass 2's nodes updated by its own, for the owners)
    An entity's evidence is the set of regions it is bound to (its ``visual_anchor_ids`` and the
    ``labels``/``represents`` bindings to it) and of mentions bound to it (``text_mention_ids`` and
    ``refers_to`` bindings). Entities are matched one-to-one by an optimal assignment on the count of shared
    evidence carried through the region (and mention) matching (the first's region r counts as shared when
    match(r) is in the second's set), ties broken by the higher Jaccard; a pair sharing nothing is not a
    match. The pair's score is that Jaccard. Figures: the matching as for regions; type agreement on matched
    entities and Cohen's κ on entity type; binding agreement on matched regions bound to an entity on
    either side: the region pair agrees when the first's entities of r, carried through the entity matching,
    are exactly the second's entities of match(r).
Quantities (Pass 3 ``quantities``)
    Matched one-to-one by an optimal assignment on the count of shared anchors (``visual_anchor_ids``
    through the region matching, ``text_mention_ids`` through the mention matching), then on equal symbols
    (``symbol_latex`` after the label normalizer); a pair with neither is not a match. Score: the Jaccard
    of the evidence (anchors, and the symbol as one more element). On matched quantities: agreement on
    ``kind`` (and κ), ``value_latex`` and ``unit_latex`` (after the label normalizer), and owner (the
    first's ``owner_id`` carried through the entity matching equals the second's; both empty agree).
Bindings and constraints
    Paired when their endpoints (subjects) correspond through the matchings; a binding's score is 1.0 with
    the same type and 0.5 with another, a constraint's the Jaccard of its subjects (same kind required).
Earlier passes
    ``first_earlier``/``second_earlier`` are the same annotator's earlier passes ({1: pass 1, 2: pass 2}),
    so that Pass 2 and 3 records are compared through the matching of the regions (and entities) they
    refer to. Without them, an id refers to the same record on both sides (region v001 ↔ v001).
    Pass 4 holds everything and is compared in full; ambiguities and the query target are not compared.
Rates and κ
    A rate is agree / n; with n = 0 it is ``None`` (so is a precision over no second records, etc.).
    Identical documents give every rate 1.0 and κ 1.0 — or κ ``None`` when every rating falls in one
    category (chance agreement 1 leaves κ undefined); the count ``n`` is always stated.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kit.normalizers import LABEL, LITERAL, normalize
from kit.passes.shapes import center_of, radius_of, shape_of

DEFAULT_THRESHOLD = 0.5
POINT_TOLERANCE = 25.0  # units of 1000
REGION_BINDING_TYPES = ("labels", "represents")
PASS_NOS = (1, 2, 3, 4)

Doc = dict[str, Any]


@dataclass(frozen=True)
class RecordPair:
    collection: str  # the document key: "visual_nodes", "physical_nodes", "quantities", "bindings", …
    first_id: str | None  # record id in the first document (None: only in the second)
    second_id: str | None  # record id in the second document (None: only in the first)
    score: float  # IoU / similarity of the match (0.0 when unmatched)


# --------------------------------------------------------------------------------------------
# Small readers (documents may be drafts: every reader tolerates malformed records)
# --------------------------------------------------------------------------------------------


def _records(document: Doc | None, key: str) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        return []
    rows = document.get(key)
    if not isinstance(rows, list):
        return []
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str)]


def _by_id(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        out.setdefault(row["id"], row)
    return out


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def normalized_text(value: object) -> str:
    """The label reading of ``value``; the literal reading when TeX is left in it; "" without text."""
    if not isinstance(value, str):
        return ""
    return normalize(value, LABEL) or normalize(value, LITERAL) or ""


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


# --------------------------------------------------------------------------------------------
# Region similarity
# --------------------------------------------------------------------------------------------


def _box(node: dict[str, Any]) -> tuple[float, float, float, float] | None:
    box = node.get("bbox_1000")
    if not (isinstance(box, list) and len(box) == 4 and all(isinstance(v, int | float) for v in box)):
        return None
    x0, y0, x1, y1 = (float(v) for v in box)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def box_iou(a: dict[str, Any], b: dict[str, Any]) -> float:
    """IoU of the two nodes' ``bbox_1000`` (0.0 when either is missing or empty)."""
    box_a, box_b = _box(a), _box(b)
    if box_a is None or box_b is None:
        return 0.0
    w = min(box_a[2], box_b[2]) - max(box_a[0], box_b[0])
    h = min(box_a[3], box_b[3]) - max(box_a[1], box_b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    area_a = (box_a[2] - box_a[0]) * (box_a[3] - box_a[1])
    area_b = (box_b[2] - box_b[0]) * (box_b[3] - box_b[1])
    return inter / (area_a + area_b - inter)


def _points(node: dict[str, Any]) -> list[tuple[float, float]]:
    return [(float(p[0]), float(p[1])) for p in node.get("keypoints_1000") or []]


def point_similarity(p: tuple[float, float], q: tuple[float, float], tolerance: float) -> float:
    return max(0.0, 1.0 - math.dist(p, q) / tolerance)


def _ordered(ps: list[tuple[float, float]], qs: list[tuple[float, float]], tolerance: float) -> float:
    return sum(point_similarity(p, q, tolerance) for p, q in zip(ps, qs, strict=True)) / len(ps)


def disc_iou(c1: tuple[float, float], r1: float, c2: tuple[float, float], r2: float) -> float:
    """IoU of two discs (the lens area of their intersection over the union)."""
    d = math.dist(c1, c2)
    a1, a2 = math.pi * r1 * r1, math.pi * r2 * r2
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        inter = min(a1, a2)
    else:
        alpha = math.acos((d * d + r1 * r1 - r2 * r2) / (2 * d * r1))
        beta = math.acos((d * d + r2 * r2 - r1 * r1) / (2 * d * r2))
        inter = r1 * r1 * (alpha - math.sin(2 * alpha) / 2) + r2 * r2 * (beta - math.sin(2 * beta) / 2)
    return inter / (a1 + a2 - inter)


def _disc(node: dict[str, Any]) -> tuple[tuple[float, float], float]:
    center, radius = center_of(node), radius_of(node)
    assert center is not None and radius is not None  # shape_of checked both
    return (float(center[0]), float(center[1])), float(radius)


def region_similarity(a: dict[str, Any], b: dict[str, Any], *, tolerance: float = POINT_TOLERANCE) -> float:
    """The similarity of two visual nodes in [0, 1] (the module docstring's rule)."""
    if a.get("image_id") != b.get("image_id"):
        return 0.0
    shape = shape_of(a)
    if shape is None or shape != shape_of(b):
        return box_iou(a, b)
    ps, qs = _points(a), _points(b)
    if shape == "point":
        return point_similarity(ps[0], qs[0], tolerance)
    if shape == "arrow":
        return _ordered(ps, qs, tolerance)
    if shape in ("line", "polyline", "curve"):
        if len(ps) != len(qs):
            return box_iou(a, b)
        return max(_ordered(ps, qs, tolerance), _ordered(ps, qs[::-1], tolerance))
    if shape == "angle":
        arms = max(_ordered(ps[1:], qs[1:], tolerance), _ordered(ps[1:], qs[:0:-1], tolerance))
        return (point_similarity(ps[0], qs[0], tolerance) + arms) / 2
    (c1, r1), (c2, r2) = _disc(a), _disc(b)
    if shape == "circle":
        return disc_iou(c1, r1, c2, r2)
    return disc_iou(c1, r1, c2, r2) * _ordered(ps, qs, tolerance)  # arc


# --------------------------------------------------------------------------------------------
# Optimal one-to-one assignment
# --------------------------------------------------------------------------------------------


def assign(
    first: list[str],
    second: list[str],
    weight: Callable[[str, str], float],
    *,
    accept: Callable[[str, str], bool],
) -> dict[str, str]:
    """The one-to-one assignment of ``first`` to ``second`` ids maximising the total ``weight``; only pairs
    that ``accept`` holds for are kept (first id -> second id)."""
    if not first or not second:
        return {}
    # scipy.optimize loads on first use (~0.7 s): the URL conf, which imports the pages, stays light
    from scipy.optimize import linear_sum_assignment

    matrix = np.array([[weight(a, b) for b in second] for a in first], dtype=float)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return {first[i]: second[j] for i, j in zip(rows, cols, strict=True) if accept(first[i], second[j])}


@dataclass
class _Matching:
    """One collection's matching: first id -> second id, each pair's score, and both id lists in order."""

    first: list[str]
    second: list[str]
    pairs: dict[str, str] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    def figures(self) -> dict[str, Any]:
        matched = len(self.pairs)
        precision = _ratio(matched, len(self.second))
        recall = _ratio(matched, len(self.first))
        f1 = (
            None
            if precision is None or recall is None
            else _ratio(2 * matched, len(self.first) + len(self.second))
        )
        score_sum = sum(self.scores.values())
        return {
            "first": len(self.first),
            "second": len(self.second),
            "matched": matched,
            "unmatched_first": len(self.first) - matched,
            "unmatched_second": len(self.second) - matched,
            "score_sum": score_sum,
            "mean_score": _ratio(score_sum, matched),
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }

    def record_pairs(self, collection: str, keep_first: set[str], keep_second: set[str]) -> list[RecordPair]:
        out: list[RecordPair] = []
        matched_second = set(self.pairs.values())
        for a in self.first:
            b = self.pairs.get(a)
            a_kept = a in keep_first
            b_kept = b is not None and b in keep_second
            if a_kept or b_kept:
                out.append(
                    RecordPair(
                        collection,
                        a if a_kept else None,
                        b if b_kept else None,
                        self.scores[a] if a_kept and b_kept else 0.0,
                    )
                )
        for b in self.second:
            if b not in matched_second and b in keep_second:
                out.append(RecordPair(collection, None, b, 0.0))
        return out


def _identity(first: list[str], second: list[str]) -> _Matching:
    shared = [a for a in first if a in set(second)]
    return _Matching(first, second, {a: a for a in shared}, {a: 1.0 for a in shared})


# --------------------------------------------------------------------------------------------
# The two sides' views of a pass
# --------------------------------------------------------------------------------------------


@dataclass
class _Side:
    visuals: dict[str, dict[str, Any]] | None  # None: the side's Pass 1 is unknown
    entities: dict[str, dict[str, Any]]
    mentions: dict[str, dict[str, Any]]
    quantities: dict[str, dict[str, Any]]
    bindings: list[dict[str, Any]]  # every binding the entity evidence reads
    own_bindings: dict[str, dict[str, Any]]  # the bindings of the compared pass itself
    constraints: dict[str, dict[str, Any]]
    entity_collection: str
    own_entities: set[str]
    referenced_visuals: set[str]


def _side(pass_no: int, document: Doc, earlier: dict[int, Doc] | None) -> _Side:
    earlier = earlier or {}
    if pass_no in (1, 4):
        visuals: dict[str, dict[str, Any]] | None = _by_id(_records(document, "visual_nodes"))
    else:
        visuals = _by_id(_records(earlier[1], "visual_nodes")) if 1 in earlier else None
    entities: dict[str, dict[str, Any]] = {}
    bindings: list[dict[str, Any]] = []
    entity_collection = "physical_nodes"
    own_entities: set[str] = set()
    if pass_no in (2, 4):
        entities = _by_id(_records(document, "physical_nodes"))
        own_entities = set(entities)
    elif pass_no == 3:
        entity_collection = "new_or_updated_physical_nodes"
        entities = _by_id(_records(earlier.get(2), "physical_nodes"))
        bindings = _records(earlier.get(2), "bindings")
        updated = _by_id(_records(document, "new_or_updated_physical_nodes"))
        entities.update(updated)
        own_entities = set(updated)
    own_bindings = _by_id(_records(document, "bindings")) if pass_no >= 2 else {}
    bindings = bindings + list(own_bindings.values())
    referenced = {r for node in entities.values() for r in _strings(node.get("visual_anchor_ids"))} | {
        b.get("from_id") for b in bindings if isinstance(b.get("from_id"), str)
    }
    has_text = pass_no in (3, 4)
    return _Side(
        visuals=visuals,
        entities=entities,
        mentions=_by_id(_records(document, "text_mentions")) if has_text else {},
        quantities=_by_id(_records(document, "quantities")) if has_text else {},
        bindings=bindings,
        own_bindings=own_bindings,
        constraints=_by_id(_records(document, "constraints")) if has_text else {},
        entity_collection=entity_collection,
        own_entities=own_entities,
        referenced_visuals={r for r in referenced if isinstance(r, str)},
    )


def _entity_evidence(side: _Side) -> dict[str, tuple[set[str], set[str]]]:
    """entity id -> (regions, mentions) bound to it."""
    out = {
        pid: (set(_strings(node.get("visual_anchor_ids"))), set(_strings(node.get("text_mention_ids"))))
        for pid, node in side.entities.items()
    }
    for binding in side.bindings:
        target, source = binding.get("to_id"), binding.get("from_id")
        if target not in out or not isinstance(source, str):
            continue
        if binding.get("type") in REGION_BINDING_TYPES:
            out[target][0].add(source)
        elif binding.get("type") == "refers_to":
            out[target][1].add(source)
    return out


def _region_entities(side: _Side) -> dict[str, set[str]]:
    """region id -> the entities it is bound to."""
    out: dict[str, set[str]] = {}
    for pid, (regions, _) in _entity_evidence(side).items():
        for region in regions:
            out.setdefault(region, set()).add(pid)
    return out


# --------------------------------------------------------------------------------------------
# Matching each collection
# --------------------------------------------------------------------------------------------


def _match_regions(a: _Side, b: _Side, threshold: float, tolerance: float) -> _Matching:
    if a.visuals is None or b.visuals is None:
        # An earlier pass is missing: a referenced region id means the same region on both sides.
        first = sorted(a.referenced_visuals) if a.visuals is None else list(a.visuals)
        second = sorted(b.referenced_visuals) if b.visuals is None else list(b.visuals)
        return _identity(first, second)
    va, vb = a.visuals, b.visuals
    cache: dict[tuple[str, str], float] = {}

    def similarity(x: str, y: str) -> float:
        if (x, y) not in cache:
            cache[(x, y)] = region_similarity(va[x], vb[y], tolerance=tolerance)
        return cache[(x, y)]

    first, second = list(va), list(vb)
    pairs = assign(
        first, second, similarity, accept=lambda x, y: similarity(x, y) >= threshold and similarity(x, y) > 0
    )
    return _Matching(first, second, pairs, {x: similarity(x, y) for x, y in pairs.items()})


def _mention_key(mention: dict[str, Any]) -> tuple[object, object, object]:
    return mention.get("section"), mention.get("quote"), mention.get("occurrence")


def _match_mentions(a: _Side, b: _Side) -> _Matching:
    by_key: dict[tuple[object, object, object], str] = {}
    for mid, mention in b.mentions.items():
        by_key.setdefault(_mention_key(mention), mid)
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for mid, mention in a.mentions.items():
        other = by_key.get(_mention_key(mention))
        if other is not None and other not in taken:
            pairs[mid] = other
            taken.add(other)
    return _Matching(list(a.mentions), list(b.mentions), pairs, {x: 1.0 for x in pairs})


def _carried(ids: Iterable[str], matching: _Matching) -> set[str]:
    return {matching.pairs[i] for i in ids if i in matching.pairs}


def _jaccard(shared: int, size_a: int, size_b: int) -> float:
    union = size_a + size_b - shared
    return shared / union if union else 0.0


def _shared(evidence: tuple[set[str], ...], other: tuple[set[str], ...], carry: tuple[_Matching, ...]) -> int:
    return sum(len(_carried(ev, m) & theirs) for ev, m, theirs in zip(evidence, carry, other, strict=True))


def _size(evidence: tuple[set[str], ...]) -> int:
    return sum(len(ev) for ev in evidence)


def _match_entities(a: _Side, b: _Side, regions: _Matching, mentions: _Matching) -> _Matching:
    """Optimal assignment on the count of shared carried regions and mentions, ties broken by the Jaccard."""
    ev_a, ev_b = _entity_evidence(a), _entity_evidence(b)
    carry = (regions, mentions)
    big = (
        min(len(ev_a), len(ev_b)) + 1
    )  # the Jaccards of a whole assignment sum to less than one shared element

    def jaccard(x: str, y: str) -> float:
        return _jaccard(_shared(ev_a[x], ev_b[y], carry), _size(ev_a[x]), _size(ev_b[y]))

    def weight(x: str, y: str) -> float:
        shared = _shared(ev_a[x], ev_b[y], carry)
        return shared * big + jaccard(x, y) if shared else 0.0

    ids_a, ids_b = list(ev_a), list(ev_b)
    pairs = assign(ids_a, ids_b, weight, accept=lambda x, y: _shared(ev_a[x], ev_b[y], carry) > 0)
    return _Matching(ids_a, ids_b, pairs, {x: jaccard(x, y) for x, y in pairs.items()})


def _match_quantities(a: _Side, b: _Side, regions: _Matching, mentions: _Matching) -> _Matching:
    """Optimal assignment on shared carried anchors first, then on an equal symbol, then on the Jaccard."""

    def evidence(q: dict[str, Any]) -> tuple[set[str], set[str]]:
        return set(_strings(q.get("visual_anchor_ids"))), set(_strings(q.get("text_mention_ids")))

    def symbol(q: dict[str, Any]) -> str:
        return normalized_text(q.get("symbol_latex"))

    ev_a = {k: evidence(q) for k, q in a.quantities.items()}
    ev_b = {k: evidence(q) for k, q in b.quantities.items()}
    sym_a = {k: symbol(q) for k, q in a.quantities.items()}
    sym_b = {k: symbol(q) for k, q in b.quantities.items()}
    carry = (regions, mentions)
    big = min(len(ev_a), len(ev_b)) + 1

    def parts(x: str, y: str) -> tuple[int, int, float]:
        anchors = _shared(ev_a[x], ev_b[y], carry)
        same = int(bool(sym_a[x]) and sym_a[x] == sym_b[y])
        size_a = _size(ev_a[x]) + bool(sym_a[x])
        size_b = _size(ev_b[y]) + bool(sym_b[y])
        return anchors, same, _jaccard(anchors + same, size_a, size_b)

    def weight(x: str, y: str) -> float:
        anchors, same, jaccard = parts(x, y)
        return (anchors * big + same) * big + jaccard if anchors or same else 0.0

    ids_a, ids_b = list(ev_a), list(ev_b)
    pairs = assign(ids_a, ids_b, weight, accept=lambda x, y: sum(parts(x, y)[:2]) > 0)
    return _Matching(ids_a, ids_b, pairs, {x: parts(x, y)[2] for x, y in pairs.items()})


def _endpoint(value: object, maps: tuple[_Matching, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    for matching in maps:
        if value in matching.pairs:
            return matching.pairs[value]
    return None


def _match_bindings(a: _Side, b: _Side, maps: tuple[_Matching, ...], entities: _Matching) -> _Matching:
    index: dict[tuple[str, str], list[str]] = {}
    for bid, binding in b.own_bindings.items():
        if isinstance(binding.get("from_id"), str) and isinstance(binding.get("to_id"), str):
            index.setdefault((binding["from_id"], binding["to_id"]), []).append(bid)
    pairs: dict[str, str] = {}
    scores: dict[str, float] = {}
    taken: set[str] = set()
    for bid, binding in a.own_bindings.items():
        source = _endpoint(binding.get("from_id"), (*maps, entities))
        target = _endpoint(binding.get("to_id"), (entities,))
        if source is None or target is None:
            continue
        candidates = [c for c in index.get((source, target), []) if c not in taken]
        if not candidates:
            continue
        same_type = [c for c in candidates if b.own_bindings[c].get("type") == binding.get("type")]
        chosen = (same_type or candidates)[0]
        taken.add(chosen)
        pairs[bid] = chosen
        scores[bid] = 1.0 if same_type else 0.5
    return _Matching(list(a.own_bindings), list(b.own_bindings), pairs, scores)


def _match_constraints(a: _Side, b: _Side, maps: tuple[_Matching, ...]) -> _Matching:
    def subjects(c: dict[str, Any]) -> set[str]:
        return set(_strings(c.get("subject_ids")))

    def carried(x: str) -> set[str]:
        out = set()
        for s in subjects(a.constraints[x]):
            mapped = _endpoint(s, maps)
            if mapped is not None:
                out.add(mapped)
        return out

    def score(x: str, y: str) -> float:
        if a.constraints[x].get("kind") != b.constraints[y].get("kind"):
            return 0.0
        mine, theirs = carried(x), subjects(b.constraints[y])
        shared = len(mine & theirs)
        return _jaccard(shared, len(subjects(a.constraints[x])), len(theirs)) if shared else 0.0

    ids_a, ids_b = list(a.constraints), list(b.constraints)
    pairs = assign(ids_a, ids_b, score, accept=lambda x, y: score(x, y) > 0)
    return _Matching(ids_a, ids_b, pairs, {x: score(x, y) for x, y in pairs.items()})


@dataclass
class _Comparison:
    pass_no: int
    first: _Side
    second: _Side
    regions: _Matching
    mentions: _Matching
    entities: _Matching
    quantities: _Matching
    bindings: _Matching
    constraints: _Matching


def _compare(
    pass_no: int,
    first: Doc,
    second: Doc,
    threshold: float,
    tolerance: float,
    first_earlier: dict[int, Doc] | None,
    second_earlier: dict[int, Doc] | None,
) -> _Comparison:
    if pass_no not in PASS_NOS:
        raise ValueError(f"agreement compares passes 1–4, not {pass_no!r}")
    a, b = _side(pass_no, first, first_earlier), _side(pass_no, second, second_earlier)
    regions = _match_regions(a, b, threshold, tolerance)
    mentions = _match_mentions(a, b)
    entities = _match_entities(a, b, regions, mentions)
    quantities = _match_quantities(a, b, regions, mentions)
    bindings = _match_bindings(a, b, (regions, mentions), entities)
    constraints = _match_constraints(a, b, (regions, mentions, entities, quantities))
    return _Comparison(pass_no, a, b, regions, mentions, entities, quantities, bindings, constraints)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def record_pairs(
    pass_no: int,
    first: Doc,
    second: Doc,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    first_earlier: dict[int, Doc] | None = None,
    second_earlier: dict[int, Doc] | None = None,
    tolerance: float = POINT_TOLERANCE,
) -> list[RecordPair]:
    """Every record of the pass's own collections, paired with its match on the other side (or alone).

    Collections by pass: 1 ``visual_nodes``; 2 ``physical_nodes``, ``bindings``; 3 ``text_mentions``,
    ``new_or_updated_physical_nodes``, ``quantities``, ``bindings``, ``constraints``; 4 ``visual_nodes``,
    ``physical_nodes``, ``text_mentions``, ``quantities``, ``bindings``, ``constraints``. Within a
    collection: the first's records in document order (matched or not), then the second's unmatched ones.
    """
    c = _compare(pass_no, first, second, threshold, tolerance, first_earlier, second_earlier)
    a, b = c.first, c.second
    out: list[RecordPair] = []
    if pass_no in (1, 4):
        out += c.regions.record_pairs("visual_nodes", set(c.regions.first), set(c.regions.second))
    if pass_no == 2:
        out += c.entities.record_pairs("physical_nodes", a.own_entities, b.own_entities)
    if pass_no in (3, 4):
        out += c.mentions.record_pairs("text_mentions", set(a.mentions), set(b.mentions))
    if pass_no == 3:
        out += c.entities.record_pairs("new_or_updated_physical_nodes", a.own_entities, b.own_entities)
    if pass_no == 4:
        out += c.entities.record_pairs("physical_nodes", a.own_entities, b.own_entities)
    if pass_no in (3, 4):
        out += c.quantities.record_pairs("quantities", set(a.quantities), set(b.quantities))
    out += c.bindings.record_pairs("bindings", set(a.own_bindings), set(b.own_bindings))
    if pass_no in (3, 4):
        out += c.constraints.record_pairs("constraints", set(a.constraints), set(b.constraints))
    return out


def _agreement(
    pairs: Iterable[tuple[object, object]], same: Callable[[object, object], bool]
) -> dict[str, Any]:
    rows = list(pairs)
    agree = sum(1 for x, y in rows if same(x, y))
    return {"n": len(rows), "agree": agree, "rate": _ratio(agree, len(rows))}


def _equal(x: object, y: object) -> bool:
    return x == y


def cohen_kappa(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Cohen's κ of two raters over ``pairs`` of (first's category, second's category).

    ``{"kappa", "n", "observed", "expected"}``: p_o the share of equal pairs, p_e = Σ_k p_first(k)·p_second(k),
    κ = (p_o − p_e) / (1 − p_e). With n = 0 every figure but n is ``None``; with p_e = 1 (both raters used a
    single, the same, category) κ is ``None`` (undefined) while p_o and p_e are stated.
    """
    n = len(pairs)
    if n == 0:
        return {"kappa": None, "n": 0, "observed": None, "expected": None}
    observed = sum(1 for x, y in pairs if x == y) / n
    first, second = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(first[k] * second[k] for k in first) / (n * n)
    kappa = None if math.isclose(expected, 1.0) else (observed - expected) / (1 - expected)
    return {"kappa": kappa, "n": n, "observed": observed, "expected": expected}


def _categorical(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    figures = _agreement(pairs, _equal)
    figures["kappa"] = cohen_kappa(pairs)
    figures["pairs"] = [[x, y] for x, y in pairs]
    return figures


def _text_of(node: dict[str, Any]) -> str:
    return normalized_text(node.get("text"))


def _is_text_region(node: dict[str, Any]) -> bool:
    return node.get("type") == "text_glyph" or bool(_text_of(node))


def _region_figures(c: _Comparison) -> dict[str, Any]:
    va, vb = c.first.visuals or {}, c.second.visuals or {}
    matched = [(va[x], vb[y]) for x, y in c.regions.pairs.items()]
    text_pairs = [(x, y) for x, y in matched if _is_text_region(x) or _is_text_region(y)]
    return {
        "regions": c.regions.figures(),
        "transcription": _agreement(((_text_of(x), _text_of(y)) for x, y in text_pairs), _equal),
        "region_type": _agreement(((x.get("type"), y.get("type")) for x, y in matched), _equal),
    }


def _entity_figures(c: _Comparison) -> dict[str, Any]:
    ea, eb = c.first.entities, c.second.entities
    types = [(str(ea[x].get("type")), str(eb[y].get("type"))) for x, y in c.entities.pairs.items()]
    region_entities_a, region_entities_b = _region_entities(c.first), _region_entities(c.second)
    bound = [
        (x, y) for x, y in c.regions.pairs.items() if region_entities_a.get(x) or region_entities_b.get(y)
    ]

    def carried_entities(region: str) -> frozenset[str | None]:
        return frozenset(c.entities.pairs.get(p) for p in region_entities_a.get(region, set()))

    return {
        "entities": c.entities.figures(),
        "entity_type": _categorical(types),
        "binding": _agreement(
            ((carried_entities(x), frozenset(region_entities_b.get(y, set()))) for x, y in bound), _equal
        ),
    }


def _owner_same(c: _Comparison) -> Callable[[object, object], bool]:
    def same(x: object, y: object) -> bool:
        if not x and not y:
            return True
        return isinstance(x, str) and c.entities.pairs.get(x) == y

    return same


def _quantity_figures(c: _Comparison) -> dict[str, Any]:
    qa, qb = c.first.quantities, c.second.quantities
    matched = [(qa[x], qb[y]) for x, y in c.quantities.pairs.items()]

    def normalized(key: str) -> list[tuple[object, object]]:
        return [(normalized_text(x.get(key)), normalized_text(y.get(key))) for x, y in matched]

    return {
        "mentions": c.mentions.figures(),
        "quantities": c.quantities.figures(),
        "quantity_kind": _categorical([(str(x.get("kind")), str(y.get("kind"))) for x, y in matched]),
        "quantity_value": _agreement(normalized("value_latex"), _equal),
        "quantity_unit": _agreement(normalized("unit_latex"), _equal),
        "quantity_owner": _agreement(
            ((x.get("owner_id"), y.get("owner_id")) for x, y in matched), _owner_same(c)
        ),
    }


def pass_agreement(
    pass_no: int,
    first: Doc,
    second: Doc,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    first_earlier: dict[int, Doc] | None = None,
    second_earlier: dict[int, Doc] | None = None,
    tolerance: float = POINT_TOLERANCE,
) -> dict[str, Any]:
    """The JSON-able agreement figures of one pass (the module docstring's rules).

    Keys: ``pass_no``, ``threshold``; Pass 1 (and 4) ``regions`` (a matching: first, second, matched,
    unmatched_first, unmatched_second, score_sum, mean_score, precision, recall, f1), ``transcription``,
    ``region_type``; Pass 2 (and 4) ``entities`` (a matching), ``entity_type`` (with ``kappa`` and its
    ``pairs``), ``binding``; Pass 3 (and 4) ``mentions``, ``quantities`` (matchings), ``quantity_kind``
    (with ``kappa``), ``quantity_value``, ``quantity_unit``, ``quantity_owner``. An agreement is
    ``{"n", "agree", "rate"}``. Pass 3 matches its entities (Pass 2's, updated) only to compare owners.
    """
    c = _compare(pass_no, first, second, threshold, tolerance, first_earlier, second_earlier)
    out: dict[str, Any] = {"pass_no": pass_no, "threshold": threshold}
    if pass_no in (1, 4):
        out |= _region_figures(c)
    if pass_no in (2, 4):
        out |= _entity_figures(c)
    if pass_no in (3, 4):
        out |= _quantity_figures(c)
    return out


MATCHING_KEYS = ("regions", "entities", "mentions", "quantities")
AGREEMENT_KEYS = (
    "transcription",
    "region_type",
    "binding",
    "quantity_value",
    "quantity_unit",
    "quantity_owner",
)
CATEGORICAL_KEYS = ("entity_type", "quantity_kind")


def combine(figures: list[dict[str, Any]]) -> dict[str, Any]:
    """Pool the ``pass_agreement`` figures of several parents (of one pass): counts summed, rates, means
    and κ recomputed from the sums and the pooled category pairs. ``parents`` is how many were pooled."""
    out: dict[str, Any] = {"parents": len(figures)}
    if figures:
        out["pass_no"] = figures[0].get("pass_no")
        out["threshold"] = figures[0].get("threshold")
    for key in MATCHING_KEYS:
        rows = [f[key] for f in figures if key in f]
        if not rows:
            continue
        first = sum(r["first"] for r in rows)
        second = sum(r["second"] for r in rows)
        matched = sum(r["matched"] for r in rows)
        score_sum = sum(r["score_sum"] for r in rows)
        precision, recall = _ratio(matched, second), _ratio(matched, first)
        out[key] = {
            "first": first,
            "second": second,
            "matched": matched,
            "unmatched_first": first - matched,
            "unmatched_second": second - matched,
            "score_sum": score_sum,
            "mean_score": _ratio(score_sum, matched),
            "precision": precision,
            "recall": recall,
            "f1": None if precision is None or recall is None else _ratio(2 * matched, first + second),
        }
    for key in AGREEMENT_KEYS:
        rows = [f[key] for f in figures if key in f]
        if rows:
            n, agree = sum(r["n"] for r in rows), sum(r["agree"] for r in rows)
            out[key] = {"n": n, "agree": agree, "rate": _ratio(agree, n)}
    for key in CATEGORICAL_KEYS:
        rows = [f[key] for f in figures if key in f]
        if rows:
            pairs = [(str(x), str(y)) for r in rows for x, y in r["pairs"]]
            out[key] = _categorical(pairs)
    return out
