"""Validation of PhysGraph pass documents, Passes 1–5 (Kit §2.4). Pure: no Django import.

``validate_pass_document(pass_no, document, context)`` returns every violation it finds as a
:class:`ValidationIssue` (stable code, JSON path, sentence for the annotator), in a deterministic
order: root checks, then each collection in schema order (its IDs, then its records, then rules over
the whole collection), then rules that span collections or passes. It never raises on bad input:
a non-dict document or a wrong type anywhere becomes an issue.

Cross-pass references (Pass 2 → Pass 1 visual ids, Pass 3 → Pass 1/2, Pass 5 → Pass 4) are checked
only when the earlier pass is given in the :class:`PassContext`. Without it, a reference is still
checked for the right ID shape, but its existence cannot be known and is not reported.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import shapes
from .spans import (
    AMBIGUOUS_OCCURRENCE,
    QUOTE_NOT_FOUND,
    RESOLVED_EXACT,
    UNIQUE_EXACT_REPAIR_PROPOSED,
    resolve_span,
)

# --------------------------------------------------------------------------------------------
# Public types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationIssue:
    code: str
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


@dataclass(frozen=True)
class ImageRef:
    image_id: str
    width: int
    height: int


@dataclass(frozen=True)
class PassContext:
    """What a pass document is validated against: the problem's text and images, earlier passes."""

    problem_id: str
    stem: str = ""
    query: str = ""
    images: tuple[ImageRef, ...] = ()
    pass1: dict[str, Any] | None = None
    pass2: dict[str, Any] | None = None
    pass3: dict[str, Any] | None = None
    pass4: dict[str, Any] | None = None  # needed only for Pass 5's uses_obs_* references


# --------------------------------------------------------------------------------------------
# Issue codes
# --------------------------------------------------------------------------------------------

PASS_NUMBER_INVALID = "PASS_NUMBER_INVALID"
TYPE_MISMATCH = "TYPE_MISMATCH"
KEY_SET_MISMATCH = "KEY_SET_MISMATCH"
FORBIDDEN_KEY = "FORBIDDEN_KEY"
VALIDATOR_CRASHED = "VALIDATOR_CRASHED"  # not a rule: the validator itself failed (see checked_issues)
PROBLEM_ID_MISMATCH = "PROBLEM_ID_MISMATCH"
ENUM_INVALID = "ENUM_INVALID"
VALUE_EMPTY = "VALUE_EMPTY"
ID_INVALID = "ID_INVALID"
ID_DUPLICATE = "ID_DUPLICATE"
ID_NOT_CONTIGUOUS = "ID_NOT_CONTIGUOUS"
ID_LIST_DUPLICATE = "ID_LIST_DUPLICATE"
REFERENCE_UNKNOWN = "REFERENCE_UNKNOWN"
BBOX_INVALID = "BBOX_INVALID"
BBOX_OUT_OF_RANGE = "BBOX_OUT_OF_RANGE"
BBOX_ORDER_INVALID = "BBOX_ORDER_INVALID"
KEYPOINTS_INVALID = "KEYPOINTS_INVALID"
KEYPOINTS_OUT_OF_RANGE = "KEYPOINTS_OUT_OF_RANGE"
CENTER_INVALID = "CENTER_INVALID"
CENTER_OUT_OF_RANGE = "CENTER_OUT_OF_RANGE"
RADIUS_INVALID = "RADIUS_INVALID"
RADIUS_OUT_OF_RANGE = "RADIUS_OUT_OF_RANGE"
IMAGE_ID_UNKNOWN = "IMAGE_ID_UNKNOWN"
VISUAL_NODES_EMPTY = "VISUAL_NODES_EMPTY"
PROVENANCE_INVALID = "PROVENANCE_INVALID"
PROVENANCE_EVIDENCE_MISMATCH = "PROVENANCE_EVIDENCE_MISMATCH"
PASS2_PROVENANCE_NOT_IMAGE_ONLY = "PASS2_PROVENANCE_NOT_IMAGE_ONLY"
PASS2_VISUAL_ANCHOR_MISSING = "PASS2_VISUAL_ANCHOR_MISSING"
BINDING_DIRECTION_INVALID = "BINDING_DIRECTION_INVALID"
MENTION_OCCURRENCE_INVALID = "MENTION_OCCURRENCE_INVALID"
MENTION_QUOTE_NOT_FOUND = "MENTION_QUOTE_NOT_FOUND"
MENTION_ORDER_INVALID = "MENTION_ORDER_INVALID"
QUERY_TARGET_MISSING = "QUERY_TARGET_MISSING"
QUERY_TARGET_ROLE_INVALID = "QUERY_TARGET_ROLE_INVALID"
RELATION_DUPLICATE = "RELATION_DUPLICATE"
PASS4_VISUAL_NODE_ADDED = "PASS4_VISUAL_NODE_ADDED"
PASS4_VISUAL_NODE_MODIFIED = "PASS4_VISUAL_NODE_MODIFIED"

# Workspace checks (see ``workspace_checks``): what the workspace's hints promise the annotator and the
# Kit does not refuse. Never reported for Kit files, so they cannot change what compiles from them.
TEXT_GLYPH_TEXT_EMPTY = "TEXT_GLYPH_TEXT_EMPTY"
PASS2_PHYSICAL_NODES_EMPTY = "PASS2_PHYSICAL_NODES_EMPTY"
PHYSICAL_NODE_UNBOUND = "PHYSICAL_NODE_UNBOUND"
MENTION_OCCURRENCE_AMBIGUOUS = "MENTION_OCCURRENCE_AMBIGUOUS"
MENTION_OCCURRENCE_REPAIR_PROPOSED = "MENTION_OCCURRENCE_REPAIR_PROPOSED"
VALUE_BLANK = "VALUE_BLANK"
SHAPE_FIELDS_INVALID = "SHAPE_FIELDS_INVALID"
BBOX_OUTSIDE_SHAPE = "BBOX_OUTSIDE_SHAPE"
BBOX_EMPTY = "BBOX_EMPTY"
WORKSPACE_ISSUE_CODES: tuple[str, ...] = (
    TEXT_GLYPH_TEXT_EMPTY,
    PASS2_PHYSICAL_NODES_EMPTY,
    PHYSICAL_NODE_UNBOUND,
    MENTION_OCCURRENCE_REPAIR_PROPOSED,
    MENTION_OCCURRENCE_AMBIGUOUS,
    VALUE_BLANK,
    SHAPE_FIELDS_INVALID,
    BBOX_OUTSIDE_SHAPE,
    BBOX_EMPTY,
)

logger = logging.getLogger(__name__)

# fmt: off
ISSUE_CODES: tuple[str, ...] = (
    PASS_NUMBER_INVALID, TYPE_MISMATCH, KEY_SET_MISMATCH, FORBIDDEN_KEY, PROBLEM_ID_MISMATCH,
    ENUM_INVALID, VALUE_EMPTY, ID_INVALID, ID_DUPLICATE, ID_NOT_CONTIGUOUS, ID_LIST_DUPLICATE,
    REFERENCE_UNKNOWN, BBOX_INVALID, BBOX_OUT_OF_RANGE, BBOX_ORDER_INVALID, KEYPOINTS_INVALID,
    KEYPOINTS_OUT_OF_RANGE, CENTER_INVALID, CENTER_OUT_OF_RANGE, RADIUS_INVALID, RADIUS_OUT_OF_RANGE,
    IMAGE_ID_UNKNOWN, VISUAL_NODES_EMPTY, PROVENANCE_INVALID, PROVENANCE_EVIDENCE_MISMATCH,
    PASS2_PROVENANCE_NOT_IMAGE_ONLY, PASS2_VISUAL_ANCHOR_MISSING, BINDING_DIRECTION_INVALID,
    MENTION_OCCURRENCE_INVALID, MENTION_QUOTE_NOT_FOUND, MENTION_ORDER_INVALID, QUERY_TARGET_MISSING,
    QUERY_TARGET_ROLE_INVALID, RELATION_DUPLICATE, PASS4_VISUAL_NODE_ADDED, PASS4_VISUAL_NODE_MODIFIED,
)
# fmt: on

# --------------------------------------------------------------------------------------------
# Vocabulary (Kit §2.4 and PhysAlign_data_build pass5.schema.json)
# --------------------------------------------------------------------------------------------

SCHEMA_VERSION = "physgraph_obs_v0.1"

# fmt: off
VISUAL_TYPES = (
    "text_glyph", "point_mark", "line_segment", "polyline", "curve", "circle", "arc", "arrow",
    "angle_mark", "region", "axis", "graph_curve", "object_shape", "component_symbol",
    "field_symbol", "unknown_visual",
)
PHYSICAL_TYPES = (
    "point", "body", "particle", "surface", "inclined_plane", "rod", "rope", "spring", "pulley",
    "pivot", "trajectory", "force", "velocity", "acceleration", "charge", "electric_field",
    "magnetic_field", "wire", "junction", "battery", "resistor", "switch", "ammeter", "voltmeter",
    "capacitor", "coil", "conductor_rod", "event", "system", "unknown_physical",
)
BINDING_TYPES = ("labels", "represents", "same_entity_as", "refers_to")
MENTION_SECTIONS = ("stem", "query")
MENTION_ROLES = ("entity", "quantity", "constraint", "relation", "query_target", "other")
CONFIDENCE_LEVELS = ("high", "medium", "low")
DOMAINS = ("mechanics", "electromagnetism", "mixed")
STEP_TYPES = (
    "read_given", "select_law", "define_variable", "form_equation", "derive", "calculate",
    "case_analysis", "check", "conclude",
)
PROVENANCE_VALUES = ("IMAGE", "TEXT")
# fmt: on

FORBIDDEN_KEYS = frozenset(
    {"answer", "answers", "correct_answer", "final_answer", "reasoning", "solution", "standard_solution"}
)

# fmt: off
ID_PREFIXES = {
    "visual": "v", "physical": "p", "mention": "m", "quantity": "q", "binding": "b",
    "relation": "r", "constraint": "c", "ambiguity": "u", "step": "s",
}
# ASCII digits only: ``\d`` would also accept e.g. Arabic-Indic digits.
ID_PATTERNS = {kind: re.compile(prefix + "[0-9]{3,}") for kind, prefix in ID_PREFIXES.items()}
KIND_LABELS = {
    "visual": "visual node", "physical": "physical node", "mention": "text mention",
    "quantity": "quantity", "binding": "binding", "relation": "relation", "constraint": "constraint",
    "ambiguity": "ambiguity", "step": "solution step",
}
# fmt: on

# Binding type → (kind of from_id, kind of to_id).
BINDING_ENDPOINTS = {
    "labels": ("visual", "physical"),
    "represents": ("visual", "physical"),
    "refers_to": ("mention", "physical"),
    "same_entity_as": ("physical", "physical"),
}

EVERY_REFERABLE_KIND = ("visual", "physical", "mention", "quantity", "binding", "relation", "constraint")


@dataclass(frozen=True)
class RecordSpec:
    keys: frozenset[str]
    id_key: str | None = None
    id_kind: str | None = None


def _spec(keys: str, id_kind: str | None = None, id_key: str = "id") -> RecordSpec:
    return RecordSpec(frozenset(keys.split()), id_key if id_kind else None, id_kind)


RECORD_SPECS: dict[str, RecordSpec] = {
    "visual_node": _spec(
        "id type subtype text image_id bbox_1000 keypoints_1000 center_1000 radius_1000 confidence",
        "visual",
    ),
    "physical_node": _spec(
        "id type subtype name symbol visual_anchor_ids text_mention_ids provenance confidence", "physical"
    ),
    "binding": _spec("id type from_id to_id provenance evidence_visual_ids evidence_mention_ids", "binding"),
    "mention": _spec("id section quote occurrence role", "mention"),
    "quantity": _spec(
        "id kind symbol_latex value_latex unit_latex owner_id visual_anchor_ids text_mention_ids provenance",
        "quantity",
    ),
    "constraint": _spec(
        "id kind subject_ids value_text provenance evidence_visual_ids evidence_mention_ids", "constraint"
    ),
    "relation": _spec(
        "id predicate subject_id object_id quantity_id provenance evidence_visual_ids "
        "evidence_mention_ids confidence",
        "relation",
    ),
    "ambiguity": _spec(
        "id scope description candidate_ids evidence_visual_ids evidence_mention_ids", "ambiguity"
    ),
    "query_target": _spec(
        "mention_id target_kind target_symbol_latex target_node_ids location_node_ids time_or_event_node_ids"
    ),
    "solution_step": _spec(
        "step_id text step_type uses_obs_node_ids uses_obs_quantity_ids uses_obs_relation_ids "
        "uses_obs_constraint_ids",
        "step",
        id_key="step_id",
    ),
}


@dataclass(frozen=True)
class Collection:
    key: str
    record: str
    contiguous: bool = True


@dataclass(frozen=True)
class PassLayout:
    scalars: tuple[str, ...]
    collections: tuple[Collection, ...]
    has_query_target: bool = False

    @property
    def keys(self) -> frozenset[str]:
        names = {*self.scalars, *(c.key for c in self.collections)}
        return frozenset(names | ({"query_target"} if self.has_query_target else set()))


_AMBIGUITIES = Collection("ambiguities", "ambiguity")
PASS_LAYOUTS: dict[int, PassLayout] = {
    1: PassLayout(("problem_id",), (Collection("visual_nodes", "visual_node"), _AMBIGUITIES)),
    2: PassLayout(
        ("problem_id",),
        (Collection("physical_nodes", "physical_node"), Collection("bindings", "binding"), _AMBIGUITIES),
    ),
    3: PassLayout(
        ("problem_id",),
        (
            # Holds new nodes and updates of Pass 2 nodes; the union with Pass 2 must be contiguous.
            Collection("new_or_updated_physical_nodes", "physical_node", contiguous=False),
            Collection("text_mentions", "mention"),
            Collection("quantities", "quantity"),
            Collection("bindings", "binding"),
            Collection("constraints", "constraint"),
            _AMBIGUITIES,
        ),
        has_query_target=True,
    ),
    4: PassLayout(
        ("schema_version", "problem_id", "domain"),
        (
            Collection("visual_nodes", "visual_node"),
            Collection("physical_nodes", "physical_node"),
            Collection("text_mentions", "mention"),
            Collection("quantities", "quantity"),
            Collection("bindings", "binding"),
            Collection("relations", "relation"),
            Collection("constraints", "constraint"),
            _AMBIGUITIES,
        ),
        has_query_target=True,
    ),
    5: PassLayout(("problem_id", "final_answer"), (Collection("solution_steps", "solution_step"),)),
}

# Where each kind of record lives in a pass document, to collect the IDs of an earlier pass.
_KIND_COLLECTIONS = {
    "visual": ("visual_nodes",),
    "physical": ("physical_nodes", "new_or_updated_physical_nodes"),
    "mention": ("text_mentions",),
    "quantity": ("quantities",),
    "binding": ("bindings",),
    "relation": ("relations",),
    "constraint": ("constraints",),
}

_MISSING = object()
_UNPLACED = 10**9  # a mention whose occurrence is past its quote's last match sits after every placed one


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def validate_pass_document(pass_no: int, document: object, context: PassContext) -> list[ValidationIssue]:
    """Every rule violation of ``document`` as the Pass ``pass_no`` document of ``context``'s problem.

    An empty list means the document is valid. Never raises for malformed documents.
    """
    run = _validated(pass_no, document, context)
    return _pass_number_invalid(pass_no) if run is None else run.issues


def _validated(pass_no: int, document: object, context: PassContext) -> _Validation | None:
    """One validation run (``None`` for a pass number that is not 1–5): the Kit's issues and the stricter
    ones it noticed on the way (``_Validation.stricter``)."""
    if type(pass_no) is not int or pass_no not in PASS_LAYOUTS:
        return None
    run = _Validation(pass_no, context)
    run.validate(document)
    return run


def _pass_number_invalid(pass_no: object) -> list[ValidationIssue]:
    return [ValidationIssue(PASS_NUMBER_INVALID, "", f"Pass number {pass_no!r} is not one of 1–5.")]


def checked_issues(pass_no: int, document: Any, context: PassContext) -> list[dict[str, str]]:
    """The validator's issues as ``{code, path, message}`` dicts, for every caller (workspace, stored
    documents, importers). The validator's contract is never to raise; if it does (a bug), the crash is logged
    and reported as one ``VALIDATOR_CRASHED`` issue, so the document is never trusted."""
    try:
        return [issue.as_dict() for issue in validate_pass_document(pass_no, document, context)]
    except Exception:
        logger.exception("pass validator crashed on %s pass %s", context.problem_id, pass_no)
        return _crashed()


def _crashed() -> list[dict[str, str]]:
    return [
        {
            "code": VALIDATOR_CRASHED,
            "path": "",
            "message": "The validator could not check this document; it cannot be submitted or approved.",
        }
    ]


def workspace_checks(pass_no: int, document: object, context: PassContext) -> list[ValidationIssue]:
    """What the workspace's hints promise and the Kit does not refuse: stricter than the Kit.

    Reported for documents made in this app (the workspace, its save and submit), never for Kit files, which
    ``validate_pass_document`` alone judges, so a Kit file that the Kit accepts still imports and compiles:

    * ``TEXT_GLYPH_TEXT_EMPTY`` (Pass 1): a text glyph whose visible text is empty or blank. The Kit keeps
      it but its compiler makes no observation of a blank glyph (Kit §3), so the region reads as nothing.
    * ``PASS2_PHYSICAL_NODES_EMPTY`` (Pass 2): no entity although Pass 1 has regions; the Kit accepts an
      empty Pass 2, but then nothing in the diagram can be grounded in Passes 3–4.
    * ``MENTION_OCCURRENCE_REPAIR_PROPOSED`` / ``MENTION_OCCURRENCE_AMBIGUOUS`` (Passes 3 and 4): a mention
      whose occurrence is past its quote's last match (the quote occurs once / several times). The Kit's
      source validation accepts it and its compiler keeps the mention unresolved (``SPAN_REVIEW_REQUIRED``),
      which blocks the T02 groups that start from it; the workspace asks for the fix instead.
    * ``VALUE_BLANK``: a quote, kind, predicate, description, target kind or step text of only white space.
      The Kit refuses only the empty string (``VALUE_EMPTY``).
    * ``PHYSICAL_NODE_UNBOUND``: an entity bound to nothing. In Pass 2, a node that lists visual anchors
      but that no ``labels``/``represents`` binding points at (the Kit checks only the anchor list; a node
      with no anchor at all is already the Kit's ``PASS2_VISUAL_ANCHOR_MISSING``). In Pass 3, a new node
      (not in Pass 2) with no visual anchor, no mention and no ``refers_to`` binding.

    * ``SHAPE_FIELDS_INVALID`` (Pass 1): keypoints, centre or radius that do not fit the node's type
      (``kit.passes.shapes``: a circle or arc has a centre and radius, nothing else does; an arrow has two
      keypoints, an angle mark three, …; a centre and radius come together). The Kit checks only their ranges.
    * ``BBOX_EMPTY`` / ``BBOX_OUTSIDE_SHAPE`` (Pass 1): a box without area (the Kit's compiler makes the node
      unlocatable, ``GEOMETRY_UNSUPPORTED``), or one that misses part of the shape the node draws (the Kit
      locates a node by its box alone, so the view would mark the wrong pixels).

    Malformed documents give no workspace issue: ``validate_pass_document`` reports them. Never raises.
    """
    return _workspace_issues(pass_no, document, context, _validated(pass_no, document, context))


def _workspace_issues(
    pass_no: int, document: object, context: PassContext, run: _Validation | None
) -> list[ValidationIssue]:
    if not isinstance(document, dict) or run is None:
        return []
    by_pass = {1: _pass1_checks, 2: _pass2_unbound, 3: _pass3_unbound}
    check = by_pass.get(pass_no)
    return list(run.stricter) + (list(check(document, context)) if check else [])


def _pass1_checks(document: dict[str, Any], context: PassContext) -> Iterator[ValidationIssue]:
    yield from _empty_glyph_texts(document, context)
    yield from _shape_geometry(document, context)


def _shape_fields_problem(node: dict[str, Any]) -> str | None:
    """Why the node's keypoints, centre and radius do not fit its type (``kit.passes.shapes``), or ``None``."""
    type_ = str(node.get("type"))
    shape = shapes.SHAPE_OF_TYPE.get(type_)
    center, radius = node.get("center_1000"), node.get("radius_1000")
    has_center = shapes.center_of(node) is not None
    if center != [-1, -1] and not has_center:
        return "center_1000 is either two coordinates or absent ([-1, -1]), never one of each."
    if has_center != (radius != -1):
        return "center_1000 and radius_1000 come together: give both, or mark both absent (-1)."
    if has_center and shape not in shapes.ROUND_SHAPES:
        return f"A {type_} has no centre or radius (only circles and arcs do): set them to -1."
    if has_center and shapes.radius_of(node) is None:
        return "radius_1000 must be at least 1 when the centre is given."
    points = node.get("keypoints_1000")
    if shape is None or not isinstance(points, list) or not points:
        return None
    fewest, most = shapes.KEYPOINT_COUNT[shape]
    if len(points) < fewest or (most is not None and len(points) > most):
        wanted = f"{fewest} or more" if most is None else str(fewest)
        return f"A {type_} is drawn from {wanted} keypoints (or none, for a box), not {len(points)}."
    if shape == "arc" and not has_center:
        return "An arc's end points need its centre and radius."
    return None


def _bbox_outside(node: dict[str, Any], bbox: list[int], images: dict[str, ImageRef]) -> bool:
    shape = shapes.shape_of(node)
    image = images.get(str(node.get("image_id")))
    if shape is None or (shape in shapes.ROUND_SHAPES and image is None):
        return False
    width, height = (image.width, image.height) if image else (1000, 1000)
    points = shapes.extent_points(node, width, height)
    tolerance = 1 if shape in shapes.ROUND_SHAPES else 0  # the radius is rounded in its own frame
    low_x = max(0, math.floor(min(p[0] for p in points)))
    low_y = max(0, math.floor(min(p[1] for p in points)))
    high_x = min(1000, math.ceil(max(p[0] for p in points)))
    high_y = min(1000, math.ceil(max(p[1] for p in points)))
    return (
        bbox[0] > low_x + tolerance
        or bbox[1] > low_y + tolerance
        or bbox[2] < high_x - tolerance
        or bbox[3] < high_y - tolerance
    )


def _shape_geometry(document: dict[str, Any], context: PassContext) -> Iterator[ValidationIssue]:
    """Keypoints, centre and radius that fit the node's type, and a box with an area that covers them. The Kit
    accepts any in-range values and locates a node by its box alone, so a box that misses the drawn shape, or
    has no area (the compiler cannot locate it: ``GEOMETRY_UNSUPPORTED``), would mark the wrong pixels."""
    images = {image.image_id: image for image in context.images}
    for index, node in enumerate(document.get("visual_nodes") or []):
        if not isinstance(node, dict):
            continue
        path = f"visual_nodes[{index}]"
        problem = _shape_fields_problem(node)
        if problem:
            yield ValidationIssue(SHAPE_FIELDS_INVALID, path, f"Region {node.get('id')}: {problem}")
        bbox = node.get("bbox_1000")
        if not (isinstance(bbox, list) and len(bbox) == 4 and all(_is_int(v) for v in bbox)):
            continue
        if bbox[0] >= bbox[2] or bbox[1] >= bbox[3]:
            yield ValidationIssue(
                BBOX_EMPTY,
                f"{path}.bbox_1000",
                f"Region {node.get('id')} has a box without area: widen it so it covers what it marks.",
            )
        elif not problem and _bbox_outside(node, bbox, images):
            yield ValidationIssue(
                BBOX_OUTSIDE_SHAPE,
                f"{path}.bbox_1000",
                f"The box of region {node.get('id')} does not cover its {node.get('type')}: move a point "
                "of the shape (the box follows), or widen the box.",
            )


def _empty_glyph_texts(document: dict[str, Any], context: PassContext) -> Iterator[ValidationIssue]:
    for index, node in enumerate(document.get("visual_nodes") or []):
        if not isinstance(node, dict) or node.get("type") != "text_glyph":
            continue
        text = node.get("text")
        if isinstance(text, str) and not text.strip():
            yield ValidationIssue(
                TEXT_GLYPH_TEXT_EMPTY,
                f"visual_nodes[{index}].text",
                f"Text glyph {node.get('id')} has no visible text: type exactly what the diagram "
                "shows, or change its type if the region holds no text.",
            )


def _pass2_unbound(document: dict[str, Any], context: PassContext) -> Iterator[ValidationIssue]:
    nodes = document.get("physical_nodes")
    if isinstance(nodes, list) and not nodes and any(_records_of(context.pass1, "visual_nodes")):
        yield ValidationIssue(
            PASS2_PHYSICAL_NODES_EMPTY,
            "physical_nodes",
            "Pass 2 has no entity yet: create the physical entities the diagram shows (E) and bind "
            "their regions to them (B).",
        )
    bound = {
        b.get("to_id") for b in _records_of(document, "bindings") if b.get("type") in ("labels", "represents")
    }
    for index, node in enumerate(nodes if isinstance(nodes, list) else []):
        anchors = node.get("visual_anchor_ids") if isinstance(node, dict) else None
        if isinstance(anchors, list) and anchors and node.get("id") not in bound:
            yield ValidationIssue(
                PHYSICAL_NODE_UNBOUND,
                f"physical_nodes[{index}]",
                f"Entity {node.get('id')} is bound to nothing: no labels or represents binding points "
                "at it. Bind a region to it (select the region, then B).",
            )


def _pass3_unbound(document: dict[str, Any], context: PassContext) -> Iterator[ValidationIssue]:
    earlier = _ids_in_document(context.pass2, "physical")
    referred = {b.get("to_id") for b in _records_of(document, "bindings") if b.get("type") == "refers_to"}
    nodes = document.get("new_or_updated_physical_nodes")
    for index, node in enumerate(nodes if isinstance(nodes, list) else []):
        if not isinstance(node, dict) or node.get("id") in earlier or node.get("id") in referred:
            continue
        if not node.get("visual_anchor_ids") and not node.get("text_mention_ids"):
            yield ValidationIssue(
                PHYSICAL_NODE_UNBOUND,
                f"new_or_updated_physical_nodes[{index}]",
                f"Entity {node.get('id')} is bound to nothing: select its words in the text, add them "
                "as a mention and choose this entity under “Refers to entity”, or delete it.",
            )


def checked_workspace_issues(pass_no: int, document: Any, context: PassContext) -> list[dict[str, str]]:
    """``checked_issues`` plus ``workspace_checks``, from one validation run: the issues of a document made or
    stored in this app (workspace, save, submit). Kit files are judged by ``checked_issues`` alone (importers)."""
    try:
        run = _validated(pass_no, document, context)
    except Exception:
        logger.exception("pass validator crashed on %s pass %s", context.problem_id, pass_no)
        return _crashed()
    issues = _pass_number_invalid(pass_no) if run is None else run.issues
    try:
        extra = _workspace_issues(pass_no, document, context, run)
    except Exception:
        logger.exception("workspace checks crashed on %s pass %s", context.problem_id, pass_no)
        extra = []
    return [issue.as_dict() for issue in issues + extra]


def context_for(
    pass_no: int,
    *,
    problem_id: str,
    stem: str,
    query: str,
    images: Iterable[ImageRef],
    earlier: dict[int, object],
) -> PassContext:
    """The context a Pass ``pass_no`` document is validated in: the problem's public text and images, and
    the documents of the passes before it (``earlier``: pass number → document). The workspace (stored
    documents) and the importers (the file's documents) both build it here."""
    documents = {
        f"pass{n}": doc for n, doc in earlier.items() if n < pass_no and n <= 4 and isinstance(doc, dict)
    }
    return PassContext(problem_id=problem_id, stem=stem, query=query, images=tuple(images), **documents)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def _is_int(value: object) -> bool:
    return type(value) is int  # bool is a subclass of int, and is not accepted as one


def _kind_of(identifier: str) -> str | None:
    return next((kind for kind, pattern in ID_PATTERNS.items() if pattern.fullmatch(identifier)), None)


def _labels(kinds: Iterable[str]) -> str:
    return " or ".join(KIND_LABELS[kind] for kind in kinds)


def _records_of(document: object, key: str) -> Iterator[dict[str, Any]]:
    items = document.get(key) if isinstance(document, dict) else None
    if isinstance(items, list):
        yield from (item for item in items if isinstance(item, dict))


def _ids_of(records: Iterable[dict[str, Any]], id_key: str = "id") -> set[str]:
    return {record[id_key] for record in records if isinstance(record.get(id_key), str)}


def _ids_in_document(document: object, kind: str) -> set[str]:
    ids: set[str] = set()
    for key in _KIND_COLLECTIONS[kind]:
        ids |= _ids_of(_records_of(document, key))
    return ids


def collection_keys(pass_no: int) -> tuple[str, ...]:
    """The record collections of a Pass ``pass_no`` document, in schema order (Pass 4 is the consolidated G_obs)."""
    return tuple(collection.key for collection in PASS_LAYOUTS[pass_no].collections)


def forbidden_key_message(key: str) -> str:
    return (
        f"The key {key!r} is not allowed: annotation passes must not carry answers, solutions or reasoning."
    )


def forbidden_key_paths(pass_no: int, document: Any) -> list[tuple[str, str]]:
    """Kit §2.4: answer-, solution- and reasoning-like keys (``FORBIDDEN_KEYS``, any case) at any depth, as
    ``(path, key)`` depth-first in document order; iterative, so deep nesting cannot overflow the stack.
    Pass 5 (solution alignment, never used as truth) has a top-level ``final_answer`` in its own schema:
    exactly that key, spelled exactly so, is allowed there and nowhere else."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[object, str]] = [(document, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            children = [(child, _join(path, key)) for key, child in value.items()]
            for key in value:
                if (
                    isinstance(key, str)
                    and key.lower() in FORBIDDEN_KEYS
                    and not (pass_no == 5 and path == "" and key == "final_answer")
                ):
                    found.append((_join(path, key), key))
        elif isinstance(value, list):
            children = [(child, f"{path}[{index}]") for index, child in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return found


def forbidden_key_issues(pass_no: int, document: Any) -> list[dict[str, str]]:
    """The forbidden keys of a document as issue dicts, for callers that scan without the whole validator."""
    return [
        {"code": FORBIDDEN_KEY, "path": path, "message": forbidden_key_message(key)}
        for path, key in forbidden_key_paths(pass_no, document)
    ]


@dataclass
class _Known:
    """The IDs of one kind that a reference may point at; ``complete`` when the owning pass is known."""

    ids: set[str] = field(default_factory=set)
    complete: bool = True


# --------------------------------------------------------------------------------------------
# The validation run
# --------------------------------------------------------------------------------------------


class _Validation:
    def __init__(self, pass_no: int, context: PassContext) -> None:
        self.pass_no = pass_no
        self.context = context
        self.layout = PASS_LAYOUTS[pass_no]
        self.issues: list[ValidationIssue] = []
        self.stricter: list[ValidationIssue] = []  # what the workspace refuses and the Kit accepts
        self.known: dict[str, _Known] = {}
        self.records: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.malformed_collections: set[str] = set()  # collections with a non-object item
        self.mention_positions: dict[str, tuple[int, int]] = {}  # record path → (section, start)

    def add(self, code: str, path: str, message: str) -> None:
        self.issues.append(ValidationIssue(code, path, message))

    # -- document -------------------------------------------------------------------------

    def validate(self, document: object) -> None:
        if not isinstance(document, dict):
            self.add(TYPE_MISMATCH, "", f"A Pass {self.pass_no} document must be a JSON object.")
            return
        self._check_forbidden_keys(document)
        self._check_key_set(document, self.layout.keys, "", f"A Pass {self.pass_no} document")
        self._check_scalars(document)
        for collection in self.layout.collections:
            self.records[collection.key] = self._collect_records(document, collection.key)
        self.known = self._known_ids()
        for collection in self.layout.collections:
            self._check_collection(collection)
        if self.layout.has_query_target and "query_target" in document:
            self._check_query_target(document["query_target"])
        self._check_cross_pass_rules(document)

    def _check_forbidden_keys(self, document: dict[str, Any]) -> None:
        for path, key in forbidden_key_paths(self.pass_no, document):
            self.add(FORBIDDEN_KEY, path, forbidden_key_message(key))

    def _check_key_set(self, record: dict[str, Any], expected: frozenset[str], path: str, what: str) -> None:
        actual = {key for key in record if isinstance(key, str)}
        missing = sorted(expected - actual)
        unexpected = sorted(actual - expected) + sorted(
            repr(key) for key in record if not isinstance(key, str)
        )
        if not missing and not unexpected:
            return
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if unexpected:
            parts.append("unexpected " + ", ".join(unexpected))
        self.add(KEY_SET_MISMATCH, path, f"{what} has the wrong keys: {'; '.join(parts)}.")

    def _check_scalars(self, document: dict[str, Any]) -> None:
        if "problem_id" in document and document["problem_id"] != self.context.problem_id:
            self.add(
                PROBLEM_ID_MISMATCH,
                "problem_id",
                f"problem_id {document['problem_id']!r} is not this problem ({self.context.problem_id!r}).",
            )
        if "schema_version" in self.layout.scalars and "schema_version" in document:
            if document["schema_version"] != SCHEMA_VERSION:
                self.add(ENUM_INVALID, "schema_version", f"schema_version must be {SCHEMA_VERSION!r}.")
        if "domain" in self.layout.scalars:
            self._check_domain(document)
        if "final_answer" in self.layout.scalars:
            self._string(document, "final_answer", "")

    def _check_domain(self, document: dict[str, Any]) -> None:
        # The Kit's Pass 4 accepts exactly DOMAINS. A problem of another domain (optics, thermodynamics, …)
        # keeps that domain on the problem; its Pass 4 names the Kit domain it is exported under.
        value = document.get("domain", _MISSING)
        if value is not _MISSING and (not isinstance(value, str) or value not in DOMAINS):
            self.add(
                ENUM_INVALID,
                "domain",
                f"domain {value!r} is not one of the Kit's Pass 4 domains: {', '.join(DOMAINS)}. A problem of "
                "another domain (e.g. optics) keeps its own domain; choose the Kit domain it is exported as.",
            )

    def _collect_records(self, document: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
        """The (path, record) pairs of a collection; reports a non-list or a non-object item."""
        items = document.get(key, _MISSING)
        if items is _MISSING:
            return []
        if not isinstance(items, list):
            self.add(TYPE_MISMATCH, key, f"{key} must be a JSON array.")
            return []
        records = []
        for index, item in enumerate(items):
            path = f"{key}[{index}]"
            if isinstance(item, dict):
                records.append((path, item))
            else:
                self.malformed_collections.add(key)
                self.add(TYPE_MISMATCH, path, f"Each item of {key} must be a JSON object.")
        return records

    # -- what references may point at ---------------------------------------------------------

    def _own(self, *keys: str) -> _Known:
        ids: set[str] = set()
        for key in keys:
            spec = RECORD_SPECS[self._collection(key).record]
            ids |= _ids_of((record for _, record in self.records.get(key, [])), spec.id_key or "id")
        return _Known(ids)

    def _collection(self, key: str) -> Collection:
        return next(c for c in self.layout.collections if c.key == key)

    def _from_pass(self, document: dict[str, Any] | None, kind: str) -> _Known:
        return _Known(_ids_in_document(document, kind), complete=document is not None)

    def _known_ids(self) -> dict[str, _Known]:
        known = {kind: _Known() for kind in ID_PREFIXES}
        ctx = self.context
        if self.pass_no == 1:
            known["visual"] = self._own("visual_nodes")
        elif self.pass_no == 2:
            known["visual"] = self._from_pass(ctx.pass1, "visual")
            known["physical"] = self._own("physical_nodes")
            known["binding"] = self._own("bindings")
        elif self.pass_no == 3:
            known["visual"] = self._from_pass(ctx.pass1, "visual")
            earlier = self._from_pass(ctx.pass2, "physical")
            known["physical"] = _Known(
                earlier.ids | self._own("new_or_updated_physical_nodes").ids, earlier.complete
            )
            for kind, key in (
                ("mention", "text_mentions"),
                ("quantity", "quantities"),
                ("binding", "bindings"),
                ("constraint", "constraints"),
            ):
                known[kind] = self._own(key)
        elif self.pass_no == 4:
            for kind, keys in _KIND_COLLECTIONS.items():
                known[kind] = self._own(*(key for key in keys if key in self.records))
        else:
            for kind in _KIND_COLLECTIONS:
                known[kind] = self._from_pass(ctx.pass4, kind)
        return known

    # -- collections --------------------------------------------------------------------------

    def _check_collection(self, collection: Collection) -> None:
        records = self.records[collection.key]
        spec = RECORD_SPECS[collection.record]
        self._check_ids(collection, spec)
        check_record = getattr(self, f"_check_{collection.record}")
        for path, record in records:
            self._check_key_set(record, spec.keys, path, f"This {collection.record.replace('_', ' ')}")
            check_record(record, path)
        if collection.record == "mention":
            self._check_mention_order(records)
        if collection.record == "relation":
            self._check_relation_duplicates(records)

    def _check_ids(self, collection: Collection, spec: RecordSpec) -> None:
        if spec.id_kind is None or spec.id_key is None:
            return
        id_key, pattern, prefix = spec.id_key, ID_PATTERNS[spec.id_kind], ID_PREFIXES[spec.id_kind]
        ordered: list[str] = []
        seen: set[str] = set()
        all_well_formed = True
        for path, record in self.records[collection.key]:
            value = record.get(id_key, _MISSING)
            if value is _MISSING:
                all_well_formed = False
                continue
            if not isinstance(value, str) or not pattern.fullmatch(value):
                all_well_formed = False
                self.add(
                    ID_INVALID,
                    _join(path, id_key),
                    f"{value!r} is not a valid {KIND_LABELS[spec.id_kind]} id: use {prefix} followed by "
                    f"at least three digits, e.g. {prefix}001.",
                )
            elif value in seen:
                all_well_formed = False
                self.add(ID_DUPLICATE, _join(path, id_key), f"The id {value} is used more than once.")
            else:
                seen.add(value)
                ordered.append(value)
        # Gaps are judged only when every id is well formed, so one bad id gives one issue.
        if not collection.contiguous or not all_well_formed or collection.key in self.malformed_collections:
            return
        expected = [f"{prefix}{number:03d}" for number in range(1, len(ordered) + 1)]
        if ordered != expected:
            self.add(
                ID_NOT_CONTIGUOUS,
                collection.key,
                f"The ids of {collection.key} must be {', '.join(expected)} in this order; "
                f"found {', '.join(ordered)}.",
            )

    # -- field checks -------------------------------------------------------------------------

    def _string(self, record: dict[str, Any], key: str, path: str, *, non_empty: bool = False) -> str | None:
        value = record.get(key, _MISSING)
        if value is _MISSING:
            return None
        field_path = _join(path, key)
        if not isinstance(value, str):
            self.add(TYPE_MISMATCH, field_path, f"{key} must be a string.")
            return None
        if non_empty and value == "":
            self.add(VALUE_EMPTY, field_path, f"{key} must not be empty.")
        elif non_empty and not value.strip():
            self.stricter.append(
                ValidationIssue(VALUE_BLANK, field_path, f"{key} is only white space; write what it is.")
            )
        return value

    def _enum(self, record: dict[str, Any], key: str, path: str, allowed: tuple[str, ...]) -> None:
        value = record.get(key, _MISSING)
        if value is not _MISSING and (not isinstance(value, str) or value not in allowed):
            self.add(ENUM_INVALID, _join(path, key), f"{key} {value!r} is not one of: {', '.join(allowed)}.")

    def _reference(self, value: object, path: str, kinds: tuple[str, ...]) -> None:
        """Check that ``value`` names an existing record of one of ``kinds``."""
        if not isinstance(value, str):
            self.add(TYPE_MISMATCH, path, f"A reference to a {_labels(kinds)} must be a string id.")
            return
        if any(value in self.known[kind].ids for kind in kinds):
            return
        kind = _kind_of(value)
        if kind not in kinds:
            self.add(REFERENCE_UNKNOWN, path, f"{value!r} is not a {_labels(kinds)} id.")
        elif self.known[kind].complete:
            self.add(REFERENCE_UNKNOWN, path, f"There is no {KIND_LABELS[kind]} with id {value}.")

    def _optional_reference(
        self, record: dict[str, Any], key: str, path: str, kinds: tuple[str, ...]
    ) -> None:
        """A reference field where "" means "not set"."""
        value = record.get(key, _MISSING)
        if value is _MISSING:
            return
        if value != "":
            self._reference(value, _join(path, key), kinds)

    def _reference_list(
        self, record: dict[str, Any], key: str, path: str, kinds: tuple[str, ...], *, non_empty: bool = False
    ) -> list[str] | None:
        """Check a list of distinct id references; returns its string items (None when absent/invalid)."""
        values = record.get(key, _MISSING)
        if values is _MISSING:
            return None
        list_path = _join(path, key)
        if not isinstance(values, list):
            self.add(TYPE_MISMATCH, list_path, f"{key} must be a JSON array of ids.")
            return None
        if non_empty and not values:
            self.add(VALUE_EMPTY, list_path, f"{key} must list at least one {_labels(kinds)}.")
        seen: set[str] = set()
        for index, value in enumerate(values):
            item_path = f"{list_path}[{index}]"
            if isinstance(value, str) and value in seen:
                self.add(ID_LIST_DUPLICATE, item_path, f"{value} is listed twice in {key}.")
                continue
            self._reference(value, item_path, kinds)
            if isinstance(value, str):
                seen.add(value)
        return [value for value in values if isinstance(value, str)]

    def _provenance(
        self,
        record: dict[str, Any],
        path: str,
        visual: list[str] | None,
        mentions: list[str] | None,
        visual_key: str,
        mention_key: str,
    ) -> list[str] | None:
        """Provenance ⊆ {IMAGE, TEXT}, non-empty, distinct; IMAGE ⇔ visual evidence, TEXT ⇔ mentions."""
        values = record.get("provenance", _MISSING)
        if values is _MISSING:
            return None
        prov_path = _join(path, "provenance")
        if not isinstance(values, list):
            self.add(TYPE_MISMATCH, prov_path, "provenance must be a JSON array.")
            return None
        if not values:
            self.add(PROVENANCE_INVALID, prov_path, "provenance must contain IMAGE, TEXT or both.")
        seen: list[object] = []
        for index, value in enumerate(values):
            if value not in PROVENANCE_VALUES:
                self.add(PROVENANCE_INVALID, f"{prov_path}[{index}]", f"{value!r} is not IMAGE or TEXT.")
            elif value in seen:
                self.add(PROVENANCE_INVALID, f"{prov_path}[{index}]", f"{value} is listed twice.")
            seen.append(value)
        self._evidence_agreement(prov_path, "IMAGE" in values, visual, visual_key, "visual")
        self._evidence_agreement(prov_path, "TEXT" in values, mentions, mention_key, "mention")
        return values

    def _evidence_agreement(
        self, path: str, claimed: bool, evidence: list[str] | None, key: str, kind: str
    ) -> None:
        if evidence is None:
            return
        tag = "IMAGE" if kind == "visual" else "TEXT"
        if claimed and not evidence:
            self.add(
                PROVENANCE_EVIDENCE_MISMATCH,
                path,
                f"Provenance {tag} needs at least one {KIND_LABELS[kind]} in {key}.",
            )
        elif evidence and not claimed:
            self.add(
                PROVENANCE_EVIDENCE_MISMATCH,
                path,
                f"{key} lists {KIND_LABELS[kind]}s, so provenance must include {tag}.",
            )

    def _evidenced(
        self, record: dict[str, Any], path: str, visual_key: str, mention_key: str
    ) -> list[str] | None:
        visual = self._reference_list(record, visual_key, path, ("visual",))
        mentions = self._reference_list(record, mention_key, path, ("mention",))
        return self._provenance(record, path, visual, mentions, visual_key, mention_key)

    # -- geometry -----------------------------------------------------------------------------

    def _bbox(self, record: dict[str, Any], path: str) -> None:
        bbox = record.get("bbox_1000", _MISSING)
        if bbox is _MISSING:
            return
        bbox_path = _join(path, "bbox_1000")
        if not isinstance(bbox, list) or len(bbox) != 4 or not all(_is_int(v) for v in bbox):
            self.add(BBOX_INVALID, bbox_path, "bbox_1000 must be four integers [x1, y1, x2, y2].")
        elif not all(0 <= v <= 1000 for v in bbox):
            self.add(BBOX_OUT_OF_RANGE, bbox_path, "bbox_1000 coordinates must lie between 0 and 1000.")
        elif bbox[0] > bbox[2] or bbox[1] > bbox[3]:
            self.add(BBOX_ORDER_INVALID, bbox_path, "bbox_1000 must satisfy x1 ≤ x2 and y1 ≤ y2.")

    def _keypoints(self, record: dict[str, Any], path: str) -> None:
        points = record.get("keypoints_1000", _MISSING)
        if points is _MISSING:
            return
        points_path = _join(path, "keypoints_1000")
        if not isinstance(points, list):
            self.add(KEYPOINTS_INVALID, points_path, "keypoints_1000 must be a list of [x, y] pairs.")
            return
        for index, point in enumerate(points):
            point_path = f"{points_path}[{index}]"
            if not self._is_pair(point):
                self.add(KEYPOINTS_INVALID, point_path, "Each keypoint must be a pair of integers [x, y].")
            elif not all(0 <= v <= 1000 for v in point):
                self.add(
                    KEYPOINTS_OUT_OF_RANGE, point_path, "Keypoint coordinates must lie between 0 and 1000."
                )

    @staticmethod
    def _is_pair(value: object) -> bool:
        return isinstance(value, list) and len(value) == 2 and all(_is_int(v) for v in value)

    def _circle(self, record: dict[str, Any], path: str) -> None:
        center = record.get("center_1000", _MISSING)
        if center is not _MISSING:
            center_path = _join(path, "center_1000")
            if not self._is_pair(center):
                self.add(CENTER_INVALID, center_path, "center_1000 must be a pair of integers [x, y].")
            elif not all(-1 <= v <= 1000 for v in center):
                self.add(
                    CENTER_OUT_OF_RANGE,
                    center_path,
                    "center_1000 coordinates must lie between 0 and 1000 (or be -1 when absent).",
                )
        radius = record.get("radius_1000", _MISSING)
        if radius is not _MISSING:
            radius_path = _join(path, "radius_1000")
            if not _is_int(radius):
                self.add(RADIUS_INVALID, radius_path, "radius_1000 must be an integer.")
            elif not -1 <= radius <= 1000:
                self.add(
                    RADIUS_OUT_OF_RANGE,
                    radius_path,
                    "radius_1000 must lie between 0 and 1000 (or be -1 when absent).",
                )

    # -- records ------------------------------------------------------------------------------

    def _check_visual_node(self, node: dict[str, Any], path: str) -> None:
        self._enum(node, "type", path, VISUAL_TYPES)
        self._string(node, "subtype", path)
        self._string(node, "text", path)
        image_id = self._string(node, "image_id", path)
        image_ids = [image.image_id for image in self.context.images]
        if image_id is not None and image_id not in image_ids:
            listed = ", ".join(image_ids) or "none"
            self.add(
                IMAGE_ID_UNKNOWN,
                _join(path, "image_id"),
                f"image_id {image_id!r} is not an image of this problem (images: {listed}).",
            )
        self._bbox(node, path)
        self._keypoints(node, path)
        self._circle(node, path)
        self._enum(node, "confidence", path, CONFIDENCE_LEVELS)

    def _check_physical_node(self, node: dict[str, Any], path: str) -> None:
        self._enum(node, "type", path, PHYSICAL_TYPES)
        for key in ("subtype", "name", "symbol"):
            self._string(node, key, path)
        provenance = self._evidenced(node, path, "visual_anchor_ids", "text_mention_ids")
        self._enum(node, "confidence", path, CONFIDENCE_LEVELS)
        if self.pass_no == 2:
            self._check_pass2_physical_node(node, path, provenance)

    def _check_pass2_physical_node(
        self, node: dict[str, Any], path: str, provenance: list[str] | None
    ) -> None:
        if provenance is not None and provenance != ["IMAGE"]:
            self.add(
                PASS2_PROVENANCE_NOT_IMAGE_ONLY,
                _join(path, "provenance"),
                'Pass 2 physical nodes come from the diagram only: provenance must be exactly ["IMAGE"].',
            )
        anchors = node.get("visual_anchor_ids")
        if isinstance(anchors, list) and not any(isinstance(a, str) for a in anchors):
            self.add(
                PASS2_VISUAL_ANCHOR_MISSING,
                _join(path, "visual_anchor_ids"),
                f"Entity {node.get('id')} is bound to no region: a Pass 2 physical node needs at least one "
                "visual anchor (select a region, then B to bind it).",
            )

    def _check_binding(self, binding: dict[str, Any], path: str) -> None:
        self._enum(binding, "type", path, BINDING_TYPES)
        binding_type = binding.get("type")
        endpoints = BINDING_ENDPOINTS.get(binding_type) if isinstance(binding_type, str) else None
        for key, position in (("from_id", 0), ("to_id", 1)):
            if key not in binding:
                continue
            value = binding[key]
            if endpoints is None:
                self._reference(value, _join(path, key), ("visual", "physical", "mention"))
            elif isinstance(value, str) and _kind_of(value) != endpoints[position]:
                source, target = (KIND_LABELS[kind] for kind in endpoints)
                self.add(
                    BINDING_DIRECTION_INVALID,
                    _join(path, key),
                    f"A {binding_type} binding goes from a {source} to a {target}; "
                    f"{key} {value!r} is not a {KIND_LABELS[endpoints[position]]} id.",
                )
            else:
                self._reference(value, _join(path, key), (endpoints[position],))
        self._evidenced(binding, path, "evidence_visual_ids", "evidence_mention_ids")

    def _check_mention(self, mention: dict[str, Any], path: str) -> None:
        self._enum(mention, "section", path, MENTION_SECTIONS)
        quote = self._string(mention, "quote", path, non_empty=True)
        occurrence = mention.get("occurrence", _MISSING)
        valid_occurrence = _is_int(occurrence) and occurrence >= 1
        if occurrence is not _MISSING and not _is_int(occurrence):
            self.add(TYPE_MISMATCH, _join(path, "occurrence"), "occurrence must be an integer.")
        elif occurrence is not _MISSING and occurrence < 1:
            self.add(
                MENTION_OCCURRENCE_INVALID,
                _join(path, "occurrence"),
                "occurrence counts matches from 1; it must be at least 1.",
            )
        self._enum(mention, "role", path, MENTION_ROLES)
        section = mention.get("section")
        if section in MENTION_SECTIONS and isinstance(quote, str) and quote:
            self._place_mention(path, section, quote, occurrence if valid_occurrence else 1)

    def _place_mention(self, path: str, section: str, quote: str, occurrence: int) -> None:
        """Where the mention sits for the order rule, as the Kit's source validation places it
        (``source_validation._validate_mentions``): the start of its ``occurrence``-th match (the first for
        an invalid occurrence, which is reported on its own), or the end of its section when the quote has
        fewer matches. A quote that does not occur at all is refused; an occurrence past the last match is
        not (the Kit's compiler resolves or blocks it, ``SPAN_REVIEW_REQUIRED``; the workspace asks for the
        repair, ``workspace_checks``)."""
        text = self.context.stem if section == "stem" else self.context.query
        resolution = resolve_span(text, quote, occurrence)
        start = resolution.span[0] if resolution.status == RESOLVED_EXACT and resolution.span else _UNPLACED
        self.mention_positions[path] = (MENTION_SECTIONS.index(section), start)
        if resolution.status == QUOTE_NOT_FOUND:
            self.add(
                MENTION_QUOTE_NOT_FOUND,
                _join(path, "quote"),
                f"The quote {quote!r} does not occur in the {section} text (exact, case-sensitive match).",
            )
        elif resolution.status == UNIQUE_EXACT_REPAIR_PROPOSED:
            self.stricter.append(
                ValidationIssue(
                    MENTION_OCCURRENCE_REPAIR_PROPOSED,
                    _join(path, "occurrence"),
                    f"The quote {quote!r} occurs only once in the {section} text, not {occurrence} times; "
                    "a repair to occurrence 1 is proposed. Set occurrence to 1.",
                )
            )
        elif resolution.status == AMBIGUOUS_OCCURRENCE:
            self.stricter.append(
                ValidationIssue(
                    MENTION_OCCURRENCE_AMBIGUOUS,
                    _join(path, "occurrence"),
                    f"The quote {quote!r} occurs {len(resolution.all_matches)} times in the {section} text, "
                    f"so occurrence {occurrence} does not exist; say which one is meant.",
                )
            )

    def _check_mention_order(self, records: list[tuple[str, dict[str, Any]]]) -> None:
        """Mentions are numbered in textual order: stem before query, then by start offset.

        Each placed mention (``_place_mention``) is compared with the previous one, so one misplaced mention
        gives one issue; a mention whose occurrence is past its quote's last match sits at the end of its
        section, as in the Kit, so a stem mention after it is out of order.
        """
        previous: tuple[tuple[int, int], object] | None = None
        for path, mention in records:
            position = self.mention_positions.get(path)
            if position is None:
                continue
            if previous is not None and position < previous[0]:
                self.add(
                    MENTION_ORDER_INVALID,
                    path,
                    f"Mention {mention.get('id')!r} comes before {previous[1]!r} in the text; number "
                    "mentions in textual order (stem first, then query).",
                )
            previous = (position, mention.get("id"))

    def _check_quantity(self, quantity: dict[str, Any], path: str) -> None:
        self._string(quantity, "kind", path, non_empty=True)
        for key in ("symbol_latex", "value_latex", "unit_latex"):
            self._string(quantity, key, path)
        if isinstance(quantity.get("owner_id", ""), str):
            self._optional_reference(quantity, "owner_id", path, ("physical",))
        else:
            self.add(TYPE_MISMATCH, _join(path, "owner_id"), 'owner_id must be a physical node id or "".')
        self._evidenced(quantity, path, "visual_anchor_ids", "text_mention_ids")

    def _check_constraint(self, constraint: dict[str, Any], path: str) -> None:
        self._string(constraint, "kind", path, non_empty=True)
        self._reference_list(constraint, "subject_ids", path, ("physical",), non_empty=True)
        self._string(constraint, "value_text", path)
        self._evidenced(constraint, path, "evidence_visual_ids", "evidence_mention_ids")

    def _check_relation(self, relation: dict[str, Any], path: str) -> None:
        self._string(relation, "predicate", path, non_empty=True)
        for key in ("subject_id", "object_id"):
            if key in relation:
                self._reference(relation[key], _join(path, key), ("physical",))
        if isinstance(relation.get("quantity_id", ""), str):
            self._optional_reference(relation, "quantity_id", path, ("quantity",))
        else:
            self.add(TYPE_MISMATCH, _join(path, "quantity_id"), 'quantity_id must be a quantity id or "".')
        self._evidenced(relation, path, "evidence_visual_ids", "evidence_mention_ids")
        self._enum(relation, "confidence", path, CONFIDENCE_LEVELS)

    def _check_relation_duplicates(self, records: list[tuple[str, dict[str, Any]]]) -> None:
        first_seen: dict[tuple[str, ...], object] = {}
        for path, relation in records:
            signature = [relation.get(key) for key in ("predicate", "subject_id", "object_id", "quantity_id")]
            if not all(isinstance(part, str) for part in signature):
                continue
            key = tuple(str(part) for part in signature)
            if key in first_seen:
                self.add(
                    RELATION_DUPLICATE,
                    path,
                    f"This relation repeats {first_seen[key]!r} (same predicate, subject, object and quantity).",
                )
            else:
                first_seen[key] = relation.get("id")

    def _check_ambiguity(self, ambiguity: dict[str, Any], path: str) -> None:
        self._string(ambiguity, "scope", path)
        self._string(ambiguity, "description", path, non_empty=True)
        self._reference_list(ambiguity, "candidate_ids", path, EVERY_REFERABLE_KIND)
        self._reference_list(ambiguity, "evidence_visual_ids", path, ("visual",))
        self._reference_list(ambiguity, "evidence_mention_ids", path, ("mention",))

    def _check_solution_step(self, step: dict[str, Any], path: str) -> None:
        self._string(step, "text", path, non_empty=True)
        self._enum(step, "step_type", path, STEP_TYPES)
        self._reference_list(step, "uses_obs_node_ids", path, ("visual", "physical"))
        self._reference_list(step, "uses_obs_quantity_ids", path, ("quantity",))
        self._reference_list(step, "uses_obs_relation_ids", path, ("relation",))
        self._reference_list(step, "uses_obs_constraint_ids", path, ("constraint",))

    def _check_query_target(self, target: object) -> None:
        path = "query_target"
        if not isinstance(target, dict):
            self.add(TYPE_MISMATCH, path, "query_target must be a JSON object.")
            return
        self._check_key_set(target, RECORD_SPECS["query_target"].keys, path, "query_target")
        mention_id = target.get("mention_id", _MISSING)
        if mention_id is not _MISSING and not isinstance(mention_id, str):
            self.add(TYPE_MISMATCH, _join(path, "mention_id"), 'mention_id must be a mention id or "".')
        else:
            self._optional_reference(target, "mention_id", path, ("mention",))
        self._string(target, "target_kind", path, non_empty=True)
        self._string(target, "target_symbol_latex", path)
        for key in ("target_node_ids", "location_node_ids", "time_or_event_node_ids"):
            self._reference_list(target, key, path, ("physical",))
        if isinstance(mention_id, str):
            self._check_query_target_mention(mention_id)

    def _check_query_target_mention(self, mention_id: str) -> None:
        path = "query_target.mention_id"
        if mention_id == "":
            if self.context.query:
                self.add(
                    QUERY_TARGET_MISSING,
                    path,
                    "The problem has a query, so query_target must name the mention of what is asked.",
                )
            return
        mention = next(
            (m for _, m in self.records.get("text_mentions", []) if m.get("id") == mention_id), None
        )
        # A missing section or role is already a KEY_SET_MISMATCH of the mention; don't repeat it here.
        wrong = [
            key
            for key, wanted in (("section", "query"), ("role", "query_target"))
            if mention is not None and mention.get(key, wanted) != wanted
        ]
        if wrong:
            self.add(
                QUERY_TARGET_ROLE_INVALID,
                path,
                f"The query target mention {mention_id} must have section 'query' and role 'query_target'.",
            )

    # -- rules across collections and passes --------------------------------------------------

    def _check_cross_pass_rules(self, document: dict[str, Any]) -> None:
        if self.pass_no == 1:
            self._check_visual_nodes_present(document)
        elif self.pass_no == 3:
            self._check_physical_ids_with_pass2()
        elif self.pass_no == 4:
            self._check_visual_nodes_from_pass1()

    def _check_visual_nodes_present(self, document: dict[str, Any]) -> None:
        if (
            self.context.images
            and isinstance(document.get("visual_nodes"), list)
            and not document["visual_nodes"]
        ):
            self.add(
                VISUAL_NODES_EMPTY,
                "visual_nodes",
                "The problem has images, so Pass 1 needs at least one visual node.",
            )

    def _check_physical_ids_with_pass2(self) -> None:
        if self.context.pass2 is None:
            return
        pattern = ID_PATTERNS["physical"]
        earlier = _ids_in_document(self.context.pass2, "physical")
        own = self._own("new_or_updated_physical_nodes").ids
        together = {value for value in earlier | own if pattern.fullmatch(value)}
        expected = {f"p{number:03d}" for number in range(1, len(together) + 1)}
        if together != expected:
            found = ", ".join(sorted(together, key=lambda v: (len(v), v)))
            self.add(
                ID_NOT_CONTIGUOUS,
                "new_or_updated_physical_nodes",
                f"Physical node ids of Pass 2 and Pass 3 together must be p001…p{len(together):03d} "
                f"without gaps; found {found}.",
            )

    def _check_visual_nodes_from_pass1(self) -> None:
        if self.context.pass1 is None:
            return
        originals: dict[str, dict[str, Any]] = {}
        for node in _records_of(self.context.pass1, "visual_nodes"):
            if isinstance(node.get("id"), str):
                originals.setdefault(node["id"], node)
        for path, node in self.records.get("visual_nodes", []):
            node_id = node.get("id")
            original = originals.get(node_id) if isinstance(node_id, str) else None
            if original is None:
                self.add(
                    PASS4_VISUAL_NODE_ADDED,
                    path,
                    f"Visual node {node_id!r} is not in Pass 1; Pass 4 may only keep Pass 1 visual nodes.",
                )
            elif node != original:
                changed = sorted(
                    str(k)
                    for k in set(node) | set(original)
                    if node.get(k, _MISSING) != original.get(k, _MISSING)
                )
                self.add(
                    PASS4_VISUAL_NODE_MODIFIED,
                    path,
                    f"Visual node {node_id} differs from Pass 1 in {', '.join(changed)}; Pass 4 must copy "
                    "Pass 1 visual nodes unchanged.",
                )
