"""Compile one eligible group into a probe: anchors, candidates, views, packet, prompts (Kit §3.4–§3.6)."""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from typing import Any

from kit.canonical import canonical_bytes, digest

from .aliases import logical_probe_id, neutral_aliases
from .diagnostics import nearest_region, read_availability, representation_kind, with_outcome
from .errors import require
from .geometry import active_origin, origin_fingerprint, validate_locator, view_fingerprint
from .grammar import PACKET_MAX_ENTRIES, is_atomic_glyph
from .groups import QUANTITY_SIGNATURE, Proposal
from .prompts import PromptSet, render_messages
from .render import render_views, renderer_profile
from .scorability import check_observations, check_scorable
from .source_index import SourceIndex
from .types import CompiledProbe

T03_POLICY = "target_literal_only_v1"
T02_POLICY = "all_atomic_glyphs_in_presented_diagrams_v1"
NORMALIZER = "ocr_label_v2_1"


@dataclass
class _Anchors:
    anchors: dict[str, Any]
    amap: dict[str, Any]


def compile_proposal(
    index: SourceIndex, proposal: Proposal, *, originals: dict[str, bytes], prompt_set: PromptSet, seed: int
) -> tuple[CompiledProbe, float]:
    """Return the compiled probe and the seconds spent rendering. Raise CompileError on a refusal."""
    task, rows = proposal.task_id, proposal.rows
    if task == "T03":
        signatures = {
            digest({k: index.rows["quantities"][r["ref"]["record_id"]][k] for k in QUANTITY_SIGNATURE})
            for r in rows
        }
        require(len(signatures) == 1, "MULTIPLE_QUANTITIES_AT_UNQUALIFIED_ANCHOR")
    refs_by_digest = {digest(r["ref"]): r["ref"] for r in rows}
    refs = [refs_by_digest[k] for k in sorted(refs_by_digest)]
    gold = list({digest(g): g for g in (index.entity(r["target"]) for r in rows)}.values())
    gold.sort(key=digest)
    require(bool(gold), "EMPTY_TARGET_SET")
    require(len(gold) == 1, "SET_EXTENSION_NOT_CORE")
    qid = logical_probe_id(
        {
            "namespace": index.namespace,
            "split": index.split,
            "sample": index.sample,
            "task": task,
            "anchor_ids": sorted({r["anchor"] for r in rows}),
        }
    )
    anchors = _Anchors({}, {})
    query_alias = _add_anchor(index, anchors, rows[0]["anchor"])
    reads = []
    if (
        task == "T03"
        and anchors.anchors[query_alias]["kind"] == "visual"
        and anchors.amap[query_alias]["observation_ids"]
    ):
        oid = anchors.amap[query_alias]["observation_ids"][0]
        observation = index.observations[oid]
        reads = [
            {
                "anchor_alias": query_alias,
                "observation_id": oid,
                "normalizer_id": NORMALIZER,
                "expected": observation["text"],
                "origin_fingerprint": origin_fingerprint(observation["origin"]),
            }
        ]
    policy = T03_POLICY if task == "T03" else T02_POLICY
    selected = [r["observation_id"] for r in reads] if task == "T03" else select_atomic_observations(index)
    for oid in selected:
        _add_anchor(index, anchors, index.observations[oid]["source_records"][0]["record_id"])
    cmap, display_order = _candidates(index, qid, gold, seed)
    candidates = [
        {"alias": a, "kind": "entity", "locators": copy.deepcopy(index.entity_locators[cmap[a]["id"]])}
        for a in display_order
    ]
    raw_view = {
        "task_id": task,
        "language": index.language,
        "context": copy.deepcopy(index.context),
        "anchors": anchors.anchors,
        "query_anchor_ids": [query_alias],
        "read_anchor_ids": [r["anchor_alias"] for r in reads],
        "reference_views": {},
        "used_reference_ids": [],
        "candidates": candidates,
        "recognition_packet": [],
    }
    _check_view(raw_view, index)
    contract = {
        "binding_key": prompt_set.binding_key(task),
        "cardinality": "one",
        "read_shape": "string" if reads else "none",
        "read_anchor_ids": raw_view["read_anchor_ids"],
    }
    packet_plan = {
        "state": "pending_review",
        "observation_ids": selected,
        "empty_reason": None,
        "review_ref": None,
    }
    key: dict[str, Any] = {
        "schema_version": "physalign_private_v2_1",
        "problem_id": index.problem_id,
        "logical_probe_id": qid,
        "variant_id": "main",
        "task_id": task,
        "language": index.language,
        "source_records": refs,
        "source_hashes": dict(index.source_hashes),
        "candidate_map": cmap,
        "anchor_map": anchors.amap,
        "reference_map": {},
        "gold_targets": gold,
        "read_targets": reads,
        "response_contract": contract,
        "joint_eligible": bool(reads),
        "packet_plan": packet_plan,
        "packet_policy_id": policy,
        "selection_policy_id": "neutral_hash_per_probe_v2_1",
        "identity_review_refs": [],
        "closure_review_refs": ["qa-closure"],
        "relation_context": None,
        "pass5_analysis": {"status": "unavailable", "source_fact_step_map": {}},
    }
    started = time.perf_counter()
    # Views render in anchor insertion order; the prompt reads the canonical (key-sorted) form, as the kit does.
    views, displays = render_views(raw_view, index.assets, originals, prefix=f"views/{qid}")
    render_seconds = time.perf_counter() - started
    raw_view, key = _canonical(raw_view), _canonical(key)
    check_observations(key, index.observations)
    gold_view = copy.deepcopy(raw_view)
    gold_view["recognition_packet"] = _packet(selected, key["anchor_map"], index)
    check_scorable(key, raw_view, gold_view, index.observations, prompt_set.tasks)
    view_assets = {v.view_id: v.record for v in views}
    attachments = sorted(set(index.context["image_ids"]) | set(view_assets))
    question = prompt_set.question(task, index.language, "one", query_alias)
    raw_messages = render_messages(raw_view, question, contract, attachments, displays, prompt_set)
    gold_messages = render_messages(gold_view, question, contract, attachments, displays, prompt_set)
    probe = _finish(
        index,
        proposal,
        key,
        raw_view,
        gold_view,
        raw_messages,
        gold_messages,
        attachments,
        displays,
        views,
        view_assets,
        prompt_set,
    )
    return probe, render_seconds


def _canonical(value: dict[str, Any]) -> dict[str, Any]:
    canonical: dict[str, Any] = json.loads(canonical_bytes(value))
    return canonical


def select_atomic_observations(index: SourceIndex) -> list[str]:
    """T02 packet: every approved diagram text glyph whose stripped text is atomic; never gold-driven."""
    images = set(index.context["image_ids"])
    selected = [
        oid
        for oid in sorted(index.observations)
        if index.observations[oid]["asset_role"] == "diagram"
        and index.observations[oid]["origin"]["locator"]["image_id"] in images
        and index.observations[oid]["source_kind"] == "text_glyph"
        and index.observations[oid]["state"] == "approved"
        and is_atomic_glyph(index.observations[oid]["text"])
    ]
    require(len(selected) <= PACKET_MAX_ENTRIES, "PACKET_BUDGET_EXCEEDED", str(len(selected)))
    return selected


def _add_anchor(index: SourceIndex, anchors: _Anchors, record_id: str) -> str:
    require(record_id in index.locators, "ANCHOR_UNRESOLVED", record_id)
    loc = index.locators[record_id]
    for alias, existing in anchors.anchors.items():
        if existing == loc:
            return alias
    alias = f"R{len(anchors.anchors) + 1}"
    collection = "visual_nodes" if record_id in index.rows["visual_nodes"] else "text_mentions"
    same = [other for other in index.rows[collection] if index.locators.get(other) == loc]
    observation_ids = sorted(o for o, obs in index.observations.items() if obs["origin"]["locator"] == loc)
    require(len(observation_ids) <= 1, "DUPLICATE_OBSERVATION_AT_SAME_ORIGIN", record_id)
    anchors.anchors[alias] = copy.deepcopy(loc)
    anchors.amap[alias] = {
        "source_ids": sorted(index.ref_key(collection, other) for other in same),
        "observation_ids": observation_ids,
        "repair_refs": sorted({ref for other in same for ref in index.repair_refs.get(other, [])}),
        "origin": active_origin(loc, index.context, index.assets),
    }
    return alias


def _candidates(
    index: SourceIndex, qid: str, gold: list[dict[str, Any]], seed: int
) -> tuple[dict[str, Any], list[str]]:
    """Universe: every displayable canonical entity; no filtering by the gold's type."""
    for p in index.pass4.get("physical_nodes", []):
        require(
            not p["visual_anchor_ids"] or bool(index.entity_locators[index.identity_map[p["id"]]]),
            "CANDIDATE_UNIVERSE_INCOMPLETE",
            p["id"],
        )
    targets = [
        {"kind": "entity", "id": cid}
        for cid, locs in index.entity_locators.items()
        if locs and any(loc["kind"] == "visual" for loc in locs)
    ]
    cmap, display = neutral_aliases(targets, qid, variant_id="main", seed=seed)
    require({digest(g) for g in gold} <= {digest(t) for t in targets}, "GOLD_OUTSIDE_LEGAL_CANDIDATES")
    return cmap, display


def _check_view(view: dict[str, Any], index: SourceIndex) -> None:
    for loc in view["anchors"].values():
        validate_locator(loc, index.context, index.assets)
    require(len(view["candidates"]) >= 2, "CANDIDATE_COUNT_INVALID")
    fingerprints = set()
    for candidate in view["candidates"]:
        require(bool(candidate["locators"]), "CANDIDATE_LOCATOR_MISSING")
        for loc in candidate["locators"]:
            validate_locator(loc, index.context, index.assets)
        fingerprint = view_fingerprint(candidate["locators"])
        require(fingerprint not in fingerprints, "INDISTINGUISHABLE_CANDIDATES", candidate["alias"])
        fingerprints.add(fingerprint)


def _packet(selected: list[str], amap: dict[str, Any], index: SourceIndex) -> list[dict[str, str]]:
    """Transcription-only entries ``{anchor, text}``, from the same observation and origin as the read."""
    alias_of = {oid: alias for alias, meta in amap.items() for oid in meta["observation_ids"]}
    packet = []
    for oid in selected:
        observation = index.observations[oid]
        alias = alias_of[oid]
        require(
            origin_fingerprint(observation["origin"]) == origin_fingerprint(amap[alias]["origin"]),
            "OBSERVATION_LOCATION_MISMATCH",
            oid,
        )
        packet.append({"anchor": alias, "text": observation["text"]})
    return packet


def prospective_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """The packet plan as it will be once approved: the basis of the review target root (Kit §2.11)."""
    if plan["observation_ids"]:
        return {**plan, "state": "approved_nonempty", "empty_reason": None, "review_ref": "qa-packet"}
    return {
        **plan,
        "state": "approved_empty",
        "empty_reason": "no_independent_readable_primitive",
        "review_ref": "qa-packet",
    }


def packet_review_root(plan: dict[str, Any], observations: dict[str, Any], policy_id: str) -> str:
    return digest(
        {
            "policy_id": policy_id,
            "state": plan["state"],
            "empty_reason": plan["empty_reason"],
            "observations": [
                {
                    "observation_id": oid,
                    "content_hash": digest({k: v for k, v in observations[oid].items() if k != "review_ref"}),
                }
                for oid in plan["observation_ids"]
            ],
        }
    )


def closure_root(key: dict[str, Any], view: dict[str, Any], source_index_hash: str) -> str:
    return digest(
        {
            "task_id": key["task_id"],
            "source_records": key["source_records"],
            "source_index_hash": source_index_hash,
            "query_anchor_ids": view["query_anchor_ids"],
            "query_anchors": {r: view["anchors"][r] for r in view["query_anchor_ids"]},
            "reference_map": key["reference_map"],
            "candidate_map": key["candidate_map"],
            "gold_targets": key["gold_targets"],
            "relation_context": None,
        }
    )


def content_core(
    key: dict[str, Any],
    raw_view: dict[str, Any],
    gold_view: dict[str, Any],
    public_raw: dict[str, Any],
    public_gold: dict[str, Any],
    assets: dict[str, Any],
    displays: list[dict[str, Any]],
    hashes: dict[str, Any],
) -> dict[str, Any]:
    return {
        "private_core": key,
        "raw_view": raw_view,
        "gold_view": gold_view,
        "public_raw": public_raw,
        "public_gold": public_gold,
        "assets": assets,
        "displays": displays,
        **hashes,
    }


def _finish(
    index: SourceIndex,
    proposal: Proposal,
    key: dict[str, Any],
    raw_view: dict[str, Any],
    gold_view: dict[str, Any],
    raw_messages: dict[str, str],
    gold_messages: dict[str, str],
    attachments: list[str],
    displays: list[dict[str, Any]],
    views: list[Any],
    view_assets: dict[str, Any],
    prompt_set: PromptSet,
) -> CompiledProbe:
    assets = {**{i: index.assets[i] for i in index.context["image_ids"]}, **view_assets}
    source_index_hash = digest(index.public_index())
    hashes = {
        "source_index_hash": source_index_hash,
        "observation_store_hash": digest(
            {"schema_version": "physalign_observations_v2_1", "observations": index.observations}
        ),
        "prompt_set_sha256": prompt_set.sha256,
        "renderer_profile": renderer_profile(),
        "native_query": proposal.native,
    }
    public_raw = {"messages": raw_messages, "attachment_ids": attachments}
    public_gold = {"messages": gold_messages, "attachment_ids": attachments}
    core = content_core(key, raw_view, gold_view, public_raw, public_gold, assets, displays, hashes)
    approved_key = {**key, "packet_plan": prospective_plan(key["packet_plan"])}
    prospective = content_core(
        approved_key, raw_view, gold_view, public_raw, public_gold, assets, displays, hashes
    )
    evidence_group = "EG-" + digest(
        [index.group_id, raw_view["anchors"][raw_view["query_anchor_ids"][0]], key["gold_targets"]]
    )
    probe = CompiledProbe(
        logical_probe_id=key["logical_probe_id"],
        task_id=key["task_id"],
        interface=proposal.native["interface"],
        raw_view=raw_view,
        gold_view=gold_view,
        key=key,
        raw_messages=raw_messages,
        gold_messages=gold_messages,
        attachment_ids=attachments,
        displays=displays,
        views=views,
        native_query=proposal.native,
        metadata={},
        content_root=digest(core),
        review_target_root=digest(prospective),
        closure_root=closure_root(key, raw_view, source_index_hash),
        packet_review_root=packet_review_root(
            key["packet_plan"], index.observations, key["packet_policy_id"]
        ),
        evidence_group=evidence_group,
        assets=assets,
    )
    probe.metadata = _metadata(index, probe, assets)
    return probe


def _metadata(index: SourceIndex, probe: CompiledProbe, assets: dict[str, Any]) -> dict[str, Any]:
    """``metadata.PRIVATE.json`` (``native_probe_metadata_v1``) in the Kit's names and shapes (Kit §2.9)."""
    key, view, native = probe.key, probe.raw_view, probe.native_query
    cmap = key["candidate_map"]
    per_candidate = {
        alias: representation_kind(index.entity_visual_sources.get(t["id"], []), index.rows["visual_nodes"])
        for alias, t in cmap.items()
    }
    kinds = set(per_candidate.values())
    types = {alias: index.entity_types[t["id"]] for alias, t in cmap.items()}
    gold_type = index.entity_types[key["gold_targets"][0]["id"]]
    reads = key["read_targets"]
    # only the first read target is scanned, against the raw condition's public input
    availability = (
        read_availability(
            {"messages": probe.raw_messages, "attachment_ids": probe.attachment_ids},
            reads[0]["expected"],
            reads[0]["normalizer_id"],
        )
        if reads
        else {"public_text_availability": "not_applicable", "vision_required": None}
    )
    sizes = {i: (assets[i]["width"], assets[i]["height"]) for i in view["context"]["image_ids"]}
    return {
        "schema_version": "native_probe_metadata_v1",
        "interface": probe.interface,
        "group_id": native["group_id"],
        "evidence_group": probe.evidence_group,
        "read_origin": "image" if reads else "source_text" if probe.interface == "T03-text" else "none",
        **availability,
        "representation_kind": next(iter(kinds)) if len(kinds) == 1 else "mixed_or_unresolved",
        "candidate_representation": per_candidate,
        "candidate_native_types_PRIVATE": types,
        "candidate_count": len(cmap),
        "same_native_type_candidate_count": sum(t == gold_type for t in types.values()),
        "native_types_homogeneous": len(set(types.values())) == 1,
        "image_count": len(view["context"]["image_ids"]),
        "source_language": key["language"],
        "source_namespace": index.namespace,
        "source_domain": index.pass4.get("domain", "unknown"),
        "selector": native.get("selector"),
        "fallback_reason": native.get("fallback_reason"),
        "singleton_basis": native.get("singleton_basis"),
        "nearest_region": with_outcome(nearest_region(view, sizes), cmap, key["gold_targets"]),
        "chance_probability": {"numerator": 1, "denominator": len(cmap)},
        "packet_state": key["packet_plan"]["state"],
        "packet_policy_id": key["packet_policy_id"],
        "packet_nonempty_candidate": bool(key["packet_plan"]["observation_ids"]),
        "P_approved": False,
        "L_candidate": bool(reads),
        "repair_policy_id": "unique_exact_sidecar_v1" if index.repair_refs else None,
        "repair_applied_to_query": any(key["anchor_map"][a]["repair_refs"] for a in view["query_anchor_ids"]),
        "source_approved": True,
        "transformation_passed": True,
        "benchmark_QA_approval": "pending",
        "human_item_review": "not_sampled",
    }
