"""The annotation workspace: what the page needs to start (one payload), Pass 4 consolidation, and
the pixel ↔ ``bbox_1000`` rule. The consolidation and coordinate helpers are pure (no ORM).

Coordinates (Kit §2.6). A region is stored as ``bbox_1000 = [x_min, y_min, x_max, y_max]`` in the
original image normalised to 0–1000. The workspace converts with one rule, implemented identically
here and in ``static/js/workspace/coords.js``:

* pixel → 1000: ``k = floor(px * 1000 / size + 0.5)`` (round half up), clamped to 0..1000;
* 1000 → pixel (display): ``px = k * size / 1000`` (exact, no rounding); for integer pixels
  ``floor(k * size / 1000 + 0.5)``.

For any image side ``size ≤ 1000`` pixels one unit is at most one pixel, so pixel → 1000 is injective
and an integer-pixel box round-trips exactly (tested for every box edge of a 320×200 image). Larger
images are quantised to ``size / 1000`` pixels, which is the protocol's own resolution.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from kit.passes.validator import (
    BINDING_TYPES,
    CONFIDENCE_LEVELS,
    DOMAINS,
    MENTION_ROLES,
    MENTION_SECTIONS,
    PASS_LAYOUTS,
    PHYSICAL_TYPES,
    SCHEMA_VERSION,
    STEP_TYPES,
    VISUAL_TYPES,
    collection_keys,
)

ANNOTATION_PASSES = (1, 2, 3, 4)
PASS_TITLES = {
    1: "Visual primitives",
    2: "Visual → physical binding",
    3: "Text grounding",
    4: "Observed graph (G_obs)",
    5: "Solution-step alignment",
}
PASS_COLLECTIONS = {pass_no: collection_keys(pass_no) for pass_no in PASS_LAYOUTS}

# Problem domains and Kit domains. Pass 4's ``domain`` is the Kit's field: the Kit's validator accepts only
# DOMAINS (mechanics, electromagnetism, mixed) and the compiler copies it into every probe key as
# ``source_domain``, so a Pass 4 we store, compile or export holds one of those three. The domains
# problems really have (``ParentProblem.domain``: free text from the importers, e.g. optics,
# thermodynamics, waves_acoustics) stay on the problem, untouched. The workspace shows the problem's
# own domain beside the Kit select and starts the select at the Kit domain it is exported as, by this
# table; a domain the table does not know (thermodynamics, modern physics, …) starts unset, and the
# validator reports that until the annotator chooses. Nothing defaults silently to mechanics.
KIT_DOMAIN_FOR = {
    **{domain: domain for domain in DOMAINS},
    "electricity": "electromagnetism",
    "magnetism": "electromagnetism",
    "electrostatics": "electromagnetism",
    "circuits": "electromagnetism",
    "optics": "electromagnetism",  # light is an electromagnetic wave
    "waves": "mechanics",  # mechanical waves and sound
    "acoustics": "mechanics",
    "waves_acoustics": "mechanics",
}


def kit_domain_for(domain: str) -> str:
    """The Kit Pass 4 domain a problem of ``domain`` is exported as, or "" when the annotator must choose."""
    return KIT_DOMAIN_FOR.get((domain or "").strip().lower().replace(" ", "_").replace("-", "_"), "")


def px_to_1000(px: float, size: int) -> int:
    """One pixel coordinate on an image side of ``size`` pixels → an int in 0..1000."""
    return min(1000, max(0, math.floor(px * 1000 / size + 0.5)))


def k_to_px(k: int, size: int) -> int:
    """The integer pixel a ``bbox_1000`` coordinate came from (inverse of ``px_to_1000`` for size ≤ 1000)."""
    return math.floor(k * size / 1000 + 0.5)


def bbox_px_to_1000(box: tuple[float, float, float, float], width: int, height: int) -> list[int]:
    x1, y1, x2, y2 = box
    return [
        px_to_1000(min(x1, x2), width),
        px_to_1000(min(y1, y2), height),
        px_to_1000(max(x1, x2), width),
        px_to_1000(max(y1, y2), height),
    ]


def empty_document(pass_no: int, problem_id: str, *, domain: str = "") -> dict[str, Any]:
    """The document a new pass starts from (its exact key set, Kit §2.4); a Pass 4 starts at the Kit domain
    of the problem's own ``domain`` (see ``kit_domain_for``), unset when there is none."""
    doc: dict[str, Any] = {"problem_id": problem_id}
    if pass_no == 4:
        doc = {"schema_version": SCHEMA_VERSION, "problem_id": problem_id, "domain": kit_domain_for(domain)}
    for key in PASS_COLLECTIONS[pass_no]:
        doc[key] = []
    if pass_no in (3, 4):
        doc["query_target"] = {
            "mention_id": "",
            "target_kind": "",
            "target_symbol_latex": "",
            "target_node_ids": [],
            "location_node_ids": [],
            "time_or_event_node_ids": [],
        }
    if pass_no == 5:
        doc["final_answer"] = ""
    return doc


def _records(document: Any, key: str) -> list[dict[str, Any]]:
    value = document.get(key) if isinstance(document, dict) else None
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _renumber(records: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [{**record, "id": f"{prefix}{index:03d}"} for index, record in enumerate(records, start=1)]


def consolidate_gobs(
    *, problem_id: str, pass1: Any, pass2: Any, pass3: Any, current: Any = None, domain_hint: str = ""
) -> dict[str, Any]:
    """Build the Pass 4 G_obs from Passes 1–3 (Kit §2.4), keeping what only Pass 4 owns.

    Visual nodes are unmodified copies of Pass 1; physical nodes are Pass 2's with Pass 3's new or
    updated nodes applied by ID; mentions, quantities, constraints and the query target come from
    Pass 3; bindings are Pass 2's then Pass 3's, renumbered ``b001…``. Relations, the domain and the
    ambiguities are Pass 4's own: they are kept from ``current`` (ambiguities start as the union of
    the earlier passes', renumbered ``u001…``).
    """
    current = current if isinstance(current, dict) else {}
    nodes = {node.get("id"): node for node in _records(pass2, "physical_nodes")}
    for node in _records(pass3, "new_or_updated_physical_nodes"):
        nodes[node.get("id")] = node
    physical = [nodes[key] for key in sorted(nodes, key=lambda k: str(k))]
    bindings = _renumber(_records(pass2, "bindings") + _records(pass3, "bindings"), "b")
    if "ambiguities" in current:
        ambiguities = _records(current, "ambiguities")
    else:
        ambiguities = _renumber(
            _records(pass1, "ambiguities") + _records(pass2, "ambiguities") + _records(pass3, "ambiguities"),
            "u",
        )
    domain = current.get("domain") or kit_domain_for(domain_hint)
    query_target = (pass3 or {}).get("query_target") if isinstance(pass3, dict) else None
    empty = empty_document(4, problem_id)
    return {
        "schema_version": SCHEMA_VERSION,
        "problem_id": problem_id,
        "domain": domain,
        "visual_nodes": _records(pass1, "visual_nodes"),
        "physical_nodes": physical,
        "text_mentions": _records(pass3, "text_mentions"),
        "quantities": _records(pass3, "quantities"),
        "bindings": bindings,
        "relations": _records(current, "relations"),
        "constraints": _records(pass3, "constraints"),
        "query_target": query_target if isinstance(query_target, dict) else empty["query_target"],
        "ambiguities": ambiguities,
    }


_REF_KEY_SUFFIXES = ("_id", "_ids")


def later_references(*, pass_no: int, later: dict[int, Any]) -> dict[str, list[str]]:
    """Which records of later passes point at each region (Pass 1) or entity (Pass 2).

    ``later`` maps pass numbers after ``pass_no`` to their documents. The workspace refuses to delete
    (or renumber, which deleting from the middle does) a record listed here, naming the referencing
    records, instead of silently leaving dangling references in the later passes.
    """
    prefix = {1: "v", 2: "p"}.get(pass_no)
    if prefix is None:
        return {}
    # The records of pass_no itself (the later passes' copies of them) are not references to them.
    skipped = {"problem_id", "visual_nodes", *(["physical_nodes"] if pass_no == 2 else [])}
    refs: dict[str, list[str]] = {}
    for n in sorted(later):
        for where, record in _later_records(n, later[n], skipped=skipped):
            _collect_references(record, "", where, prefix=prefix, refs=refs)
    return refs


def _later_records(pass_no: int, doc: Any, *, skipped: set[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The records of one later pass's document, each with the name the workspace gives it: an entry of a
    list by its id ("Pass 3 b1", else the list's key), an object by its key ("Pass 4 query_target")."""
    if not isinstance(doc, dict):
        return
    for key, value in doc.items():
        if key in skipped:
            continue
        if isinstance(value, list):
            for record in value:
                if isinstance(record, dict):
                    yield f"Pass {pass_no} {record.get('id') or key}", record
        elif isinstance(value, dict):
            yield f"Pass {pass_no} {key}", value


def _collect_references(value: Any, key: str, where: str, *, prefix: str, refs: dict[str, list[str]]) -> None:
    """Add ``where`` to ``refs`` under every id in ``value`` that starts with ``prefix`` and sits under a
    ``*_id`` / ``*_ids`` key (at any depth; ``key`` is the one ``value`` sits under)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _collect_references(v, k, where, prefix=prefix, refs=refs)
    elif isinstance(value, list):
        for item in value:
            _collect_references(item, key, where, prefix=prefix, refs=refs)
    elif (
        isinstance(value, str)
        and key.endswith(_REF_KEY_SUFFIXES)
        and key != "id"
        and value.startswith(prefix)
    ):
        bucket = refs.setdefault(value, [])
        if where not in bucket:
            bucket.append(where)


def vocabulary() -> dict[str, Any]:
    """Kit enums for the page's selects."""
    return {
        "visual_types": list(VISUAL_TYPES),
        "physical_types": list(PHYSICAL_TYPES),
        "binding_types": list(BINDING_TYPES),
        "mention_sections": list(MENTION_SECTIONS),
        "mention_roles": list(MENTION_ROLES),
        "confidence": list(CONFIDENCE_LEVELS),
        "domains": list(DOMAINS),
        "domain_export": dict(KIT_DOMAIN_FOR),
        "step_types": list(STEP_TYPES),
    }
