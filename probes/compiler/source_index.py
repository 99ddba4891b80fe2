"""The SourceIndex of one parent (Kit §2.5, §2.7, §2.8) and its native projection.

Built only from the approved Pass 4 document, the public context and the original images. Records
stay byte-faithful copies of Pass 4 rows; resolved spans, identity and entity locators are
projections beside them. Pass 5, the answer and the solution are never inputs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kit.canonical import bytes_digest, digest, write_json_bytes
from kit.passes.spans import apply_unique_exact_repair, resolve_span
from kit.passes.validator import collection_keys

from .errors import CompileError, require
from .geometry import active_origin, text_locator, validate_locator, visual_locator
from .render import asset_record
from .types import ParentSource

COLLECTIONS = collection_keys(4)  # the consolidated G_obs (Pass 4) the compiler reads
PROFILE = "native_binding_draft_v1"
SPAN_RULE = {
    "policy_id": "unique_exact_sidecar_v1",
    "preconditions": [
        "positive_integer_occurrence_out_of_range",
        "nonempty_quote_exactly_once_in_current_exact_section",
    ],
    "operation": "use_the_only_exact_character_span_without_modifying_source",
    "matching": "literal_nonoverlap_1based_v1",
}
DISPLAY_INCOMPLETE = ("ENTITY_DISPLAY_INCOMPLETE", "NATIVE_CANDIDATE_DISPLAY_INCOMPLETE")


@dataclass
class SourceIndex:
    problem_id: str
    namespace: str
    split: str
    sample: str
    language: str
    context: dict[str, Any]
    pass4: dict[str, Any]
    sha: str  # SHA-256 of the Pass 4 file bytes (canonical form)
    assets: dict[str, Any]
    records: dict[str, Any] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    locators: dict[str, Any] = field(default_factory=dict)
    anchor_origins: dict[str, Any] = field(default_factory=dict)
    identity_map: dict[str, str] = field(default_factory=dict)
    entity_types: dict[str, str] = field(default_factory=dict)
    entity_locators: dict[str, list[Any]] = field(default_factory=dict)
    entity_visual_sources: dict[str, list[str]] = field(default_factory=dict)
    identity_binding_ids: list[str] = field(default_factory=list)
    observations: dict[str, Any] = field(default_factory=dict)
    issues: list[dict[str, Any]] = field(default_factory=list)
    span_decisions: dict[str, Any] = field(default_factory=dict)
    span_entries: list[dict[str, Any]] = field(default_factory=list)
    repair_refs: dict[str, list[str]] = field(default_factory=dict)
    source_hashes: dict[str, str] = field(default_factory=dict)
    group_id: str = ""
    content_group_hint: str = ""

    def ref(self, collection: str, record_id: str, target_field: str) -> dict[str, str]:
        return {
            "collection": collection,
            "record_id": record_id,
            "target_field": target_field,
            "source_file_sha256": self.sha,
        }

    def ref_key(self, collection: str, record_id: str) -> str:
        return f"{self.sha}:{collection}:{record_id}"

    def entity(self, physical_id: str) -> dict[str, str]:
        require(physical_id in self.identity_map, "SOURCE_IDENTITY_UNRESOLVED", str(physical_id))
        return {"kind": "entity", "id": self.identity_map[physical_id]}

    def public_index(self) -> dict[str, Any]:
        """The kit's ``source_index`` mapping (used for its hash)."""
        return {
            "example_only": False,
            "namespace": self.namespace,
            "language": self.language,
            "context": self.context,
            "records": self.records,
            "identity_map": self.identity_map,
            "entity_locators": self.entity_locators,
            "entity_types": self.entity_types,
            "anchor_origins": self.anchor_origins,
        }


def normalized_context(source: ParentSource) -> dict[str, Any]:
    options = [{"id": o.get("id", o.get("label")), "text": o["text"]} for o in source.options]
    return {
        "stem": source.stem,
        "query": source.query,
        "options": options,
        "image_ids": [image.image_id for image in source.images],
    }


def parent_group_id(source: ParentSource) -> str:
    return "PG-" + digest(
        {"dataset": source.source_dataset, "split": source.source_split, "sample": source.source_sample_id}
    )


def source_identity(source: ParentSource) -> str:
    return digest([source.source_dataset, source.source_split, source.source_sample_id])


def _file_hash(source: ParentSource, name: str) -> str:
    """The SHA-256 of a source file: as the Kit hashed the file's own bytes when the parent came from a Kit
    workspace unchanged since, else of the document's canonical on-disk form (what the Kit writes)."""
    return source.source_file_hashes.get(name) or bytes_digest(write_json_bytes(source.passes[name]))


def build_source_index(source: ParentSource) -> SourceIndex:
    """Raise :class:`CompileError` for parent-wide refusals (language, identity, images, types)."""
    _check_parent(source)
    context = normalized_context(source)
    assets = {
        img.image_id: asset_record(img.data, f"images/{img.image_id}{img.suffix}") for img in source.images
    }
    for img in source.images:
        require(
            (assets[img.image_id]["width"], assets[img.image_id]["height"]) == (img.width, img.height),
            "SOURCE_IMAGE_DIMENSIONS_STALE",
            img.image_id,
        )
    pass4 = source.passes["pass4"]
    index = SourceIndex(
        problem_id=source.problem_id,
        namespace=source.source_dataset,
        split=source.source_split,
        sample=source.source_sample_id,
        language=source.language,
        context=context,
        pass4=pass4,
        sha=_file_hash(source, "pass4"),
        assets=assets,
        source_hashes=dict(
            sorted(
                (
                    {name: _file_hash(source, name) for name in source.passes}
                    | {
                        name: source.source_file_hashes[name]
                        for name in ("manifest", "review")
                        if name in source.source_file_hashes
                    }
                ).items()
            )
        ),
    )
    index.rows = {c: {r["id"]: r for r in pass4.get(c, [])} for c in COLLECTIONS}
    for collection in COLLECTIONS:
        for record in pass4.get(collection, []):
            index.records[index.ref_key(collection, record["id"])] = copy.deepcopy(record)
    _visual_locators(index)
    _text_locators(index, approved=source.span_rule_approved)
    _identity(index, source)
    _observations(index)
    _native_entity_locators(index)
    index.group_id = parent_group_id(source)
    index.content_group_hint = digest(
        {"context": context, "pixels": [a["pixels_sha256"] for a in assets.values()]}
    )
    return index


def _check_parent(source: ParentSource) -> None:
    require(source.language in ("en", "zh"), "LANGUAGE_UNRESOLVED")
    require(
        all(
            isinstance(v, str) and v.strip()
            for v in (source.source_dataset, source.source_split, source.source_sample_id)
        ),
        "SOURCE_IDENTITY_MISSING",
    )
    require(bool(source.images), "NO_SOURCE_IMAGES")
    ids = [img.image_id for img in source.images]
    require(len(set(ids)) == len(ids), "DUPLICATE_SOURCE_IMAGE_ID")
    require(not any(i.startswith("V") for i in ids), "SOURCE_IMAGE_RENDER_ID_COLLISION")
    require(all(f"pass{n}" in source.passes for n in (1, 2, 3, 4)), "SOURCE_REVIEW_NOT_APPROVED")


def _visual_locators(index: SourceIndex) -> None:
    for v in index.pass4.get("visual_nodes", []):
        loc = visual_locator(v["image_id"], v["bbox_1000"])
        try:
            validate_locator(loc, index.context, index.assets)
        except CompileError as error:
            index.issues.append({"scope": v["id"], "code": "GEOMETRY_UNSUPPORTED", "detail": str(error)})
            continue
        index.locators[v["id"]] = loc
        index.anchor_origins[index.ref_key("visual_nodes", v["id"])] = active_origin(
            loc, index.context, index.assets
        )


def _text_locators(index: SourceIndex, *, approved: bool) -> None:
    for m in index.pass4.get("text_mentions", []):
        text = index.context[m["section"]]
        decision = resolve_span(text, m["quote"], m["occurrence"])
        index.span_decisions[m["id"]] = decision.as_record()
        if decision.status == "unique_exact_repair_proposed":
            _span_entry(index, m, decision.proposed_span, approved)
            if approved:
                decision = apply_unique_exact_repair(decision)
                index.span_decisions[m["id"]] = decision.as_record()
        if decision.span is None:
            index.issues.append(
                {"scope": m["id"], "code": "SPAN_REVIEW_REQUIRED", "detail": decision.as_record()}
            )
            continue
        start, end = decision.span
        loc = text_locator(m["section"], start, end, m["quote"], text)
        index.locators[m["id"]] = loc
        index.anchor_origins[index.ref_key("text_mentions", m["id"])] = active_origin(
            loc, index.context, index.assets
        )


def _span_entry(index: SourceIndex, mention: dict[str, Any], span: Any, approved: bool) -> None:
    text = index.context[mention["section"]]
    loc = text_locator(mention["section"], span[0], span[1], mention["quote"], text)
    entry = {
        "record_id": mention["id"],
        "source_file_sha256": index.sha,
        "section_sha256": loc["section_sha256"],
        "old_occurrence": mention["occurrence"],
        "old_locator": None,
        "proposed_locator": loc,
        "new_occurrence": 1,
        "state": "applied_under_approved_rule" if approved else "proposed",
        "rule_hash": digest(SPAN_RULE),
        "policy_ref": digest({"policy_id": SPAN_RULE["policy_id"]}) if approved else None,
    }
    entry["repair_id"] = "SR-" + digest(entry)
    index.span_entries.append(entry)
    if approved:
        index.repair_refs[mention["id"]] = [entry["repair_id"]]


def _identity(index: SourceIndex, source: ParentSource) -> None:
    physical = index.rows["physical_nodes"]
    parent = {p: p for p in physical}

    def find(p: str) -> str:
        require(p in parent, "IDENTITY_ENDPOINT_NOT_PHYSICAL", p)
        while parent[p] != p:
            p = parent[p]
        return p

    for b in index.pass4.get("bindings", []):
        if b["type"] == "same_entity_as":
            left, right = find(b["from_id"]), find(b["to_id"])
            parent[max(left, right)] = min(left, right)
            index.identity_binding_ids.append(b["id"])
    for pid in physical:
        index.identity_map[pid] = "PE-" + digest(
            {
                "dataset": source.source_dataset,
                "split": source.source_split,
                "sample": source.source_sample_id,
                "source_id": find(pid),
            }
        )
    for canonical in sorted(set(index.identity_map.values())):
        members = [p for p, c in index.identity_map.items() if c == canonical]
        types = {physical[p]["type"] for p in members}
        require(len(types) == 1, "IDENTITY_TYPE_CONFLICT", str(members))
        index.entity_types[canonical] = next(iter(types))
        vids = sorted({v for p in members for v in physical[p]["visual_anchor_ids"]})
        if any(v not in index.locators for v in vids):
            index.issues.append({"scope": members, "code": "ENTITY_DISPLAY_INCOMPLETE"})
        index.entity_locators[canonical] = []


def _observations(index: SourceIndex) -> None:
    """One approved observation ``o_<vid>`` per locatable text glyph with non-blank text (Kit §2.8)."""
    for v in index.pass4.get("visual_nodes", []):
        if v["type"] != "text_glyph" or not v["text"].strip() or v["id"] not in index.locators:
            continue
        oid = "o_" + v["id"]
        index.observations[oid] = {
            "observation_id": oid,
            "state": "approved",
            "origin": active_origin(index.locators[v["id"]], index.context, index.assets),
            "text": v["text"],
            "source_records": [index.ref("visual_nodes", v["id"], "text")],
            "source_kind": "text_glyph",
            "asset_role": "diagram",
            "review_ref": "source-observation-" + oid,
        }


def _native_entity_locators(index: SourceIndex) -> None:
    """Union of members' explicit visual anchors and ``represents`` sources; all-or-nothing."""
    visuals = index.rows["visual_nodes"]
    entity_vids: dict[str, set[str]] = {c: set() for c in index.entity_locators}
    for p in index.pass4.get("physical_nodes", []):
        entity_vids[index.identity_map[p["id"]]].update(p["visual_anchor_ids"])
    for b in index.pass4.get("bindings", []):
        if b["type"] == "represents":
            if b["from_id"] not in visuals or b["to_id"] not in index.identity_map:
                raise CompileError("NATIVE_REPRESENTS_ENDPOINT_INVALID", b["id"])
            entity_vids[index.identity_map[b["to_id"]]].add(b["from_id"])
    for cid, vids in entity_vids.items():
        if any(v not in index.locators for v in vids):
            index.entity_locators[cid] = []
            index.issues.append(
                {
                    "code": "NATIVE_CANDIDATE_DISPLAY_INCOMPLETE",
                    "scope": sorted(vids),
                    "canonical_entity": cid,
                }
            )
        else:
            unique = {digest(index.locators[v]): index.locators[v] for v in vids}
            index.entity_locators[cid] = [unique[k] for k in sorted(unique)]
    index.entity_visual_sources = {k: sorted(v) for k, v in entity_vids.items()}
