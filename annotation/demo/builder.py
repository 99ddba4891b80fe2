"""Accumulates one generated problem (drawing + PhysGraph) and emits Pass 1–4 (Kit §2.4).

Scenes call ``glyph``/``shape`` while they draw, ``entity`` to declare physical nodes, and
``set_text`` with a tiny markup for mentions: ``[[role:key:quote]]`` inside a stem or query
becomes the literal ``quote`` in the text and a mention record. Mention ids (m001…) are assigned
in textual order, stem first then query, and each mention's ``occurrence`` is computed with the
kit's literal, case-sensitive, non-overlapping left-to-right rule (Kit §2.7), so every mention
resolves to exactly the span the scene meant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from annotation.demo.drawing import Canvas, PixelBox, to_bbox_1000, to_point_1000, to_radius_1000

MARKUP = re.compile(r"\[\[(entity|quantity|constraint|relation|query_target|other):([A-Za-z0-9_]+):(.+?)\]\]")
SCHEMA_VERSION = "physgraph_obs_v0.1"


class GeneratorBug(AssertionError):
    """A scene produced data that would not resolve; never expected at run time."""


@dataclass
class Mention:
    key: str
    section: str
    quote: str
    role: str
    start: int
    occurrence: int = 0
    id: str = ""


@dataclass
class Entity:
    id: str
    type: str
    name: str
    symbol: str
    subtype: str
    anchors: list[str]
    mention_keys: list[str] = field(default_factory=list)


def literal_occurrence(text: str, quote: str, start: int) -> int:
    """1-based occurrence of the non-overlapping match of ``quote`` that starts at ``start``."""
    cursor, count = 0, 0
    while True:
        found = text.find(quote, cursor)
        if found < 0 or found > start:
            raise GeneratorBug(f"quote {quote!r} at {start} is not a literal non-overlapping match")
        count += 1
        if found == start:
            return count
        cursor = found + len(quote)


def parse_markup(markup: str, section: str) -> tuple[str, list[Mention]]:
    parts: list[str] = []
    mentions: list[Mention] = []
    length = 0
    cursor = 0
    for match in MARKUP.finditer(markup):
        plain = markup[cursor : match.start()]
        parts.append(plain)
        length += len(plain)
        role, key, quote = match.groups()
        mentions.append(Mention(key=key, section=section, quote=quote, role=role, start=length))
        parts.append(quote)
        length += len(quote)
        cursor = match.end()
    parts.append(markup[cursor:])
    text = "".join(parts)
    if "[[" in text or "]]" in text:
        raise GeneratorBug(f"unparsed markup in {markup!r}")
    for mention in mentions:
        mention.occurrence = literal_occurrence(text, mention.quote, mention.start)
    return text, mentions


def _visual_record(vid: str, **fields: Any) -> dict[str, Any]:
    return {"id": vid, **fields}


class ProblemBuilder:
    def __init__(self, problem_id: str, width: int, height: int, image_id: str = "img_0") -> None:
        self.problem_id = problem_id
        self.image_id = image_id
        self.canvas = Canvas(width, height)
        self.visuals: list[dict[str, Any]] = []
        self.entities: list[Entity] = []
        self.bindings2: list[dict[str, Any]] = []
        self.stem = ""
        self.query = ""
        self.mentions: dict[str, Mention] = {}
        self.quantities: list[dict[str, Any]] = []
        self.refers: list[tuple[str, str]] = []
        self.constraints: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        self.target: dict[str, Any] | None = None

    # -- Pass 1 ---------------------------------------------------------------------------
    def _add_visual(
        self,
        type_: str,
        box: PixelBox,
        *,
        subtype: str = "",
        text: str = "",
        center: tuple[float, float] | None = None,
        radius: float | None = None,
        keypoints: tuple[tuple[float, float], ...] = (),
    ) -> str:
        w, h = self.canvas.width, self.canvas.height
        vid = f"v{len(self.visuals) + 1:03d}"
        self.visuals.append(
            {
                "id": vid,
                "type": type_,
                "subtype": subtype,
                "text": text,
                "image_id": self.image_id,
                "bbox_1000": to_bbox_1000(box, w, h),
                "keypoints_1000": [to_point_1000(p, w, h) for p in keypoints],
                "center_1000": to_point_1000(center, w, h) if center is not None else [-1, -1],
                "radius_1000": to_radius_1000(radius, w, h) if radius is not None else -1,
                "confidence": "high",
            }
        )
        return vid

    def glyph(self, center: tuple[float, float], text: str, *, size: int = 18, subtype: str = "label") -> str:
        box = self.canvas.text(center, text, size=size)
        return self._add_visual("text_glyph", box, subtype=subtype, text=text)

    def shape(
        self,
        type_: str,
        box: PixelBox,
        *,
        subtype: str = "",
        center: tuple[float, float] | None = None,
        radius: float | None = None,
        keypoints: tuple[tuple[float, float], ...] = (),
    ) -> str:
        return self._add_visual(
            type_, box, subtype=subtype, center=center, radius=radius, keypoints=keypoints
        )

    # -- Pass 2 ---------------------------------------------------------------------------
    def entity(
        self,
        type_: str,
        name: str,
        symbol: str = "",
        *,
        represents: tuple[str, ...] = (),
        labels: tuple[str, ...] = (),
        subtype: str = "",
    ) -> str:
        pid = f"p{len(self.entities) + 1:03d}"
        anchors = [*represents, *labels]
        if not anchors:
            raise GeneratorBug(f"entity {name!r} has no visual anchor")
        self.entities.append(Entity(pid, type_, name, symbol, subtype, anchors))
        for kind, vids in (("represents", represents), ("labels", labels)):
            for vid in vids:
                self.bindings2.append(
                    {
                        "type": kind,
                        "from_id": vid,
                        "to_id": pid,
                        "provenance": ["IMAGE"],
                        "evidence_visual_ids": [vid],
                        "evidence_mention_ids": [],
                    }
                )
        return pid

    # -- Pass 3 ---------------------------------------------------------------------------
    def set_text(self, stem_markup: str, query_markup: str) -> None:
        self.stem, stem_mentions = parse_markup(stem_markup, "stem")
        self.query, query_mentions = parse_markup(query_markup, "query")
        ordered = sorted(stem_mentions, key=lambda m: m.start) + sorted(query_mentions, key=lambda m: m.start)
        for index, mention in enumerate(ordered, start=1):
            if mention.key in self.mentions:
                raise GeneratorBug(f"duplicate mention key {mention.key}")
            mention.id = f"m{index:03d}"
            self.mentions[mention.key] = mention

    def _mid(self, key: str) -> str:
        return self.mentions[key].id

    def quantity(
        self,
        kind: str,
        symbol: str,
        value: str,
        unit: str,
        owner: str,
        *,
        glyphs: tuple[str, ...] = (),
        mentions: tuple[str, ...] = (),
    ) -> str:
        qid = f"q{len(self.quantities) + 1:03d}"
        provenance = (["IMAGE"] if glyphs else []) + (["TEXT"] if mentions else [])
        for key in mentions:
            if self.mentions[key].role != "quantity":
                raise GeneratorBug(f"quantity mention {key} must have role quantity")
        self.quantities.append(
            {
                "id": qid,
                "kind": kind,
                "symbol_latex": symbol,
                "value_latex": value,
                "unit_latex": unit,
                "owner_id": owner,
                "visual_anchor_ids": list(glyphs),
                "text_mention_ids": [self._mid(k) for k in mentions],
                "provenance": provenance,
            }
        )
        return qid

    def refer(self, mention_key: str, pid: str) -> None:
        """A ``refers_to`` binding (mention → physical) that also records the mention on the node."""
        self.refers.append((mention_key, pid))
        entity = next(e for e in self.entities if e.id == pid)
        entity.mention_keys.append(mention_key)

    def constraint(
        self,
        kind: str,
        subjects: list[str],
        value_text: str,
        *,
        mentions: tuple[str, ...] = (),
        visuals: tuple[str, ...] = (),
    ) -> None:
        self.constraints.append(
            {
                "id": f"c{len(self.constraints) + 1:03d}",
                "kind": kind,
                "subject_ids": subjects,
                "value_text": value_text,
                "provenance": (["IMAGE"] if visuals else []) + (["TEXT"] if mentions else []),
                "evidence_visual_ids": list(visuals),
                "evidence_mention_ids": [self._mid(k) for k in mentions],
            }
        )

    def relation(
        self,
        predicate: str,
        subject: str,
        obj: str,
        *,
        quantity_id: str = "",
        visuals: tuple[str, ...] = (),
        mentions: tuple[str, ...] = (),
    ) -> None:
        self.relations.append(
            {
                "id": f"r{len(self.relations) + 1:03d}",
                "predicate": predicate,
                "subject_id": subject,
                "object_id": obj,
                "quantity_id": quantity_id,
                "provenance": (["IMAGE"] if visuals else []) + (["TEXT"] if mentions else []),
                "evidence_visual_ids": list(visuals),
                "evidence_mention_ids": [self._mid(k) for k in mentions],
                "confidence": "high",
            }
        )

    def query_target(
        self, mention_key: str, kind: str, symbol: str, nodes: list[str], location: list[str] | None = None
    ) -> None:
        mention = self.mentions[mention_key]
        if mention.section != "query" or mention.role != "query_target":
            raise GeneratorBug("the query target mention must be in the query with role query_target")
        self.target = {
            "mention_id": mention.id,
            "target_kind": kind,
            "target_symbol_latex": symbol,
            "target_node_ids": nodes,
            "location_node_ids": location or [],
            "time_or_event_node_ids": [],
        }

    # -- documents ------------------------------------------------------------------------
    def _physical_record(self, entity: Entity, with_text: bool) -> dict[str, Any]:
        mention_ids = [self._mid(k) for k in entity.mention_keys] if with_text else []
        return {
            "id": entity.id,
            "type": entity.type,
            "subtype": entity.subtype,
            "name": entity.name,
            "symbol": entity.symbol,
            "visual_anchor_ids": list(entity.anchors),
            "text_mention_ids": mention_ids,
            "provenance": ["IMAGE", "TEXT"] if mention_ids else ["IMAGE"],
            "confidence": "high",
        }

    def _mention_records(self) -> list[dict[str, Any]]:
        ordered = sorted(self.mentions.values(), key=lambda m: m.id)
        return [
            {"id": m.id, "section": m.section, "quote": m.quote, "occurrence": m.occurrence, "role": m.role}
            for m in ordered
        ]

    def _refers_bindings(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "refers_to",
                "from_id": self._mid(key),
                "to_id": pid,
                "provenance": ["TEXT"],
                "evidence_visual_ids": [],
                "evidence_mention_ids": [self._mid(key)],
            }
            for key, pid in self.refers
        ]

    def passes(self, domain: str) -> tuple[dict[str, Any], ...]:
        if self.target is None:
            raise GeneratorBug("no query target")
        pid = self.problem_id

        def numbered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{"id": f"b{i:03d}", **row} for i, row in enumerate(rows, start=1)]

        pass1 = {"problem_id": pid, "visual_nodes": self.visuals, "ambiguities": []}
        pass2 = {
            "problem_id": pid,
            "physical_nodes": [self._physical_record(e, False) for e in self.entities],
            "bindings": numbered(self.bindings2),
            "ambiguities": [],
        }
        updated = [self._physical_record(e, True) for e in self.entities if e.mention_keys]
        pass3 = {
            "problem_id": pid,
            "new_or_updated_physical_nodes": updated,
            "text_mentions": self._mention_records(),
            "quantities": self.quantities,
            "bindings": numbered(self._refers_bindings()),
            "constraints": self.constraints,
            "query_target": self.target,
            "ambiguities": [],
        }
        pass4 = {
            "schema_version": SCHEMA_VERSION,
            "problem_id": pid,
            "domain": domain,
            "visual_nodes": self.visuals,
            "physical_nodes": [self._physical_record(e, True) for e in self.entities],
            "text_mentions": self._mention_records(),
            "quantities": self.quantities,
            "bindings": numbered(self.bindings2 + self._refers_bindings()),
            "relations": self.relations,
            "constraints": self.constraints,
            "query_target": self.target,
            "ambiguities": [],
        }
        return pass1, pass2, pass3, pass4
