"""Pass-document validation, Passes 1–5 (Kit §2.4), on a block-on-an-incline problem.

Each failing case starts from a valid document, changes one thing, and asserts the exact list of
(code, path) issues that change must produce.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from kit.passes import ISSUE_CODES, ImageRef, PassContext, ValidationIssue, validate_pass_document

PROBLEM_ID = "demo_incline_0001"
STEM = "A block of mass m rests on an incline of angle θ. A force F pulls the block up the incline."
QUERY = "Find the friction force on the block."
NO_GEOMETRY = {"keypoints_1000": [], "center_1000": [-1, -1], "radius_1000": -1}


def visual(vid: str, vtype: str, bbox: list[int], *, subtype: str = "", text: str = "", **extra: Any) -> dict:
    node = {
        "id": vid,
        "type": vtype,
        "subtype": subtype,
        "text": text,
        "image_id": "img_0",
        "bbox_1000": bbox,
    }
    return node | NO_GEOMETRY | {"confidence": "high"} | extra


def physical(pid: str, ptype: str, name: str, anchors: list[str], mentions: list[str], **extra: Any) -> dict:
    provenance = (["IMAGE"] if anchors else []) + (["TEXT"] if mentions else [])
    node = {
        "id": pid,
        "type": ptype,
        "subtype": "",
        "name": name,
        "symbol": "",
        "visual_anchor_ids": anchors,
        "text_mention_ids": mentions,
        "provenance": provenance,
        "confidence": "high",
    }
    return node | extra


def binding(bid: str, btype: str, source: str, target: str) -> dict:
    from_image = source.startswith("v")
    return {
        "id": bid,
        "type": btype,
        "from_id": source,
        "to_id": target,
        "provenance": ["IMAGE"] if from_image else ["TEXT"],
        "evidence_visual_ids": [source] if from_image else [],
        "evidence_mention_ids": [] if from_image else [source],
    }


def mention(mid: str, section: str, quote: str, role: str, occurrence: int = 1) -> dict:
    return {"id": mid, "section": section, "quote": quote, "occurrence": occurrence, "role": role}


def quantity(qid: str, kind: str, symbol: str, owner: str, anchors: list[str], mentions: list[str]) -> dict:
    provenance = (["IMAGE"] if anchors else []) + (["TEXT"] if mentions else [])
    return {
        "id": qid,
        "kind": kind,
        "symbol_latex": symbol,
        "value_latex": "",
        "unit_latex": "",
        "owner_id": owner,
        "visual_anchor_ids": anchors,
        "text_mention_ids": mentions,
        "provenance": provenance,
    }


def pass1_doc() -> dict:
    return {
        "problem_id": PROBLEM_ID,
        "visual_nodes": [
            visual("v001", "object_shape", [300, 250, 450, 380], subtype="block"),
            visual(
                "v002",
                "line_segment",
                [100, 200, 900, 800],
                subtype="incline_surface",
                keypoints_1000=[[100, 800], [900, 200]],
            ),
            visual("v003", "text_glyph", [355, 290, 385, 330], text="m"),
            visual(
                "v004",
                "arc",
                [100, 720, 180, 800],
                subtype="angle_arc",
                center_1000=[100, 800],
                radius_1000=80,
                confidence="medium",
            ),
            visual("v005", "text_glyph", [190, 740, 220, 780], text="θ"),
            visual("v006", "arrow", [450, 200, 600, 300], keypoints_1000=[[450, 300], [600, 200]]),
            visual("v007", "text_glyph", [610, 170, 640, 210], text="F"),
        ],
        "ambiguities": [
            {
                "id": "u001",
                "scope": "visual",
                "description": "The arc at the foot of the incline might be decoration rather than the angle mark.",
                "candidate_ids": ["v004"],
                "evidence_visual_ids": ["v004", "v005"],
                "evidence_mention_ids": [],
            },
        ],
    }


def pass2_doc() -> dict:
    return {
        "problem_id": PROBLEM_ID,
        "physical_nodes": [
            physical("p001", "body", "block", ["v001"], []),
            physical("p002", "inclined_plane", "incline", ["v002", "v004"], []),
            physical("p003", "force", "pulling force", ["v006"], [], symbol="F"),
        ],
        "bindings": [
            binding("b001", "represents", "v001", "p001"),
            binding("b002", "represents", "v002", "p002"),
            binding("b003", "represents", "v006", "p003"),
            binding("b004", "labels", "v007", "p003"),
        ],
        "ambiguities": [],
    }


def mentions() -> list[dict]:
    return [
        mention("m001", "stem", "block", "entity"),
        mention("m002", "stem", "mass m", "quantity"),
        mention("m003", "stem", "rests", "constraint"),
        mention("m004", "stem", "incline", "entity"),
        mention("m005", "stem", "angle θ", "quantity"),
        mention("m006", "stem", "force F", "entity"),
        mention("m007", "query", "friction force", "query_target"),
    ]


def graded_physical_nodes() -> list[dict]:
    return [
        physical("p001", "body", "block", ["v001"], ["m001"]),
        physical("p002", "inclined_plane", "incline", ["v002", "v004"], ["m004"]),
        physical("p003", "force", "pulling force", ["v006"], ["m006"], symbol="F"),
        physical("p004", "force", "friction", [], ["m007"], symbol="f", confidence="medium"),
    ]


def quantities() -> list[dict]:
    return [
        quantity("q001", "mass", "m", "p001", ["v003"], ["m002"]),
        quantity("q002", "angle", "\\theta", "p002", ["v005"], ["m005"]),
        quantity("q003", "force_magnitude", "F", "p003", ["v007"], ["m006"]),
    ]


def constraints() -> list[dict]:
    return [
        {
            "id": "c001",
            "kind": "static_equilibrium",
            "subject_ids": ["p001"],
            "value_text": "at rest",
            "provenance": ["TEXT"],
            "evidence_visual_ids": [],
            "evidence_mention_ids": ["m003"],
        }
    ]


def query_target() -> dict:
    return {
        "mention_id": "m007",
        "target_kind": "force_magnitude",
        "target_symbol_latex": "f",
        "target_node_ids": ["p004"],
        "location_node_ids": [],
        "time_or_event_node_ids": [],
    }


def pass3_doc() -> dict:
    return {
        "problem_id": PROBLEM_ID,
        "new_or_updated_physical_nodes": graded_physical_nodes(),
        "text_mentions": mentions(),
        "quantities": quantities(),
        "bindings": [
            binding("b001", "refers_to", "m001", "p001"),
            binding("b002", "refers_to", "m004", "p002"),
            binding("b003", "refers_to", "m006", "p003"),
            binding("b004", "refers_to", "m007", "p004"),
        ],
        "constraints": constraints(),
        "query_target": query_target(),
        "ambiguities": [],
    }


def pass4_doc() -> dict:
    pass2_bindings = pass2_doc()["bindings"]
    pass3_bindings = pass3_doc()["bindings"]
    for number, record in enumerate(pass2_bindings + pass3_bindings, start=1):
        record["id"] = f"b{number:03d}"
    return {
        "schema_version": "physgraph_obs_v0.1",
        "problem_id": PROBLEM_ID,
        "domain": "mechanics",
        "visual_nodes": pass1_doc()["visual_nodes"],
        "physical_nodes": graded_physical_nodes(),
        "text_mentions": mentions(),
        "quantities": quantities(),
        "bindings": pass2_bindings + pass3_bindings,
        "relations": [
            {
                "id": "r001",
                "predicate": "rests_on",
                "subject_id": "p001",
                "object_id": "p002",
                "quantity_id": "",
                "provenance": ["IMAGE", "TEXT"],
                "evidence_visual_ids": ["v001", "v002"],
                "evidence_mention_ids": ["m003"],
                "confidence": "high",
            },
            {
                "id": "r002",
                "predicate": "acts_on",
                "subject_id": "p003",
                "object_id": "p001",
                "quantity_id": "q003",
                "provenance": ["IMAGE"],
                "evidence_visual_ids": ["v006"],
                "evidence_mention_ids": [],
                "confidence": "high",
            },
        ],
        "constraints": constraints(),
        "query_target": query_target(),
        "ambiguities": [
            {
                "id": "u001",
                "scope": "identity",
                "description": "The text does not say whether F is the only applied force besides gravity.",
                "candidate_ids": ["p003"],
                "evidence_visual_ids": ["v006"],
                "evidence_mention_ids": ["m006"],
            },
        ],
    }


def step(
    sid: str, stype: str, text: str, nodes: list[str], qs: list[str], rs: list[str], cs: list[str]
) -> dict:
    return {
        "step_id": sid,
        "text": text,
        "step_type": stype,
        "uses_obs_node_ids": nodes,
        "uses_obs_quantity_ids": qs,
        "uses_obs_relation_ids": rs,
        "uses_obs_constraint_ids": cs,
    }


def pass5_doc() -> dict:
    return {
        "problem_id": PROBLEM_ID,
        "solution_steps": [
            step(
                "s001",
                "read_given",
                "The block of mass m rests on the incline of angle θ.",
                ["p001", "p002"],
                ["q001", "q002"],
                ["r001"],
                ["c001"],
            ),
            step(
                "s002",
                "select_law",
                "At rest, the net force along the incline is zero.",
                ["p001"],
                [],
                [],
                ["c001"],
            ),
            step(
                "s003",
                "form_equation",
                "F + f − m g sin θ = 0 along the incline.",
                ["p003", "p004"],
                ["q001", "q002", "q003"],
                ["r002"],
                [],
            ),
            step("s004", "conclude", "Solve for f.", ["p004"], [], [], []),
        ],
        "final_answer": "f = m g sin θ − F",
    }


DOCUMENTS: dict[int, Callable[[], dict]] = {
    1: pass1_doc,
    2: pass2_doc,
    3: pass3_doc,
    4: pass4_doc,
    5: pass5_doc,
}


def full_context() -> PassContext:
    return PassContext(
        problem_id=PROBLEM_ID,
        stem=STEM,
        query=QUERY,
        images=(ImageRef("img_0", 800, 600),),
        pass1=pass1_doc(),
        pass2=pass2_doc(),
        pass3=pass3_doc(),
        pass4=pass4_doc(),
    )


def codes_and_paths(issues: list[ValidationIssue]) -> list[tuple[str, str]]:
    return [(issue.code, issue.path) for issue in issues]


# --------------------------------------------------------------------------------------------
# Valid documents
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4, 5])
def test_valid_document_has_no_issues(pass_no):
    assert validate_pass_document(pass_no, DOCUMENTS[pass_no](), full_context()) == []


@pytest.mark.parametrize("pass_no", [2, 3, 5])
def test_valid_document_without_earlier_passes_has_no_issues(pass_no):
    context = PassContext(
        problem_id=PROBLEM_ID, stem=STEM, query=QUERY, images=(ImageRef("img_0", 800, 600),)
    )

    assert validate_pass_document(pass_no, DOCUMENTS[pass_no](), context) == []


def test_references_into_an_unknown_earlier_pass_are_not_reported():
    document = pass2_doc()
    document["physical_nodes"][0]["visual_anchor_ids"] = ["v099"]

    assert validate_pass_document(2, document, replace(full_context(), pass1=None)) == []


def test_pass1_without_images_may_be_empty():
    context = PassContext(problem_id=PROBLEM_ID, stem=STEM, query=QUERY)
    document = {"problem_id": PROBLEM_ID, "visual_nodes": [], "ambiguities": []}

    assert validate_pass_document(1, document, context) == []


def test_pass3_without_query_needs_no_query_target():
    context = PassContext(problem_id=PROBLEM_ID, stem=STEM, query="")
    empty_target = query_target() | {"mention_id": "", "target_node_ids": []}
    document = {
        "problem_id": PROBLEM_ID,
        "new_or_updated_physical_nodes": [],
        "text_mentions": [],
        "quantities": [],
        "bindings": [],
        "constraints": [],
        "query_target": empty_target,
        "ambiguities": [],
    }

    assert validate_pass_document(3, document, context) == []
    assert codes_and_paths(validate_pass_document(3, document, replace(context, query=QUERY))) == [
        ("QUERY_TARGET_MISSING", "query_target.mention_id")
    ]


def test_pass4_may_drop_a_duplicate_visual_node_of_pass1():
    pass1 = pass1_doc()
    pass1["visual_nodes"].append(pass1["visual_nodes"][6] | {"id": "v008"})

    assert validate_pass_document(4, pass4_doc(), replace(full_context(), pass1=pass1)) == []


def test_unresolved_quantity_owner_and_other_kind_are_valid():
    document = pass3_doc()
    document["quantities"][0]["owner_id"] = ""
    document["quantities"][0]["kind"] = "other"

    assert validate_pass_document(3, document, full_context()) == []


# --------------------------------------------------------------------------------------------
# One failing case per rule
# --------------------------------------------------------------------------------------------

Mutation = Callable[[dict], object]


def case(
    name: str,
    pass_no: int,
    mutate: Mutation,
    *expected: tuple[str, str],
    context: Callable[[PassContext], PassContext] | None = None,
) -> Any:
    return pytest.param(pass_no, mutate, list(expected), context, id=name)


def setter(path: str, value: object) -> Mutation:
    """A mutation that sets a dotted path like ``visual_nodes.0.bbox_1000``."""
    *parents, last = path.split(".")

    def mutate(document: dict) -> None:
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = copy.deepcopy(value)
        else:
            target[last] = copy.deepcopy(value)

    return mutate


def deleter(path: str) -> Mutation:
    *parents, last = path.split(".")

    def mutate(document: dict) -> None:
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        del target[int(last) if isinstance(target, list) else last]

    return mutate


def appender(path: str, make: Callable[[dict], object]) -> Mutation:
    def mutate(document: dict) -> None:
        target: Any = document
        for part in path.split("."):
            target = target[int(part)] if isinstance(target, list) else target[part]
        target.append(make(document))

    return mutate


def swap_mentions(first: int, second: int) -> Mutation:
    def mutate(document: dict) -> None:
        a, b = document["text_mentions"][first], document["text_mentions"][second]
        for key in ("section", "quote", "role", "occurrence"):
            a[key], b[key] = b[key], a[key]

    return mutate


def rename_everywhere(old: str, new: str) -> Mutation:
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: walk(child) for key, child in value.items()}
        if isinstance(value, list):
            return [walk(child) for child in value]
        return new if value == old else value

    def mutate(document: dict) -> None:
        document.update(walk(document))

    return mutate


FAILING_CASES = [
    # Top level, key sets and problem_id
    case("missing-top-level-key", 1, deleter("ambiguities"), ("KEY_SET_MISMATCH", "")),
    case("extra-top-level-key", 2, setter("notes", "x"), ("KEY_SET_MISMATCH", "")),
    case(
        "problem-id-mismatch", 1, setter("problem_id", "other_problem"), ("PROBLEM_ID_MISMATCH", "problem_id")
    ),
    case(
        "visual-node-extra-key",
        1,
        setter("visual_nodes.0.label", "block"),
        ("KEY_SET_MISMATCH", "visual_nodes[0]"),
    ),
    case(
        "visual-node-missing-key",
        1,
        deleter("visual_nodes.1.subtype"),
        ("KEY_SET_MISMATCH", "visual_nodes[1]"),
    ),
    case(
        "physical-node-missing-key",
        2,
        deleter("physical_nodes.2.symbol"),
        ("KEY_SET_MISMATCH", "physical_nodes[2]"),
    ),
    case("binding-extra-key", 2, setter("bindings.0.note", ""), ("KEY_SET_MISMATCH", "bindings[0]")),
    case("mention-missing-key", 3, deleter("text_mentions.6.role"), ("KEY_SET_MISMATCH", "text_mentions[6]")),
    case("quantity-extra-key", 3, setter("quantities.0.value", "2"), ("KEY_SET_MISMATCH", "quantities[0]")),
    case(
        "constraint-missing-key",
        3,
        deleter("constraints.0.value_text"),
        ("KEY_SET_MISMATCH", "constraints[0]"),
    ),
    case(
        "query-target-missing-key",
        3,
        deleter("query_target.location_node_ids"),
        ("KEY_SET_MISMATCH", "query_target"),
    ),
    case("relation-missing-key", 4, deleter("relations.0.confidence"), ("KEY_SET_MISMATCH", "relations[0]")),
    case("ambiguity-missing-key", 4, deleter("ambiguities.0.scope"), ("KEY_SET_MISMATCH", "ambiguities[0]")),
    case(
        "step-extra-key", 5, setter("solution_steps.0.id", "s001"), ("KEY_SET_MISMATCH", "solution_steps[0]")
    ),
    # Types
    case("collection-not-a-list", 2, setter("bindings", "none"), ("TYPE_MISMATCH", "bindings")),
    case(
        "record-not-an-object",
        2,
        appender("physical_nodes", lambda d: 7),
        ("TYPE_MISMATCH", "physical_nodes[3]"),
    ),
    case(
        "string-field-not-a-string",
        1,
        setter("visual_nodes.0.subtype", 5),
        ("TYPE_MISMATCH", "visual_nodes[0].subtype"),
    ),
    case(
        "image-id-not-a-string",
        1,
        setter("visual_nodes.0.image_id", 0),
        ("TYPE_MISMATCH", "visual_nodes[0].image_id"),
    ),
    case(
        "occurrence-is-a-bool",
        3,
        setter("text_mentions.0.occurrence", True),
        ("TYPE_MISMATCH", "text_mentions[0].occurrence"),
    ),
    case(
        "occurrence-is-a-string",
        3,
        setter("text_mentions.0.occurrence", "1"),
        ("TYPE_MISMATCH", "text_mentions[0].occurrence"),
    ),
    case(
        "id-list-not-a-list",
        4,
        setter("quantities.2.visual_anchor_ids", "v007"),
        ("TYPE_MISMATCH", "quantities[2].visual_anchor_ids"),
    ),
    case(
        "id-list-item-not-a-string",
        4,
        setter("constraints.0.subject_ids", [1]),
        ("TYPE_MISMATCH", "constraints[0].subject_ids[0]"),
    ),
    case(
        "owner-id-not-a-string",
        3,
        setter("quantities.0.owner_id", None),
        ("TYPE_MISMATCH", "quantities[0].owner_id"),
    ),
    case(
        "quantity-id-not-a-string",
        4,
        setter("relations.1.quantity_id", 3),
        ("TYPE_MISMATCH", "relations[1].quantity_id"),
    ),
    case("query-target-not-an-object", 3, setter("query_target", []), ("TYPE_MISMATCH", "query_target")),
    case("final-answer-not-a-string", 5, setter("final_answer", 42), ("TYPE_MISMATCH", "final_answer")),
    case(
        "provenance-not-a-list",
        4,
        setter("quantities.2.provenance", "IMAGE"),
        ("TYPE_MISMATCH", "quantities[2].provenance"),
    ),
    # Forbidden keys
    case(
        "forbidden-key-nested",
        1,
        setter("visual_nodes.0.Answer", "x"),
        ("FORBIDDEN_KEY", "visual_nodes[0].Answer"),
        ("KEY_SET_MISMATCH", "visual_nodes[0]"),
    ),
    case(
        "forbidden-key-deep-in-a-list",
        1,
        setter("visual_nodes.0.subtype", [{"reasoning": "x"}]),
        ("FORBIDDEN_KEY", "visual_nodes[0].subtype[0].reasoning"),
        ("TYPE_MISMATCH", "visual_nodes[0].subtype"),
    ),
    case(
        "final-answer-forbidden-before-pass5",
        4,
        setter("final_answer", "f = 0"),
        ("FORBIDDEN_KEY", "final_answer"),
        ("KEY_SET_MISMATCH", ""),
    ),
    case(
        "standard-solution-forbidden",
        3,
        setter("STANDARD_SOLUTION", ""),
        ("FORBIDDEN_KEY", "STANDARD_SOLUTION"),
        ("KEY_SET_MISMATCH", ""),
    ),
    case(
        "final-answer-only-allowed-top-level-in-pass5",
        5,
        setter("solution_steps.3.final_answer", "f"),
        ("FORBIDDEN_KEY", "solution_steps[3].final_answer"),
        ("KEY_SET_MISMATCH", "solution_steps[3]"),
    ),
    case(
        "pass5-final-answer-other-spelling",
        5,
        setter("Final_Answer", "f"),
        ("FORBIDDEN_KEY", "Final_Answer"),
        ("KEY_SET_MISMATCH", ""),
    ),
    # IDs
    case("id-uppercase-prefix", 1, setter("visual_nodes.2.id", "V003"), ("ID_INVALID", "visual_nodes[2].id")),
    case("id-too-few-digits", 2, setter("bindings.1.id", "b02"), ("ID_INVALID", "bindings[1].id")),
    case("id-non-ascii-digits", 3, setter("quantities.1.id", "q٠٠٢"), ("ID_INVALID", "quantities[1].id")),
    case("id-wrong-prefix", 4, setter("relations.0.id", "q001"), ("ID_INVALID", "relations[0].id")),
    case(
        "step-id-invalid",
        5,
        setter("solution_steps.0.step_id", "s1"),
        ("ID_INVALID", "solution_steps[0].step_id"),
    ),
    case("id-duplicate", 1, setter("visual_nodes.2.id", "v002"), ("ID_DUPLICATE", "visual_nodes[2].id")),
    case("id-gap", 1, deleter("visual_nodes.1"), ("ID_NOT_CONTIGUOUS", "visual_nodes")),
    case("id-out-of-order", 2, setter("bindings.0.id", "b005"), ("ID_NOT_CONTIGUOUS", "bindings")),
    case(
        "step-id-gap", 5, setter("solution_steps.1.step_id", "s005"), ("ID_NOT_CONTIGUOUS", "solution_steps")
    ),
    case(
        "pass2-and-pass3-physical-ids-not-contiguous",
        3,
        rename_everywhere("p004", "p005"),
        ("ID_NOT_CONTIGUOUS", "new_or_updated_physical_nodes"),
    ),
    case(
        "id-list-duplicate",
        2,
        setter("physical_nodes.1.visual_anchor_ids", ["v002", "v002"]),
        ("ID_LIST_DUPLICATE", "physical_nodes[1].visual_anchor_ids[1]"),
    ),
    # Enums
    case("visual-type", 1, setter("visual_nodes.5.type", "Arrow"), ("ENUM_INVALID", "visual_nodes[5].type")),
    case(
        "visual-confidence",
        1,
        setter("visual_nodes.0.confidence", "certain"),
        ("ENUM_INVALID", "visual_nodes[0].confidence"),
    ),
    case(
        "physical-type",
        2,
        setter("physical_nodes.0.type", "block"),
        ("ENUM_INVALID", "physical_nodes[0].type"),
    ),
    case("binding-type", 2, setter("bindings.0.type", "names"), ("ENUM_INVALID", "bindings[0].type")),
    case(
        "mention-section",
        3,
        setter("text_mentions.0.section", "title"),
        ("ENUM_INVALID", "text_mentions[0].section"),
    ),
    case(
        "mention-role", 3, setter("text_mentions.0.role", "object"), ("ENUM_INVALID", "text_mentions[0].role")
    ),
    case(
        "relation-confidence",
        4,
        setter("relations.0.confidence", None),
        ("ENUM_INVALID", "relations[0].confidence"),
    ),
    case(
        "schema-version",
        4,
        setter("schema_version", "physgraph_obs_v0.2"),
        ("ENUM_INVALID", "schema_version"),
    ),
    case("domain", 4, setter("domain", "optics"), ("ENUM_INVALID", "domain")),
    case(
        "step-type",
        5,
        setter("solution_steps.0.step_type", "guess"),
        ("ENUM_INVALID", "solution_steps[0].step_type"),
    ),
    # Geometry
    case(
        "bbox-three-numbers",
        1,
        setter("visual_nodes.0.bbox_1000", [1, 2, 3]),
        ("BBOX_INVALID", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "bbox-bool",
        1,
        setter("visual_nodes.0.bbox_1000", [1, 2, 3, True]),
        ("BBOX_INVALID", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "bbox-float",
        1,
        setter("visual_nodes.0.bbox_1000", [300.0, 250, 450, 380]),
        ("BBOX_INVALID", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "bbox-above-1000",
        1,
        setter("visual_nodes.0.bbox_1000", [300, 250, 1001, 380]),
        ("BBOX_OUT_OF_RANGE", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "bbox-negative",
        4,
        setter("visual_nodes.0.bbox_1000", [-1, 250, 450, 380]),
        ("BBOX_OUT_OF_RANGE", "visual_nodes[0].bbox_1000"),
        ("PASS4_VISUAL_NODE_MODIFIED", "visual_nodes[0]"),
    ),
    case(
        "bbox-x-order",
        1,
        setter("visual_nodes.0.bbox_1000", [450, 250, 300, 380]),
        ("BBOX_ORDER_INVALID", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "bbox-y-order",
        1,
        setter("visual_nodes.0.bbox_1000", [300, 380, 450, 250]),
        ("BBOX_ORDER_INVALID", "visual_nodes[0].bbox_1000"),
    ),
    case(
        "keypoints-not-a-list",
        1,
        setter("visual_nodes.1.keypoints_1000", "x"),
        ("KEYPOINTS_INVALID", "visual_nodes[1].keypoints_1000"),
    ),
    case(
        "keypoint-triple",
        1,
        setter("visual_nodes.1.keypoints_1000", [[100, 800], [900, 200, 1]]),
        ("KEYPOINTS_INVALID", "visual_nodes[1].keypoints_1000[1]"),
    ),
    case(
        "keypoint-bool",
        1,
        setter("visual_nodes.1.keypoints_1000", [[True, 800]]),
        ("KEYPOINTS_INVALID", "visual_nodes[1].keypoints_1000[0]"),
    ),
    case(
        "keypoint-negative",
        1,
        setter("visual_nodes.1.keypoints_1000", [[100, 800], [900, -1]]),
        ("KEYPOINTS_OUT_OF_RANGE", "visual_nodes[1].keypoints_1000[1]"),
    ),
    case(
        "center-one-number",
        1,
        setter("visual_nodes.3.center_1000", [100]),
        ("CENTER_INVALID", "visual_nodes[3].center_1000"),
    ),
    case(
        "center-below-minus-one",
        1,
        setter("visual_nodes.3.center_1000", [-2, 800]),
        ("CENTER_OUT_OF_RANGE", "visual_nodes[3].center_1000"),
    ),
    case(
        "radius-float",
        1,
        setter("visual_nodes.3.radius_1000", 80.0),
        ("RADIUS_INVALID", "visual_nodes[3].radius_1000"),
    ),
    case(
        "radius-bool",
        1,
        setter("visual_nodes.3.radius_1000", False),
        ("RADIUS_INVALID", "visual_nodes[3].radius_1000"),
    ),
    case(
        "radius-above-1000",
        1,
        setter("visual_nodes.3.radius_1000", 1001),
        ("RADIUS_OUT_OF_RANGE", "visual_nodes[3].radius_1000"),
    ),
    case(
        "radius-below-minus-one",
        1,
        setter("visual_nodes.3.radius_1000", -2),
        ("RADIUS_OUT_OF_RANGE", "visual_nodes[3].radius_1000"),
    ),
    case(
        "image-id-unknown",
        1,
        setter("visual_nodes.0.image_id", "img_9"),
        ("IMAGE_ID_UNKNOWN", "visual_nodes[0].image_id"),
    ),
    case(
        "no-visual-nodes-with-images",
        1,
        lambda d: d.update(visual_nodes=[], ambiguities=[]),
        ("VISUAL_NODES_EMPTY", "visual_nodes"),
    ),
    # Provenance and evidence
    case(
        "provenance-empty",
        3,
        setter("quantities.0.provenance", []),
        ("PROVENANCE_INVALID", "quantities[0].provenance"),
        ("PROVENANCE_EVIDENCE_MISMATCH", "quantities[0].provenance"),
        ("PROVENANCE_EVIDENCE_MISMATCH", "quantities[0].provenance"),
    ),
    case(
        "provenance-duplicate",
        3,
        setter("quantities.0.provenance", ["IMAGE", "IMAGE", "TEXT"]),
        ("PROVENANCE_INVALID", "quantities[0].provenance[1]"),
    ),
    case(
        "provenance-unknown-value",
        4,
        setter("relations.0.provenance", ["IMAGE", "TEXT", "AUDIO"]),
        ("PROVENANCE_INVALID", "relations[0].provenance[2]"),
    ),
    case(
        "text-provenance-without-mentions",
        3,
        setter("quantities.2.text_mention_ids", []),
        ("PROVENANCE_EVIDENCE_MISMATCH", "quantities[2].provenance"),
    ),
    case(
        "image-provenance-without-visual-evidence",
        4,
        setter("relations.1.evidence_visual_ids", []),
        ("PROVENANCE_EVIDENCE_MISMATCH", "relations[1].provenance"),
    ),
    case(
        "visual-evidence-without-image-provenance",
        3,
        setter("constraints.0.evidence_visual_ids", ["v001"]),
        ("PROVENANCE_EVIDENCE_MISMATCH", "constraints[0].provenance"),
    ),
    case(
        "mention-evidence-without-text-provenance",
        4,
        setter("bindings.0.evidence_mention_ids", ["m001"]),
        ("PROVENANCE_EVIDENCE_MISMATCH", "bindings[0].provenance"),
    ),
    case(
        "physical-anchor-without-image-provenance",
        4,
        setter("physical_nodes.3.visual_anchor_ids", ["v001"]),
        ("PROVENANCE_EVIDENCE_MISMATCH", "physical_nodes[3].provenance"),
    ),
    case(
        "pass2-provenance-with-text",
        2,
        setter("physical_nodes.0.provenance", ["IMAGE", "TEXT"]),
        ("PROVENANCE_EVIDENCE_MISMATCH", "physical_nodes[0].provenance"),
        ("PASS2_PROVENANCE_NOT_IMAGE_ONLY", "physical_nodes[0].provenance"),
    ),
    case(
        "pass2-without-visual-anchor",
        2,
        setter("physical_nodes.0.visual_anchor_ids", []),
        ("PROVENANCE_EVIDENCE_MISMATCH", "physical_nodes[0].provenance"),
        ("PASS2_VISUAL_ANCHOR_MISSING", "physical_nodes[0].visual_anchor_ids"),
    ),
    # Bindings
    case(
        "represents-reversed",
        2,
        lambda d: d["bindings"][0].update(from_id="p001", to_id="v001"),
        ("BINDING_DIRECTION_INVALID", "bindings[0].from_id"),
        ("BINDING_DIRECTION_INVALID", "bindings[0].to_id"),
    ),
    case(
        "refers-to-from-a-visual-node",
        3,
        setter("bindings.0.from_id", "v001"),
        ("BINDING_DIRECTION_INVALID", "bindings[0].from_id"),
    ),
    case(
        "refers-to-a-visual-node",
        3,
        setter("bindings.0.to_id", "v001"),
        ("BINDING_DIRECTION_INVALID", "bindings[0].to_id"),
    ),
    case(
        "same-entity-as-from-a-visual-node",
        2,
        lambda d: d["bindings"][0].update(type="same_entity_as"),
        ("BINDING_DIRECTION_INVALID", "bindings[0].from_id"),
    ),
    case(
        "refers-to-in-pass2-has-no-mention",
        2,
        lambda d: d["bindings"][0].update(
            type="refers_to",
            from_id="m001",
            provenance=["TEXT"],
            evidence_visual_ids=[],
            evidence_mention_ids=["m001"],
        ),
        ("REFERENCE_UNKNOWN", "bindings[0].from_id"),
        ("REFERENCE_UNKNOWN", "bindings[0].evidence_mention_ids[0]"),
    ),
    # References
    case(
        "pass2-anchor-not-in-pass1",
        2,
        setter("physical_nodes.0.visual_anchor_ids", ["v099"]),
        ("REFERENCE_UNKNOWN", "physical_nodes[0].visual_anchor_ids[0]"),
    ),
    case(
        "pass2-anchor-of-wrong-kind-without-pass1",
        2,
        setter("physical_nodes.0.visual_anchor_ids", ["p001"]),
        ("REFERENCE_UNKNOWN", "physical_nodes[0].visual_anchor_ids[0]"),
        context=lambda c: replace(c, pass1=None),
    ),
    case(
        "binding-to-unknown-physical",
        2,
        setter("bindings.3.to_id", "p009"),
        ("REFERENCE_UNKNOWN", "bindings[3].to_id"),
    ),
    case(
        "quantity-owner-unknown",
        3,
        setter("quantities.0.owner_id", "p099"),
        ("REFERENCE_UNKNOWN", "quantities[0].owner_id"),
    ),
    case(
        "quantity-owner-is-a-visual-node",
        4,
        setter("quantities.0.owner_id", "v001"),
        ("REFERENCE_UNKNOWN", "quantities[0].owner_id"),
    ),
    case(
        "constraint-subjects-empty",
        3,
        setter("constraints.0.subject_ids", []),
        ("VALUE_EMPTY", "constraints[0].subject_ids"),
    ),
    case(
        "constraint-subject-not-physical",
        4,
        setter("constraints.0.subject_ids", ["v001"]),
        ("REFERENCE_UNKNOWN", "constraints[0].subject_ids[0]"),
    ),
    case(
        "relation-subject-not-physical",
        4,
        setter("relations.0.subject_id", "v001"),
        ("REFERENCE_UNKNOWN", "relations[0].subject_id"),
    ),
    case(
        "relation-object-missing",
        4,
        setter("relations.0.object_id", "p010"),
        ("REFERENCE_UNKNOWN", "relations[0].object_id"),
    ),
    case(
        "relation-quantity-unknown",
        4,
        setter("relations.1.quantity_id", "q099"),
        ("REFERENCE_UNKNOWN", "relations[1].quantity_id"),
    ),
    case(
        "ambiguity-candidate-unknown",
        4,
        setter("ambiguities.0.candidate_ids", ["x1"]),
        ("REFERENCE_UNKNOWN", "ambiguities[0].candidate_ids[0]"),
    ),
    case(
        "pass1-ambiguity-candidate-not-visual",
        1,
        setter("ambiguities.0.candidate_ids", ["q001"]),
        ("REFERENCE_UNKNOWN", "ambiguities[0].candidate_ids[0]"),
    ),
    case(
        "ambiguity-evidence-mention-unknown",
        4,
        setter("ambiguities.0.evidence_mention_ids", ["m042"]),
        ("REFERENCE_UNKNOWN", "ambiguities[0].evidence_mention_ids[0]"),
    ),
    case(
        "pass3-visual-anchor-not-in-pass1",
        3,
        setter("quantities.0.visual_anchor_ids", ["v042"]),
        ("REFERENCE_UNKNOWN", "quantities[0].visual_anchor_ids[0]"),
    ),
    case(
        "query-target-mention-unknown",
        3,
        setter("query_target.mention_id", "m099"),
        ("REFERENCE_UNKNOWN", "query_target.mention_id"),
    ),
    case(
        "query-target-node-not-physical",
        4,
        setter("query_target.target_node_ids", ["q001"]),
        ("REFERENCE_UNKNOWN", "query_target.target_node_ids[0]"),
    ),
    case(
        "step-quantity-unknown",
        5,
        setter("solution_steps.0.uses_obs_quantity_ids", ["q009"]),
        ("REFERENCE_UNKNOWN", "solution_steps[0].uses_obs_quantity_ids[0]"),
    ),
    case(
        "step-node-is-a-mention",
        5,
        setter("solution_steps.0.uses_obs_node_ids", ["m001"]),
        ("REFERENCE_UNKNOWN", "solution_steps[0].uses_obs_node_ids[0]"),
    ),
    case(
        "step-relation-unknown",
        5,
        setter("solution_steps.2.uses_obs_relation_ids", ["r003"]),
        ("REFERENCE_UNKNOWN", "solution_steps[2].uses_obs_relation_ids[0]"),
    ),
    case(
        "step-constraint-unknown",
        5,
        setter("solution_steps.1.uses_obs_constraint_ids", ["c002"]),
        ("REFERENCE_UNKNOWN", "solution_steps[1].uses_obs_constraint_ids[0]"),
    ),
    # Required text
    case("quantity-kind-empty", 3, setter("quantities.0.kind", ""), ("VALUE_EMPTY", "quantities[0].kind")),
    case(
        "constraint-kind-empty", 4, setter("constraints.0.kind", ""), ("VALUE_EMPTY", "constraints[0].kind")
    ),
    case(
        "relation-predicate-empty",
        4,
        setter("relations.0.predicate", ""),
        ("VALUE_EMPTY", "relations[0].predicate"),
    ),
    case(
        "ambiguity-description-empty",
        4,
        setter("ambiguities.0.description", ""),
        ("VALUE_EMPTY", "ambiguities[0].description"),
    ),
    case(
        "target-kind-empty",
        3,
        setter("query_target.target_kind", ""),
        ("VALUE_EMPTY", "query_target.target_kind"),
    ),
    case(
        "step-text-empty", 5, setter("solution_steps.0.text", ""), ("VALUE_EMPTY", "solution_steps[0].text")
    ),
    case(
        "mention-quote-empty",
        3,
        setter("text_mentions.2.quote", ""),
        ("VALUE_EMPTY", "text_mentions[2].quote"),
    ),
    # Mentions and spans
    case(
        "mention-occurrence-zero",
        3,
        setter("text_mentions.0.occurrence", 0),
        ("MENTION_OCCURRENCE_INVALID", "text_mentions[0].occurrence"),
    ),
    case(
        "mention-quote-wrong-case",
        3,
        setter("text_mentions.0.quote", "Block"),
        ("MENTION_QUOTE_NOT_FOUND", "text_mentions[0].quote"),
        ("MENTION_ORDER_INVALID", "text_mentions[1]"),  # the Kit places it after every found mention
    ),
    case(
        "mention-quote-in-other-section",
        4,
        setter("text_mentions.6.section", "stem"),
        ("MENTION_QUOTE_NOT_FOUND", "text_mentions[6].quote"),
        ("QUERY_TARGET_ROLE_INVALID", "query_target.mention_id"),
    ),
    # An occurrence past the quote's last match is no Kit issue (the workspace's: test_workspace_checks), but
    # the Kit's source validation places the mention at the end of its section, so what follows is out of order.
    case(
        "mention-occurrence-past-an-ambiguous-quote",
        3,
        setter("text_mentions.0.occurrence", 3),
        ("MENTION_ORDER_INVALID", "text_mentions[1]"),
    ),
    case(
        "mention-occurrence-past-a-unique-quote",
        4,
        setter("text_mentions.1.occurrence", 2),
        ("MENTION_ORDER_INVALID", "text_mentions[2]"),
    ),
    case(
        "mentions-out-of-order-in-stem", 3, swap_mentions(0, 1), ("MENTION_ORDER_INVALID", "text_mentions[1]")
    ),
    case(
        "query-mention-before-stem-mention",
        3,
        swap_mentions(5, 6),
        ("MENTION_ORDER_INVALID", "text_mentions[6]"),
        ("QUERY_TARGET_ROLE_INVALID", "query_target.mention_id"),
    ),
    case(
        "second-occurrence-numbered-first",
        4,
        lambda d: d["text_mentions"][0].update(occurrence=2),
        ("MENTION_ORDER_INVALID", "text_mentions[1]"),
    ),
    # Query target
    case(
        "query-target-missing",
        3,
        setter("query_target.mention_id", ""),
        ("QUERY_TARGET_MISSING", "query_target.mention_id"),
    ),
    case(
        "query-target-not-the-query-mention",
        4,
        setter("query_target.mention_id", "m001"),
        ("QUERY_TARGET_ROLE_INVALID", "query_target.mention_id"),
    ),
    case(
        "query-target-mention-wrong-role",
        3,
        setter("text_mentions.6.role", "entity"),
        ("QUERY_TARGET_ROLE_INVALID", "query_target.mention_id"),
    ),
    # Pass 4
    case(
        "relation-duplicate",
        4,
        appender("relations", lambda d: d["relations"][0] | {"id": "r003"}),
        ("RELATION_DUPLICATE", "relations[2]"),
    ),
    case(
        "visual-node-modified",
        4,
        setter("visual_nodes.2.text", "M"),
        ("PASS4_VISUAL_NODE_MODIFIED", "visual_nodes[2]"),
    ),
    case(
        "visual-node-added",
        4,
        appender("visual_nodes", lambda d: visual("v008", "text_glyph", [10, 10, 40, 40], text="g")),
        ("PASS4_VISUAL_NODE_ADDED", "visual_nodes[7]"),
    ),
    case(
        "pass4-image-id-unknown",
        4,
        setter("visual_nodes.6.image_id", "img_1"),
        ("IMAGE_ID_UNKNOWN", "visual_nodes[6].image_id"),
        ("PASS4_VISUAL_NODE_MODIFIED", "visual_nodes[6]"),
    ),
]


@pytest.mark.parametrize(("pass_no", "mutate", "expected", "adjust_context"), FAILING_CASES)
def test_rule_violation_is_reported_exactly(pass_no, mutate, expected, adjust_context):
    document = DOCUMENTS[pass_no]()
    mutate(document)
    context = full_context() if adjust_context is None else adjust_context(full_context())

    assert codes_and_paths(validate_pass_document(pass_no, document, context)) == expected


def test_every_issue_code_has_a_failing_case():
    covered = {code for param in FAILING_CASES for code, _ in param.values[2]}
    covered |= {"PASS_NUMBER_INVALID"}  # test_invalid_pass_number

    assert covered == set(ISSUE_CODES)


# --------------------------------------------------------------------------------------------
# Shape of the results, robustness
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pass_no", [0, 6, True, "1"])
def test_invalid_pass_number(pass_no):
    assert codes_and_paths(validate_pass_document(pass_no, pass1_doc(), full_context())) == [
        ("PASS_NUMBER_INVALID", "")
    ]


@pytest.mark.parametrize("document", [None, [], "pass", 3, ["problem_id"]])
def test_non_object_document_is_one_issue(document):
    assert codes_and_paths(validate_pass_document(1, document, full_context())) == [("TYPE_MISMATCH", "")]


def test_issue_as_dict_and_message():
    document = pass1_doc()
    document["visual_nodes"][0]["bbox_1000"] = [450, 250, 300, 380]

    (issue,) = validate_pass_document(1, document, full_context())

    assert issue.as_dict() == {
        "code": "BBOX_ORDER_INVALID",
        "path": "visual_nodes[0].bbox_1000",
        "message": "bbox_1000 must satisfy x1 ≤ x2 and y1 ≤ y2.",
    }


def test_every_violation_is_reported_in_document_order():
    document = pass2_doc()
    document["problem_id"] = "x"
    document["physical_nodes"][0]["type"] = "block"
    document["physical_nodes"][2]["confidence"] = "sure"
    document["bindings"][1]["to_id"] = "p042"

    assert codes_and_paths(validate_pass_document(2, document, full_context())) == [
        ("PROBLEM_ID_MISMATCH", "problem_id"),
        ("ENUM_INVALID", "physical_nodes[0].type"),
        ("ENUM_INVALID", "physical_nodes[2].confidence"),
        ("REFERENCE_UNKNOWN", "bindings[1].to_id"),
    ]


def test_messages_name_the_problem_for_the_annotator():
    document = pass3_doc()
    document["text_mentions"][0]["quote"] = "Block"

    issue = validate_pass_document(3, document, full_context())[0]

    assert issue.message == "The quote 'Block' does not occur in the stem text (exact, case-sensitive match)."


def _leaf_paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaf_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaf_paths(child, (*path, index))


ODD_VALUES = [None, True, 1.5, -7, "", "x", [], {}, [None], {"answer": 1}]


@pytest.mark.parametrize("pass_no", [1, 2, 3, 4, 5])
def test_any_wrong_value_anywhere_gives_issues_never_an_exception(pass_no):
    context = full_context()
    valid = DOCUMENTS[pass_no]()
    for path in _leaf_paths(valid):
        if not path:
            continue
        for odd in ODD_VALUES:
            document = copy.deepcopy(valid)
            target: Any = document
            for part in path[:-1]:
                target = target[part]
            target[path[-1]] = odd
            issues = validate_pass_document(pass_no, document, context)
            assert all(isinstance(issue, ValidationIssue) and issue.code in ISSUE_CODES for issue in issues)


def test_malformed_earlier_passes_in_the_context_do_not_raise():
    context = replace(
        full_context(),
        pass1={"visual_nodes": "x"},
        pass2={"physical_nodes": [1, {"id": 2}]},
        pass4={"quantities": None},
    )

    for pass_no in (2, 3, 4, 5):
        assert isinstance(validate_pass_document(pass_no, DOCUMENTS[pass_no](), context), list)


def test_result_is_deterministic():
    document = pass4_doc()
    document["relations"].append(document["relations"][0] | {"id": "r003", "confidence": "x"})
    document["visual_nodes"][1]["bbox_1000"] = [1, 2]

    first = validate_pass_document(4, document, full_context())

    assert first == validate_pass_document(4, copy.deepcopy(document), full_context())
    assert len(first) == 4


def test_deeply_nested_value_does_not_overflow():
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    document = pass1_doc()
    document["visual_nodes"][0]["subtype"] = nested

    assert codes_and_paths(validate_pass_document(1, document, full_context())) == [
        ("TYPE_MISMATCH", "visual_nodes[0].subtype")
    ]
