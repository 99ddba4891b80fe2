"""A simulated second annotator: a seeded, perturbed copy of one parent's pass documents. Pure.

The agreement figures must catch each kind of slip a real second annotator makes; this module makes three,
each one on its own seeded random stream (so switching one off leaves the others exactly as they were):

Shifted boxes (``shift``)
    Every visual node moves by a seeded whole offset (dx, dy), each drawn uniformly from
    [−cap, cap] with cap = min(``shift``, ⌊side / 8⌋) per axis, the side being the node's box width
    (height). A box moved by at most 1/8 of each side keeps IoU ≥ (7/8)² / (2 − (7/8)²) ≈ 0.62, above the
    default threshold 0.5: the shift lowers the mean IoU without unmatching anything, as an annotator's
    jitter does. A node drawn as a shape (keypoints, centre) moves by at most 3 units per axis (and a
    quarter of its radius), so its shape similarity (tolerance 25) stays ≥ 0.83 for its points. The box,
    keypoints and centre move together, and never past the 0–1000 frame.
Dropped label (``drop_label``)
    One seeded ``text_glyph`` node is left out, with what refers to it in later passes: the bindings from
    it, its id in every ``*_ids`` list, and IMAGE in a provenance that loses its last visual evidence. Only
    a glyph whose removal leaves every record evidenced (a Pass 2 entity still bound to a region, every
    provenance non-empty) is a candidate; with none, nothing is dropped. Visual ids (and the ids of the
    bindings of a document that lost one) are then renumbered v001… so the documents stay valid.
Wrong unit (``wrong_unit``)
    One seeded quantity with a unit gets another unit (kg → g, m → cm, …; a unit not in the table gets the
    prefix k), in every pass that holds it.

Passes 1–4 are perturbed consistently (Pass 4 repeats Pass 1–3's records); other keys are copied.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from annotation.agreement.core import normalized_text

SIDE_SHARE = 8  # a box moves by at most 1/SIDE_SHARE of its side
SHAPE_CAP = 3  # units of 1000
WRONG_UNITS = {
    "kg": "g",
    "g": "kg",
    "m": "cm",
    "cm": "m",
    "mm": "cm",
    "km": "m",
    "s": "ms",
    "ms": "s",
    "N": "kN",
    "J": "kJ",
    "W": "kW",
    "V": "mV",
    "mV": "V",
    "A": "mA",
    "mA": "A",
    "C": "mC",
    "nC": "C",
    "μC": "C",
    "Ω": "kΩ",
    "Hz": "kHz",
    "Pa": "kPa",
    "T": "mT",
    "K": "°C",
    "°": "rad",
    "^\\circ": "rad",
    "^{\\circ}": "rad",
    "\\Omega": "k\\Omega",
    "m/s": "km/h",
    "m/s^2": "cm/s^2",
    "N/m": "N/cm",
}

Doc = dict[str, Any]


@dataclass(frozen=True)
class Perturbation:
    """The perturbed documents and what was done (ids are the original documents')."""

    documents: dict[int, Doc]
    offsets: dict[str, tuple[int, int]] = field(default_factory=dict)
    dropped_id: str | None = None
    dropped_text: str | None = None
    renamed: dict[str, str] = field(default_factory=dict)  # original visual id -> its id in the copy
    unit_quantity_id: str | None = None
    unit_before: str | None = None
    unit_after: str | None = None


def _stream(seed: int, name: str) -> random.Random:
    return random.Random(f"physalign-agreement-perturb:{seed}:{name}")


def _visuals(docs: dict[int, Doc]) -> list[dict[str, Any]]:
    source = docs.get(1) or docs.get(4) or {}
    nodes = source.get("visual_nodes")
    return (
        [n for n in nodes if isinstance(n, dict) and isinstance(n.get("id"), str)]
        if isinstance(nodes, list)
        else []
    )


def _box(node: dict[str, Any]) -> list[int] | None:
    box = node.get("bbox_1000")
    if isinstance(box, list) and len(box) == 4 and all(type(v) is int for v in box):
        return box
    return None


def _drawn_points(node: dict[str, Any]) -> list[list[int]]:
    points = [p for p in node.get("keypoints_1000") or [] if isinstance(p, list) and len(p) == 2]
    center = node.get("center_1000")
    if isinstance(center, list) and len(center) == 2 and all(type(v) is int and v >= 0 for v in center):
        points.append(center)
    return [p for p in points if all(type(v) is int for v in p)]


def _offset(node: dict[str, Any], shift: int, rng: random.Random) -> tuple[int, int]:
    box = _box(node)
    if box is None:
        return 0, 0
    points = _drawn_points(node)
    radius = node.get("radius_1000")
    offsets = []
    for axis, (low, high) in enumerate(((box[0], box[2]), (box[1], box[3]))):
        cap = min(shift, (high - low) // SIDE_SHARE)
        if points:
            cap = min(cap, SHAPE_CAP)
        if isinstance(radius, int) and radius > 0:
            cap = min(cap, radius // 4)
        lows = [low, *(p[axis] for p in points)]
        highs = [high, *(p[axis] for p in points)]
        value = rng.randint(-max(cap, 0), max(cap, 0))
        offsets.append(max(-min(lows), min(1000 - max(highs), value)))
    return offsets[0], offsets[1]


def _moved(node: dict[str, Any], dx: int, dy: int) -> dict[str, Any]:
    out = dict(node)
    box = _box(node)
    if box is not None:
        out["bbox_1000"] = [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]
    points = node.get("keypoints_1000")
    if isinstance(points, list):
        out["keypoints_1000"] = [
            [p[0] + dx, p[1] + dy] if isinstance(p, list) and len(p) == 2 else p for p in points
        ]
    center = node.get("center_1000")
    if isinstance(center, list) and len(center) == 2 and all(type(v) is int and v >= 0 for v in center):
        out["center_1000"] = [center[0] + dx, center[1] + dy]
    return out


_VISUAL_EVIDENCE = ("visual_anchor_ids", "evidence_visual_ids")


def _drop(docs: dict[int, Doc], vid: str) -> dict[int, Doc] | None:
    """``docs`` without the visual node ``vid`` and what refers to it; ``None`` when a record would be left
    without evidence."""
    out: dict[int, Doc] = {}
    for pass_no, document in docs.items():
        doc = copy.deepcopy(document)
        for key, rows in doc.items():
            if isinstance(rows, list):
                kept = _rows_without(rows, key, pass_no, vid)
                if kept is None:
                    return None
                doc[key] = kept
        out[pass_no] = doc
    return out


def _rows_without(rows: list[Any], key: str, pass_no: int, vid: str) -> list[Any] | None:
    kept = []
    for row in rows:
        if isinstance(row, dict):
            if (key == "visual_nodes" and row.get("id") == vid) or (
                key == "bindings" and vid in (row.get("from_id"), row.get("to_id"))
            ):
                continue
            for name, value in row.items():
                if name.endswith("_ids") and isinstance(value, list) and vid in value:
                    row[name] = [v for v in value if v != vid]
            if not _still_evidenced(row, key, pass_no):
                return None
        kept.append(row)
    return kept


def _still_evidenced(row: dict[str, Any], key: str, pass_no: int) -> bool:
    if pass_no == 2 and key == "physical_nodes" and not row.get("visual_anchor_ids"):
        return False
    provenance = row.get("provenance")
    if not isinstance(provenance, list) or "IMAGE" not in provenance:
        return True
    visual_keys = [k for k in _VISUAL_EVIDENCE if k in row]
    if visual_keys and not any(row[k] for k in visual_keys):
        row["provenance"] = [p for p in provenance if p != "IMAGE"]
    return bool(row["provenance"])


def _renumbered(docs: dict[int, Doc], renumber_bindings: set[int]) -> tuple[dict[int, Doc], dict[str, str]]:
    order = [n["id"] for n in _visuals(docs)]
    rename = {old: f"v{i:03d}" for i, old in enumerate(order, start=1)}

    def walk(value: object, key: str, names: dict[str, str]) -> object:
        if isinstance(value, dict):
            return {k: walk(v, k, names) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key, names) for v in value]
        if isinstance(value, str) and (key == "id" or key.endswith("_id") or key.endswith("_ids")):
            return names.get(value, value)
        return value

    out: dict[int, Doc] = {}
    for pass_no, doc in docs.items():
        names = dict(rename)
        bindings = doc.get("bindings")
        if pass_no in renumber_bindings and isinstance(bindings, list):
            ids = [b["id"] for b in bindings if isinstance(b, dict) and isinstance(b.get("id"), str)]
            names |= {old: f"b{i:03d}" for i, old in enumerate(ids, start=1)}
        walked = walk(doc, "", names)
        assert isinstance(walked, dict)
        out[pass_no] = walked
    return out, rename


def wrong_unit_for(unit: str) -> str:
    """Another unit than ``unit`` (compared after the label normalizer)."""
    plain = normalized_text(unit)
    return WRONG_UNITS.get(plain, f"k{plain}")


def perturbation(
    pass_docs: dict[int, Doc],
    *,
    seed: int,
    shift: int = 30,
    drop_label: bool = True,
    wrong_unit: bool = True,
) -> Perturbation:
    """The perturbed copy of ``pass_docs`` ({pass_no: document}) and what was changed (module docstring)."""
    docs = {n: copy.deepcopy(d) for n, d in pass_docs.items() if n in (1, 2, 3, 4) and isinstance(d, dict)}
    rng = _stream(seed, "shift")
    offsets = {node["id"]: _offset(node, shift, rng) for node in _visuals(docs)} if shift > 0 else {}
    for doc in docs.values():
        nodes = doc.get("visual_nodes")
        if isinstance(nodes, list):
            doc["visual_nodes"] = [
                _moved(n, *offsets[n["id"]]) if isinstance(n, dict) and n.get("id") in offsets else n
                for n in nodes
            ]

    dropped_id = dropped_text = None
    lost: set[int] = set()  # the passes that lost a binding, whose binding ids are renumbered
    if drop_label:
        glyphs = [n for n in _visuals(docs) if n.get("type") == "text_glyph"]
        candidates = [(n, d) for n in glyphs if (d := _drop(docs, n["id"])) is not None]
        if candidates:
            node, dropped_docs = _stream(seed, "drop").choice(candidates)
            before = {n: len(d.get("bindings") or []) for n, d in docs.items()}
            dropped_id, dropped_text = node["id"], str(node.get("text", ""))
            lost = {n for n, d in dropped_docs.items() if len(d.get("bindings") or []) != before[n]}
            docs = dropped_docs
    docs, renamed = _renumbered(docs, lost)

    unit_id = unit_before = unit_after = None
    if wrong_unit:
        source = docs.get(3) or docs.get(4) or {}
        quantities = [
            q
            for q in source.get("quantities") or []
            if isinstance(q, dict) and isinstance(q.get("id"), str) and normalized_text(q.get("unit_latex"))
        ]
        if quantities:
            chosen = _stream(seed, "unit").choice(quantities)
            unit_id, unit_before = chosen["id"], str(chosen["unit_latex"])
            unit_after = wrong_unit_for(unit_before)
            for pass_no in (3, 4):
                for q in (docs.get(pass_no) or {}).get("quantities") or []:
                    if isinstance(q, dict) and q.get("id") == unit_id:
                        q["unit_latex"] = unit_after
    return Perturbation(
        documents=docs,
        offsets=offsets,
        dropped_id=dropped_id,
        dropped_text=dropped_text,
        renamed=renamed,
        unit_quantity_id=unit_id,
        unit_before=unit_before,
        unit_after=unit_after,
    )


def perturb(
    pass_docs: dict[int, Doc],
    *,
    seed: int,
    shift: int = 30,
    drop_label: bool = True,
    wrong_unit: bool = True,
) -> dict[int, Doc]:
    """A seeded copy of ``pass_docs`` with shifted boxes, one dropped text label (and what refers to it) and
    one quantity's unit changed; see :func:`perturbation` for what was changed."""
    return perturbation(
        pass_docs, seed=seed, shift=shift, drop_label=drop_label, wrong_unit=wrong_unit
    ).documents
