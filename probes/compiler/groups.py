"""Native group enumeration for T02-single and T03 (Kit §3.2–§3.3).

Enumerate every relevant row first, close dependencies over *possible* exact origins, then select.
A blocked group is returned as a :class:`BlockedGroup` with its code and scope, never dropped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from kit.canonical import digest
from kit.passes.spans import find_exact_matches

from .geometry import text_locator
from .grammar import singleton_basis
from .source_index import DISPLAY_INCOMPLETE, SourceIndex
from .types import BlockedGroup

QUANTITY_SIGNATURE = ("kind", "symbol_latex", "value_latex", "unit_latex")


@dataclass
class Proposal:
    task_id: str
    rows: list[dict[str, Any]]
    native: dict[str, Any]


class GroupEnumerator:
    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self.origins = {rid: digest(loc) for rid, loc in index.locators.items()}
        self.possible: dict[str, set[str]] = {rid: {token} for rid, token in self.origins.items()}
        for m in index.pass4.get("text_mentions", []):
            if m["id"] not in self.possible:
                self.possible[m["id"]] = self._possible_text_origins(m)
        self.global_issues = self._global_issues()
        self.blocked: list[BlockedGroup] = []

    def _possible_text_origins(self, mention: dict[str, Any]) -> set[str]:
        text = self.index.context[mention["section"]]
        if not mention["quote"]:
            return set()
        return {
            digest(text_locator(mention["section"], s, e, mention["quote"], text))
            for s, e in find_exact_matches(text, mention["quote"])
        }

    def _global_issues(self) -> list[dict[str, Any]]:
        index, issues = self.index, []
        if index.pass4.get("ambiguities"):
            issues.append({"code": "SOURCE_AMBIGUITY_SCOPE_UNBOUNDED", "tasks": ["T02", "T03"]})
        if any(i["code"] in DISPLAY_INCOMPLETE for i in index.issues):
            issues.append({"code": "CANDIDATE_UNIVERSE_INCOMPLETE", "tasks": ["T02", "T03"]})
        bad_glyphs = [
            v["id"]
            for v in index.pass4.get("visual_nodes", [])
            if v["type"] == "text_glyph" and v["text"].strip() and v["id"] not in index.locators
        ]
        if bad_glyphs:
            issues.append({"code": "PACKET_SOURCE_UNRESOLVED", "tasks": ["T02"]})
        return issues

    def _group(
        self,
        task: str,
        token: str,
        members: Any,
        rows: list[dict[str, Any]],
        reasons: list[str],
        **extra: Any,
    ) -> Proposal | None:
        gid = "NG-" + digest([self.index.group_id, task, token])
        reasons = list(reasons) + [g["code"] for g in self.global_issues if task in g["tasks"]]
        info = {
            "group_id": gid,
            "task_id": task,
            "source_scope": sorted(members),
            "state": "blocked" if reasons else "eligible_for_compile",
            "blocking_reasons": sorted(set(reasons)),
            **extra,
        }
        if reasons:
            self.blocked.append(
                BlockedGroup(
                    task_id=task,
                    code=info["blocking_reasons"][0],
                    reasons=info["blocking_reasons"],
                    scope=info["source_scope"],
                    group_id=gid,
                )
            )
            return None
        return Proposal(task_id=task, rows=rows, native=info)

    # T02-single -------------------------------------------------------------------------------
    def t02(self) -> list[Proposal]:
        index = self.index
        origins: dict[str, list[dict[str, Any]]] = defaultdict(list)
        unknown: list[str] = []
        for b in index.pass4.get("bindings", []):
            if b["type"] != "refers_to":
                continue
            row = {
                "anchor": b["from_id"],
                "target": b["to_id"],
                "ref": index.ref("bindings", b["id"], "to_id"),
            }
            possible = self.possible.get(b["from_id"], set())
            if not possible:
                unknown.append(b["id"])
            for token in possible:
                origins[token].append(row)
        result = []
        if unknown:
            self._group("T02", "unlocated", unknown, [], ["REFERENCE_SCOPE_UNBOUNDED"])
        for token, rows in sorted(origins.items()):
            proposal = self._t02_group(token, rows, unknown)
            if proposal is not None:
                result.append(proposal)
        return result

    def _t02_group(self, token: str, rows: list[dict[str, Any]], unknown: list[str]) -> Proposal | None:
        index = self.index
        mentions = index.rows["text_mentions"]
        reasons = ["REFERENCE_SCOPE_UNBOUNDED"] if unknown else []
        if any(self.origins.get(r["anchor"]) != token for r in rows):
            reasons.append("REFERENCE_POSSIBLE_SECOND_TARGET_UNRESOLVED")
        targets = {index.identity_map.get(r["target"]) for r in rows}
        if None in targets or len(targets) != 1:
            reasons.append("REFERENCE_TARGET_NOT_SINGLE")
        first = mentions.get(rows[0]["anchor"])
        basis = singleton_basis(first["quote"] if first else "", rows, index)
        if basis["state"] != "supported":
            reasons.append(basis["code"])
        if any(mentions.get(r["anchor"], {}).get("role") != "entity" for r in rows):
            reasons.append("REFERENCE_NOT_EXPLICIT_ENTITY_MENTION")
        members = [r["ref"]["record_id"] for r in rows] + unknown
        return self._group(
            "T02",
            token,
            members,
            rows,
            reasons,
            interface="T02-single",
            singleton_basis=basis,
            selector="exact_entity_mention_all_refers_to_v1",
            possible_origin=token,
            canonical_targets=sorted(t for t in targets if t),
        )

    # T03-image / T03-text ---------------------------------------------------------------------
    def t03(self) -> list[Proposal]:
        quantities = self.index.rows["quantities"]
        adjacent: dict[str, set[str]] = defaultdict(set)
        qanchors, selected, failures, unbounded = {}, {}, {}, []
        for qid, q in quantities.items():
            glyphs, mentions = self._quantity_anchors(q)
            possible: set[str] = set()
            for rid in glyphs + mentions:
                possible.update(self.possible.get(rid, set()))
            qanchors[qid] = possible
            for origin in possible:
                adjacent[origin].add(qid)
            failures[qid], choice = self._quantity_selection(q, glyphs, mentions)
            if choice is not None:
                selected[qid] = choice
            if not possible or any(not self.possible.get(rid) for rid in glyphs + mentions):
                unbounded.append(qid)
        result = []
        for component in _components(quantities, qanchors, adjacent):
            result.extend(self._t03_component(component, selected, failures, unbounded))
        return result

    def _quantity_anchors(self, q: dict[str, Any]) -> tuple[list[str], list[str]]:
        visuals, mentions = self.index.rows["visual_nodes"], self.index.rows["text_mentions"]
        glyphs = [v for v in q["visual_anchor_ids"] if visuals.get(v, {}).get("type") == "text_glyph"]
        quoted = [m for m in q["text_mention_ids"] if mentions.get(m, {}).get("role") == "quantity"]
        return glyphs, quoted

    def _quantity_selection(
        self, q: dict[str, Any], glyphs: list[str], mentions: list[str]
    ) -> tuple[list[str], dict[str, Any] | None]:
        """Glyphs first; an unusable glyph never falls back to the text mention."""
        errors = []
        if not q["owner_id"] or q["owner_id"] not in self.index.identity_map:
            errors.append("QUANTITY_OWNER_UNRESOLVED")
        chosen = glyphs if glyphs else mentions
        unique = {self.origins[r] for r in chosen if r in self.origins}
        if not chosen or len(unique) != 1 or any(r not in self.origins for r in chosen):
            errors.append("IMAGE_SELECTOR_UNRESOLVED" if glyphs else "TEXT_SELECTOR_UNRESOLVED")
            return errors, None
        choice = {
            "anchor": sorted(chosen)[0],
            "origin": next(iter(unique)),
            "selector": "existing_text_glyph_v1" if glyphs else "no_image_glyph_exact_quantity_mention_v1",
            "interface": "T03-image" if glyphs else "T03-text",
            "fallback_reason": None if glyphs else "no_source_text_glyph_anchor",
        }
        visuals = self.index.rows["visual_nodes"]
        if glyphs and any(not visuals[r]["text"].strip() for r in glyphs):
            errors.append("EMPTY_IMAGE_GLYPH_NOT_TEXT_FALLBACK")
        return errors, choice

    def _t03_component(
        self,
        component: set[str],
        selected: dict[str, Any],
        failures: dict[str, list[str]],
        unbounded: list[str],
    ) -> list[Proposal]:
        index, quantities = self.index, self.index.rows["quantities"]
        reasons = [e for q in component for e in failures[q]]
        if unbounded:
            reasons.append("QUANTITY_SCOPE_UNBOUNDED")
        owners = {index.identity_map.get(quantities[q]["owner_id"]) for q in component}
        if None in owners or len(owners) != 1:
            reasons.append("QUANTITY_IDENTITY_OR_OWNER_CONFLICT")
        signatures = {digest({k: quantities[q][k] for k in QUANTITY_SIGNATURE}) for q in component}
        if len(signatures) != 1:
            reasons.append("QUANTITIES_UNQUALIFIED_IDENTITY_CONFLICT")
        by_origin: dict[str, list[str]] = defaultdict(list)
        for qid in sorted(component):
            if qid in selected:
                by_origin[selected[qid]["origin"]].append(qid)
        if not by_origin:
            by_origin["unresolved:" + digest(sorted(component))] = []
        result = []
        for origin, qids in sorted(by_origin.items()):
            rows = [
                {
                    "anchor": selected[q]["anchor"],
                    "target": quantities[q]["owner_id"],
                    "ref": index.ref("quantities", q, "owner_id"),
                }
                for q in qids
            ]
            choice = (
                selected[qids[0]]
                if qids
                else {"interface": "T03-unresolved", "selector": None, "fallback_reason": "no_legal_selector"}
            )
            proposal = self._group(
                "T03",
                origin,
                component | set(unbounded),
                rows,
                reasons,
                interface=choice["interface"],
                selector=choice["selector"],
                fallback_reason=choice["fallback_reason"],
                dependency_component=sorted(component),
                possible_origin=origin,
                canonical_targets=sorted(t for t in owners if t),
            )
            if proposal is not None:
                result.append(proposal)
        return result


def _components(
    quantities: dict[str, Any], qanchors: dict[str, set[str]], adjacent: dict[str, set[str]]
) -> list[set[str]]:
    """Connected components over shared possible origins, formed before any row is discarded."""
    components, remaining = [], set(quantities)
    while remaining:
        queue, component = [min(remaining)], set()
        while queue:
            qid = queue.pop()
            if qid in component:
                continue
            component.add(qid)
            for origin in qanchors[qid]:
                queue.extend(adjacent[origin] - component)
        remaining -= component
        components.append(component)
    return components
