"""The curated document (annotation.curation.merge): exact outputs of the merge rule, pass by pass."""

from __future__ import annotations

import copy

import pytest

from annotation.agreement.core import RecordPair
from annotation.curation.merge import (
    Choice,
    ChoiceError,
    Unresolved,
    choices_for,
    curated_document,
    in_first_terms,
    reference_map,
    references_to,
)


def region(rid: str, box: list[int], text: str = "", type_: str = "text_glyph") -> dict:
    return {
        "id": rid,
        "type": type_,
        "subtype": "label" if type_ == "text_glyph" else "",
        "text": text,
        "image_id": "img_0",
        "bbox_1000": box,
        "keypoints_1000": [],
        "center_1000": [-1, -1],
        "radius_1000": -1,
        "confidence": "high",
    }


def pass1(*regions: dict) -> dict:
    return {"problem_id": "cur_1", "visual_nodes": list(regions), "ambiguities": []}


FIRST1 = pass1(
    region("v001", [10, 10, 50, 50], "A"),
    region("v002", [60, 60, 90, 90], "B"),
    region("v003", [100, 100, 140, 140], "C"),
)
SECOND1 = pass1(
    region("v001", [12, 10, 52, 50], "A"),
    region("v002", [100, 100, 140, 140], "C"),
    region("v003", [300, 300, 340, 340], "D"),
)
PAIRS1 = [
    RecordPair("visual_nodes", "v001", "v001", 0.9),
    RecordPair("visual_nodes", "v002", None, 0.0),
    RecordPair("visual_nodes", "v003", "v002", 1.0),
    RecordPair("visual_nodes", None, "v003", 0.0),
]


def test_no_choice_gives_back_the_first_document():
    result = curated_document(1, FIRST1, SECOND1, PAIRS1)
    assert result.document == FIRST1
    assert [c.keep for c in result.choices] == ["first", "first", "first", "drop"]
    assert (result.taken, result.added, result.dropped, result.renamed, result.unresolved) == (
        (),
        {},
        (),
        {},
        (),
    )


def test_take_second_keeps_the_first_id_and_place():
    result = curated_document(1, FIRST1, SECOND1, PAIRS1, [Choice("visual_nodes", "v001", "v001", "second")])
    expected = copy.deepcopy(FIRST1)
    expected["visual_nodes"][0]["bbox_1000"] = [12, 10, 52, 50]
    assert result.document == expected
    assert result.taken == ("v001",)


def test_a_taken_record_of_another_position_is_stored_under_the_first_id():
    result = curated_document(1, FIRST1, SECOND1, PAIRS1, [Choice("visual_nodes", "v003", "v002", "second")])
    assert result.document == FIRST1  # the second's v002 is the first's v003 in every field but its id
    assert result.taken == ("v003",)


def test_drop_renumbers_the_records_after_it():
    result = curated_document(1, FIRST1, SECOND1, PAIRS1, [Choice("visual_nodes", "v002", None, "drop")])
    assert result.document == pass1(
        region("v001", [10, 10, 50, 50], "A"), region("v002", [100, 100, 140, 140], "C")
    )
    assert result.dropped == ("v002",)
    assert result.renamed == {"v003": "v002"}
    assert result.final_id("v003") == "v002"


def test_add_appends_under_a_fresh_id():
    result = curated_document(1, FIRST1, SECOND1, PAIRS1, [Choice("visual_nodes", None, "v003", "second")])
    assert result.document["visual_nodes"][3] == region("v004", [300, 300, 340, 340], "D")
    assert result.document["visual_nodes"][:3] == FIRST1["visual_nodes"]
    assert result.added == {"v003": "v004"}
    assert result.renamed == {}


def test_drop_and_add_together():
    choices = [
        Choice("visual_nodes", "v001", "v001", "second"),
        Choice("visual_nodes", "v002", None, "drop"),
        Choice("visual_nodes", None, "v003", "second"),
    ]
    result = curated_document(1, FIRST1, SECOND1, PAIRS1, choices)
    assert result.document == pass1(
        region("v001", [12, 10, 52, 50], "A"),
        region("v002", [100, 100, 140, 140], "C"),
        region("v003", [300, 300, 340, 340], "D"),
    )
    assert result.added == {"v003": "v004"}  # before renumbering …
    assert result.renamed == {"v003": "v002", "v004": "v003"}  # … and after
    assert result.final_id(result.added["v003"]) == "v003"


def test_the_inputs_are_not_changed():
    first, second = copy.deepcopy(FIRST1), copy.deepcopy(SECOND1)
    curated_document(
        1,
        first,
        second,
        PAIRS1,
        [Choice("visual_nodes", "v002", None, "drop"), Choice("visual_nodes", None, "v003", "second")],
    )
    assert (first, second) == (FIRST1, SECOND1)


def test_choices_are_checked_against_the_pairs():
    with pytest.raises(ChoiceError, match="No record pair visual_nodes v009"):
        choices_for(PAIRS1, [Choice("visual_nodes", "v009", None, "drop")])
    with pytest.raises(
        ChoiceError, match="'drop' is not a choice for visual_nodes v001 / v001: one of first, second"
    ):
        choices_for(PAIRS1, [Choice("visual_nodes", "v001", "v001", "drop")])
    with pytest.raises(
        ChoiceError, match="'first' is not a choice for visual_nodes — / v003: one of second, drop"
    ):
        choices_for(PAIRS1, [Choice("visual_nodes", None, "v003", "first")])
    with pytest.raises(ChoiceError, match="chosen twice"):
        choices_for(PAIRS1, [Choice("visual_nodes", "v002", None, "drop")] * 2)
    with pytest.raises(ChoiceError, match="passes 1–4"):
        curated_document(5, {}, {}, [])


# --- Pass 2: references go through the region matching ---------------------------------------------------------


def entity(pid: str, type_: str, name: str, anchors: list[str]) -> dict:
    return {
        "id": pid,
        "type": type_,
        "subtype": "",
        "name": name,
        "symbol": "",
        "visual_anchor_ids": anchors,
        "text_mention_ids": [],
        "provenance": ["IMAGE"],
        "confidence": "high",
    }


def binding(bid: str, from_id: str, to_id: str, type_: str = "represents") -> dict:
    return {
        "id": bid,
        "type": type_,
        "from_id": from_id,
        "to_id": to_id,
        "provenance": ["IMAGE"],
        "evidence_visual_ids": [from_id],
        "evidence_mention_ids": [],
    }


FIRST2 = {
    "problem_id": "cur_1",
    "physical_nodes": [
        entity("p001", "block", "Block", ["v001"]),
        entity("p002", "surface", "Floor", ["v002"]),
    ],
    "bindings": [binding("b001", "v001", "p001"), binding("b002", "v002", "p002")],
    "ambiguities": [],
}
# the second's regions: its v001 is the first's v001, its v002 the first's v003, its v003 has no match
SECOND2 = {
    "problem_id": "cur_1",
    "physical_nodes": [
        entity("p001", "block", "Block A", ["v001"]),
        entity("p002", "pulley", "Pulley", ["v002", "v003"]),
    ],
    "bindings": [
        binding("b001", "v001", "p001"),
        binding("b002", "v002", "p002"),
        binding("b003", "v003", "p002"),
    ],
    "ambiguities": [],
}
PAIRS2 = [
    RecordPair("physical_nodes", "p001", "p001", 1.0),
    RecordPair("physical_nodes", "p002", None, 0.0),
    RecordPair("physical_nodes", None, "p002", 0.0),
    RecordPair("bindings", "b001", "b001", 1.0),
    RecordPair("bindings", "b002", None, 0.0),
    RecordPair("bindings", None, "b002", 0.0),
    RecordPair("bindings", None, "b003", 0.0),
]


def test_pass2_added_records_refer_to_the_first_regions_and_to_each_other():
    choices = [
        Choice("physical_nodes", "p001", "p001", "second"),
        Choice("physical_nodes", None, "p002", "second"),
        Choice("bindings", None, "b002", "second"),
        Choice("bindings", None, "b003", "second"),
    ]
    result = curated_document(2, FIRST2, SECOND2, PAIRS2, choices, earlier_pairs=PAIRS1)
    assert result.document == {
        "problem_id": "cur_1",
        "physical_nodes": [
            entity("p001", "block", "Block A", ["v001"]),
            entity("p002", "surface", "Floor", ["v002"]),
            entity(
                "p003", "pulley", "Pulley", ["v003"]
            ),  # its v002 is the first's v003; its v003 has no match
        ],
        "bindings": [
            binding("b001", "v001", "p001"),
            binding("b002", "v002", "p002"),
            binding("b003", "v003", "p003"),
            binding("b004", "", "p003") | {"evidence_visual_ids": []},
        ],
        "ambiguities": [],
    }
    assert result.added == {"p002": "p003", "b002": "b003", "b003": "b004"}
    assert result.unresolved == (
        Unresolved("physical_nodes", "p003", "visual_anchor_ids", "v003", "second"),
        Unresolved("bindings", "b004", "from_id", "v003", "second"),
        Unresolved("bindings", "b004", "evidence_visual_ids", "v003", "second"),
    )


def test_pass2_a_dropped_entity_is_taken_out_of_the_references_to_it():
    choices = [Choice("physical_nodes", "p002", None, "drop"), Choice("bindings", "b002", None, "first")]
    result = curated_document(2, FIRST2, SECOND2, PAIRS2, choices, earlier_pairs=PAIRS1)
    assert result.document["physical_nodes"] == [entity("p001", "block", "Block", ["v001"])]
    assert result.document["bindings"] == [binding("b001", "v001", "p001"), binding("b002", "v002", "")]
    assert result.unresolved == (Unresolved("bindings", "b002", "to_id", "p002", "first"),)
    assert result.renamed == {}


def test_in_first_terms_and_the_reference_map():
    mapping = reference_map(PAIRS2, PAIRS1)
    assert mapping == {"v001": "v001", "v002": "v003", "p001": "p001", "b001": "b001"}
    taken = in_first_terms(SECOND2["physical_nodes"][1], "p002", id_key="id", mapping=mapping)
    assert taken == entity("p002", "pulley", "Pulley", ["v003"])


# --- Pass 3: entities updated or new, mentions in textual order ------------------------------------------------

TEXTS = {"stem": "A block rests on a rough floor.", "query": "Find the friction."}


def mention(mid: str, section: str, quote: str, role: str = "entity") -> dict:
    return {"id": mid, "section": section, "quote": quote, "occurrence": 1, "role": role}


def refers(bid: str, mid: str, pid: str) -> dict:
    return {
        "id": bid,
        "type": "refers_to",
        "from_id": mid,
        "to_id": pid,
        "provenance": ["TEXT"],
        "evidence_visual_ids": [],
        "evidence_mention_ids": [mid],
    }


def pass3(nodes: list[dict], mentions: list[dict], bindings: list[dict]) -> dict:
    return {
        "problem_id": "cur_1",
        "new_or_updated_physical_nodes": nodes,
        "text_mentions": mentions,
        "quantities": [],
        "bindings": bindings,
        "constraints": [],
        "query_target": {
            "mention_id": mentions[-1]["id"],
            "target_kind": "force",
            "target_symbol_latex": "f",
            "target_node_ids": [],
            "location_node_ids": [],
            "time_or_event_node_ids": [],
        },
        "ambiguities": [],
    }


def test_pass3_an_update_goes_to_the_matching_entity_a_new_one_after_pass_2_and_mentions_keep_text_order():
    first = pass3(
        [],
        [mention("m001", "stem", "rough floor"), mention("m002", "query", "friction", "query_target")],
        [refers("b001", "m001", "p002")],
    )
    second = pass3(
        [
            entity("p002", "pulley", "Pulley", ["v002"])
            | {"text_mention_ids": ["m001"], "provenance": ["IMAGE", "TEXT"]},
            entity("p003", "string", "String", []) | {"provenance": ["TEXT"]},
        ],
        [
            mention("m001", "stem", "block"),
            mention("m002", "stem", "rough floor"),
            mention("m003", "query", "friction", "query_target"),
        ],
        [refers("b001", "m001", "p002")],
    )
    pass2_pairs = [
        RecordPair("physical_nodes", "p001", "p001", 1.0),
        RecordPair("physical_nodes", "p002", "p002", 1.0),
    ]
    pairs = [
        RecordPair("text_mentions", "m001", "m002", 1.0),
        RecordPair("text_mentions", "m002", "m003", 1.0),
        RecordPair("text_mentions", None, "m001", 0.0),
        RecordPair("new_or_updated_physical_nodes", None, "p002", 0.0),
        RecordPair("new_or_updated_physical_nodes", None, "p003", 0.0),
        RecordPair("bindings", "b001", None, 0.0),
        RecordPair("bindings", None, "b001", 0.0),
    ]
    choices = [
        Choice("text_mentions", None, "m001", "second"),
        Choice("new_or_updated_physical_nodes", None, "p002", "second"),
        Choice("new_or_updated_physical_nodes", None, "p003", "second"),
        Choice("bindings", None, "b001", "second"),
    ]
    result = curated_document(
        3,
        first,
        second,
        pairs,
        choices,
        earlier_pairs=[*PAIRS1, *pass2_pairs],
        first_earlier={2: FIRST2},
        second_earlier={2: SECOND2},
        texts=TEXTS,
    )
    # the second's m001 ("block") comes first in the stem: it becomes m001, the first's m001/m002 move on
    assert result.added == {"m001": "m003", "p002": "p002", "p003": "p003", "b001": "b002"}
    assert result.renamed == {"m003": "m001", "m001": "m002", "m002": "m003"}
    assert result.document == pass3(
        [
            entity("p002", "pulley", "Pulley", ["v003"])
            | {"text_mention_ids": ["m001"], "provenance": ["IMAGE", "TEXT"]},
            entity("p003", "string", "String", []) | {"provenance": ["TEXT"]},
        ],
        [
            mention("m001", "stem", "block"),
            mention("m002", "stem", "rough floor"),
            mention("m003", "query", "friction", "query_target"),
        ],
        [refers("b001", "m002", "p002"), refers("b002", "m001", "p002")],
    )
    assert result.unresolved == ()


def test_references_to_names_the_later_records():
    later = {
        2: FIRST2,
        4: {
            "problem_id": "cur_1",
            "visual_nodes": [region("v002", [0, 0, 9, 9])],
            "bindings": [binding("b001", "v002", "p001")],
        },
    }
    assert references_to(later, ["v002", "v003", "p001"]) == {
        "p001": ["Pass 2 b001", "Pass 4 b001"],
        "v002": ["Pass 2 b002", "Pass 2 p002", "Pass 4 b001"],
    }
