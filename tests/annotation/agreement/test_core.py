"""The agreement core against hand-computed values (annotation/agreement/core.py's rules)."""

from __future__ import annotations

import copy
import math

import pytest

from annotation.agreement.core import RecordPair, cohen_kappa, combine, pass_agreement, record_pairs


def box(vid: str, bbox: list[int], *, type_: str = "object_shape", text: str = "", **extra: object) -> dict:
    return {
        "id": vid,
        "type": type_,
        "subtype": "",
        "text": text,
        "image_id": "img_0",
        "bbox_1000": bbox,
        "keypoints_1000": extra.pop("keypoints", []),
        "center_1000": extra.pop("center", [-1, -1]),
        "radius_1000": extra.pop("radius", -1),
        "confidence": "high",
    }


def pass1(*nodes: dict) -> dict:
    return {"problem_id": "p", "visual_nodes": list(nodes), "ambiguities": []}


def entity(pid: str, type_: str, anchors: list[str], mentions: list[str] | None = None) -> dict:
    return {
        "id": pid,
        "type": type_,
        "subtype": "",
        "name": pid,
        "symbol": "",
        "visual_anchor_ids": anchors,
        "text_mention_ids": mentions or [],
        "provenance": ["IMAGE"],
        "confidence": "high",
    }


def binding(bid: str, type_: str, source: str, target: str) -> dict:
    return {
        "id": bid,
        "type": type_,
        "from_id": source,
        "to_id": target,
        "provenance": ["IMAGE"],
        "evidence_visual_ids": [],
        "evidence_mention_ids": [],
    }


def quantity(
    qid: str,
    kind: str,
    symbol: str,
    value: str,
    unit: str,
    owner: str,
    anchors: list[str],
    mentions: list[str],
) -> dict:
    return {
        "id": qid,
        "kind": kind,
        "symbol_latex": symbol,
        "value_latex": value,
        "unit_latex": unit,
        "owner_id": owner,
        "visual_anchor_ids": anchors,
        "text_mention_ids": mentions,
        "provenance": ["IMAGE", "TEXT"],
    }


# A block on a surface: v001 the block, v002 its label "A", v003 the label "4.0 kg", v004 the surface.
P1 = pass1(
    box("v001", [100, 100, 200, 200]),
    box("v002", [300, 100, 360, 140], type_="text_glyph", text="A"),
    box("v003", [400, 100, 500, 150], type_="text_glyph", text="4.0 kg"),
    box("v004", [50, 300, 600, 320], type_="line_segment"),
)
P2 = {
    "problem_id": "p",
    "physical_nodes": [entity("p001", "body", ["v001", "v002"]), entity("p002", "surface", ["v004"])],
    "bindings": [
        binding("b001", "represents", "v001", "p001"),
        binding("b002", "labels", "v002", "p001"),
        binding("b003", "represents", "v004", "p002"),
    ],
    "ambiguities": [],
}
P3 = {
    "problem_id": "p",
    "new_or_updated_physical_nodes": [entity("p001", "body", ["v001", "v002"], ["m001"])],
    "text_mentions": [
        {"id": "m001", "section": "stem", "quote": "block", "occurrence": 1, "role": "entity"},
        {"id": "m002", "section": "stem", "quote": "4.0 kg", "occurrence": 1, "role": "quantity"},
    ],
    "quantities": [
        quantity("q001", "mass", "m", "4.0", "\\mathrm{kg}", "p001", ["v003"], ["m002"]),
        quantity("q002", "coefficient_of_kinetic_friction", "\\mu_k", "0.2", "", "p002", [], []),
    ],
    "bindings": [binding("b001", "refers_to", "m001", "p001")],
    "constraints": [],
    "query_target": None,
    "ambiguities": [],
}
EARLIER = {1: P1, 2: P2}


def permuted(document: dict, rename: dict[str, str]) -> dict:
    """``document`` with every id in ``rename`` renamed (what another annotator's numbering does)."""

    def walk(value: object) -> object:
        if isinstance(value, str):
            return rename.get(value, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    out = walk(copy.deepcopy(document))
    assert isinstance(out, dict)
    return out


# --------------------------------------------------------------------------------------------
# Identical documents
# --------------------------------------------------------------------------------------------


def test_identical_documents_agree_fully_on_every_pass():
    p1 = pass_agreement(1, P1, copy.deepcopy(P1))
    assert p1["regions"] == {
        "first": 4, "second": 4, "matched": 4, "unmatched_first": 0, "unmatched_second": 0,
        "score_sum": 4.0, "mean_score": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0,
    }  # fmt: skip
    assert p1["transcription"] == {"n": 2, "agree": 2, "rate": 1.0}
    assert p1["region_type"] == {"n": 4, "agree": 4, "rate": 1.0}

    p2 = pass_agreement(2, P2, copy.deepcopy(P2), first_earlier=EARLIER, second_earlier=EARLIER)
    assert p2["entities"]["f1"] == 1.0 and p2["entities"]["mean_score"] == 1.0
    assert p2["entity_type"]["rate"] == 1.0
    # body/surface, one each on both sides: p_o 1, p_e 0.5·0.5 + 0.5·0.5 = 0.5, κ = 1.
    assert p2["entity_type"]["kappa"] == {"kappa": 1.0, "n": 2, "observed": 1.0, "expected": 0.5}
    assert p2["binding"] == {"n": 3, "agree": 3, "rate": 1.0}  # v001, v002, v004 are bound; v003 is not

    p3 = pass_agreement(3, P3, copy.deepcopy(P3), first_earlier=EARLIER, second_earlier=EARLIER)
    assert p3["mentions"]["f1"] == 1.0 and p3["quantities"]["f1"] == 1.0
    for key in ("quantity_value", "quantity_unit", "quantity_owner"):
        assert p3[key] == {"n": 2, "agree": 2, "rate": 1.0}
    assert p3["quantity_kind"]["kappa"]["kappa"] == 1.0


def test_a_single_category_leaves_kappa_undefined_with_its_count():
    p2 = {
        **P2,
        "physical_nodes": [entity("p001", "body", ["v001", "v002"]), entity("p002", "body", ["v004"])],
    }
    figures = pass_agreement(2, p2, copy.deepcopy(p2), first_earlier=EARLIER, second_earlier=EARLIER)
    assert figures["entity_type"]["rate"] == 1.0
    assert figures["entity_type"]["kappa"] == {"kappa": None, "n": 2, "observed": 1.0, "expected": 1.0}


def test_pass_four_compares_everything_it_holds():
    p4 = {
        **P1, **P2, **P3,
        "bindings": P2["bindings"] + [binding("b004", "refers_to", "m001", "p001")],
        "physical_nodes": P3["new_or_updated_physical_nodes"] + [P2["physical_nodes"][1]],
        "relations": [],
    }  # fmt: skip
    figures = pass_agreement(4, p4, copy.deepcopy(p4))
    assert {k for k, v in figures.items() if isinstance(v, dict)} == {
        "regions", "transcription", "region_type", "entities", "entity_type", "binding", "mentions",
        "quantities", "quantity_kind", "quantity_value", "quantity_unit", "quantity_owner",
    }  # fmt: skip
    assert figures["regions"]["f1"] == figures["entities"]["f1"] == figures["quantities"]["f1"] == 1.0
    assert figures["binding"]["rate"] == figures["quantity_owner"]["rate"] == 1.0


# --------------------------------------------------------------------------------------------
# Regions
# --------------------------------------------------------------------------------------------


def test_a_box_shifted_by_20_has_iou_two_thirds_and_matches_only_below_that_threshold():
    first = pass1(box("v001", [100, 100, 200, 200]))
    second = pass1(box("v001", [120, 100, 220, 200]))
    # overlap 80·100 = 8000; union 2·10000 − 8000 = 12000
    matched = pass_agreement(1, first, second)["regions"]
    assert matched["matched"] == 1
    assert matched["mean_score"] == pytest.approx(8000 / 12000)
    assert record_pairs(1, first, second) == [
        RecordPair("visual_nodes", "v001", "v001", pytest.approx(2 / 3))
    ]

    strict = pass_agreement(1, first, second, threshold=0.7)["regions"]
    assert (strict["matched"], strict["unmatched_first"], strict["unmatched_second"]) == (0, 1, 1)
    assert (strict["precision"], strict["recall"], strict["f1"], strict["mean_score"]) == (
        0.0,
        0.0,
        0.0,
        None,
    )
    assert record_pairs(1, first, second, threshold=0.7) == [
        RecordPair("visual_nodes", "v001", None, 0.0),
        RecordPair("visual_nodes", None, "v001", 0.0),
    ]


def test_one_missing_region_gives_precision_1_recall_two_thirds_f1_0_8():
    first = pass1(
        box("v001", [100, 100, 200, 200]),
        box("v002", [300, 300, 400, 400]),
        box("v003", [600, 600, 700, 700]),
    )
    second = pass1(box("v001", [300, 300, 400, 400]), box("v002", [600, 600, 700, 700]))
    regions = pass_agreement(1, first, second)["regions"]
    assert regions["precision"] == 1.0
    assert regions["recall"] == pytest.approx(2 / 3)
    assert regions["f1"] == pytest.approx(0.8)
    assert (regions["unmatched_first"], regions["unmatched_second"]) == (1, 0)
    # matched through the boxes, not the ids
    assert record_pairs(1, first, second) == [
        RecordPair("visual_nodes", "v001", None, 0.0),
        RecordPair("visual_nodes", "v002", "v001", 1.0),
        RecordPair("visual_nodes", "v003", "v002", 1.0),
    ]


def test_the_assignment_is_optimal_not_greedy():
    # a ↔ x has the single best IoU, but a ↔ y plus b ↔ x is the better assignment.
    first = pass1(box("v001", [0, 0, 100, 100]), box("v002", [50, 0, 150, 100]))
    second = pass1(box("v001", [25, 0, 125, 100]), box("v002", [0, 0, 90, 100]))
    # v001–v001 3/5, v001–v002 0.9, v002–v001 3/5, v002–v002 40/150 (below 0.5)
    pairs = record_pairs(1, first, second)
    assert pairs == [
        RecordPair("visual_nodes", "v001", "v002", pytest.approx(0.9)),
        RecordPair("visual_nodes", "v002", "v001", pytest.approx(75 / 125)),
    ]


def test_regions_on_different_images_never_match():
    other = box("v001", [100, 100, 200, 200])
    other["image_id"] = "img_1"
    assert (
        pass_agreement(1, pass1(box("v001", [100, 100, 200, 200])), pass1(other))["regions"]["matched"] == 0
    )


def arrow(vid: str, tail: list[int], head: list[int], type_: str = "arrow") -> dict:
    xs, ys = (tail[0], head[0]), (tail[1], head[1])
    return box(vid, [min(xs), min(ys) - 5, max(xs), max(ys) + 5], type_=type_, keypoints=[tail, head])


def test_an_arrow_reversed_does_not_match_a_line_reversed_does():
    forward = pass1(arrow("v001", [100, 100], [300, 100]))
    backward = pass1(arrow("v001", [300, 100], [100, 100]))
    # same box (IoU 1), but tail↔tail and head↔head are 200 apart: similarity 0
    assert pass_agreement(1, forward, backward)["regions"]["matched"] == 0
    line, line_back = (
        pass1(arrow("v001", *ends, type_="line_segment"))
        for ends in (([100, 100], [300, 100]), ([300, 100], [100, 100]))
    )
    assert pass_agreement(1, line, line_back)["regions"]["mean_score"] == 1.0


def test_an_arrow_with_its_head_moved_by_5_scores_0_9():
    first = pass1(arrow("v001", [100, 100], [300, 100]))
    second = pass1(arrow("v001", [100, 100], [305, 100]))
    # tail 1.0, head 1 − 5/25 = 0.8: mean 0.9
    assert pass_agreement(1, first, second)["regions"]["mean_score"] == pytest.approx(0.9)


def point(vid: str, x: int, y: int) -> dict:
    return box(vid, [x - 5, y - 5, x + 5, y + 5], type_="point_mark", keypoints=[[x, y]])


def test_points_use_the_distance_over_the_tolerance():
    here = pass1(point("v001", 500, 500))
    assert pass_agreement(1, here, pass1(point("v001", 506, 508)))["regions"]["mean_score"] == pytest.approx(
        0.6
    )  # d 10
    # d 20: 1 − 20/25 = 0.2 < 0.5, no match (although the boxes would not overlap either way)
    assert pass_agreement(1, here, pass1(point("v001", 520, 500)))["regions"]["matched"] == 0
    # a larger tolerance makes the same pair a match: 1 − 20/50 = 0.6
    loose = pass_agreement(1, here, pass1(point("v001", 520, 500)), tolerance=50)["regions"]
    assert loose["mean_score"] == pytest.approx(0.6)


def circle(vid: str, x: int, y: int, r: int) -> dict:
    return box(vid, [x - r, y - r, x + r, y + r], type_="circle", center=[x, y], radius=r)


def test_circles_use_the_iou_of_the_discs():
    # concentric, radii 50 and 40: 40²/50² = 0.64
    first = pass1(circle("v001", 500, 500, 50))
    assert pass_agreement(1, first, pass1(circle("v001", 500, 500, 40)))["regions"][
        "mean_score"
    ] == pytest.approx(0.64)
    # equal radii 50, centres 50 apart: lens 2r²·acos(d/2r) − (d/2)·√(4r² − d²)
    lens = 2 * 2500 * math.acos(0.5) - 25 * math.sqrt(10000 - 2500)
    iou = lens / (2 * math.pi * 2500 - lens)
    assert iou == pytest.approx(0.24301, abs=1e-5)
    loose = pass_agreement(1, first, pass1(circle("v001", 550, 500, 50)), threshold=0.2)["regions"]
    assert loose["mean_score"] == pytest.approx(iou)
    # their boxes' IoU would be 50·100/(20000 − 5000) = 1/3: the disc rule is what is used
    assert (
        pass_agreement(1, first, pass1(circle("v001", 550, 500, 50)), threshold=0.3)["regions"]["matched"]
        == 0
    )


def test_a_box_and_a_shape_compare_by_their_boxes():
    drawn = pass1(arrow("v001", [100, 100], [300, 100]))
    boxed = pass1(box("v001", [100, 95, 300, 105], type_="arrow"))
    assert pass_agreement(1, drawn, boxed)["regions"]["mean_score"] == 1.0


# --------------------------------------------------------------------------------------------
# Transcription
# --------------------------------------------------------------------------------------------


def test_a_swapped_label_gives_transcription_two_thirds():
    first = pass1(
        box("v001", [0, 0, 50, 50], type_="text_glyph", text="A"),
        box("v002", [100, 0, 150, 50], type_="text_glyph", text="B"),
        box("v003", [200, 0, 250, 50], type_="text_glyph", text="4.0 kg"),
        box("v004", [400, 400, 600, 600]),  # not a text region: not counted
    )
    second = copy.deepcopy(first)
    second["visual_nodes"][1]["text"] = "C"
    second["visual_nodes"][2]["text"] = "$4.0\\,\\mathrm{kg}$"  # the same reading after the label normalizer
    figures = pass_agreement(1, first, second)
    assert figures["transcription"] == {"n": 3, "agree": 2, "rate": pytest.approx(2 / 3)}
    assert figures["regions"]["f1"] == 1.0


def test_text_the_label_profile_refuses_is_compared_literally():
    first = pass1(box("v001", [0, 0, 50, 50], type_="text_glyph", text="\\vec{F}"))
    same = pass1(box("v001", [0, 0, 50, 50], type_="text_glyph", text=" \\vec{F} "))
    other = pass1(box("v001", [0, 0, 50, 50], type_="text_glyph", text="\\vec{G}"))
    assert pass_agreement(1, first, same)["transcription"]["rate"] == 1.0
    assert pass_agreement(1, first, other)["transcription"]["rate"] == 0.0


# --------------------------------------------------------------------------------------------
# Entities and bindings (Pass 2, through the region matching)
# --------------------------------------------------------------------------------------------

# The second annotator drew the same regions in another order: their v001 is the first's v004, and so on.
RENAME = {"v001": "v002", "v002": "v003", "v003": "v004", "v004": "v001"}


def second_side() -> tuple[dict, dict]:
    p1 = permuted(P1, RENAME)
    p1["visual_nodes"].sort(key=lambda n: n["id"])
    return p1, permuted(P2, RENAME)


def test_entities_are_matched_through_the_regions_not_their_ids():
    s1, s2 = second_side()
    s2["physical_nodes"].reverse()  # and numbered the entities the other way round
    s2 = permuted(s2, {"p001": "p002", "p002": "p001"})
    figures = pass_agreement(2, P2, s2, first_earlier=EARLIER, second_earlier={1: s1})
    assert figures["entities"]["f1"] == 1.0
    assert figures["entity_type"]["rate"] == 1.0 and figures["binding"]["rate"] == 1.0
    pairs = record_pairs(2, P2, s2, first_earlier=EARLIER, second_earlier={1: s1})
    assert [p for p in pairs if p.collection == "physical_nodes"] == [
        RecordPair("physical_nodes", "p001", "p002", 1.0),
        RecordPair("physical_nodes", "p002", "p001", 1.0),
    ]
    assert [p for p in pairs if p.collection == "bindings"] == [
        RecordPair("bindings", f"b00{i}", f"b00{i}", 1.0) for i in (1, 2, 3)
    ]


def test_a_label_bound_to_another_entity_and_another_type():
    s1, _ = second_side()
    # the second bound the label "A" (their v003) to the surface, and typed the surface a rod
    s2 = {
        "problem_id": "p",
        "physical_nodes": [entity("p001", "body", ["v002"]), entity("p002", "rod", ["v001", "v003"])],
        "bindings": [
            binding("b001", "represents", "v002", "p001"),
            binding("b002", "represents", "v001", "p002"),
            binding("b003", "labels", "v003", "p002"),
        ],
        "ambiguities": [],
    }
    figures = pass_agreement(2, P2, s2, first_earlier=EARLIER, second_earlier={1: s1})
    # p001 {v001, v002} ↔ p001' {v001}: 1 shared, Jaccard 1/2; p002 {v004} ↔ p002' {v004, v002}: 1/2.
    assert figures["entities"]["matched"] == 2 and figures["entities"]["mean_score"] == 0.5
    # body/body, surface/rod: p_o 1/2, p_e = 1/2·1/2 (body) = 1/4, κ = (1/2 − 1/4)/(3/4) = 1/3
    assert figures["entity_type"]["kappa"] == {
        "kappa": pytest.approx(1 / 3),
        "n": 2,
        "observed": 0.5,
        "expected": 0.25,
    }
    # bound regions v001, v002, v004: the label v002 is bound to p001 ↦ p001' but the second bound it to p002'
    assert figures["binding"] == {"n": 3, "agree": 2, "rate": pytest.approx(2 / 3)}
    bindings = [
        p
        for p in record_pairs(2, P2, s2, first_earlier=EARLIER, second_earlier={1: s1})
        if p.collection == "bindings"
    ]
    assert bindings == [
        RecordPair("bindings", "b001", "b001", 1.0),
        RecordPair("bindings", "b002", None, 0.0),
        RecordPair("bindings", "b003", "b002", 1.0),
        RecordPair("bindings", None, "b003", 0.0),
    ]


def test_without_earlier_passes_region_ids_mean_the_same_region():
    figures = pass_agreement(2, P2, copy.deepcopy(P2))
    assert figures["entities"]["f1"] == 1.0 and figures["binding"]["rate"] == 1.0
    # renamed ids: the second's p001 {v002, v003}, p002 {v001}. The first's p001 {v001, v002} shares one id with
    # each (Jaccard 1/3 and 1/2: the tie goes to the higher Jaccard, p002); the first's p002 {v004} none.
    renamed = pass_agreement(2, P2, permuted(P2, RENAME))
    assert renamed["entities"]["matched"] == 1 and renamed["entities"]["mean_score"] == 0.5
    assert [p for p in record_pairs(2, P2, permuted(P2, RENAME)) if p.collection == "physical_nodes"] == [
        RecordPair("physical_nodes", "p001", "p002", 0.5),
        RecordPair("physical_nodes", "p002", None, 0.0),
        RecordPair("physical_nodes", None, "p001", 0.0),
    ]
    # regions v001 and v002 are on both sides: v001 ↦ p002 on both; v002 ↦ p002 against p001
    assert renamed["binding"] == {"n": 2, "agree": 1, "rate": 0.5}


# --------------------------------------------------------------------------------------------
# Quantities (Pass 3)
# --------------------------------------------------------------------------------------------


def test_quantities_kind_value_unit_owner():
    s1, s2 = second_side()
    s3 = permuted(P3, RENAME)
    s3["quantities"][0]["unit_latex"] = "g"  # wrong unit
    s3["quantities"][1]["owner_id"] = "p001"  # friction owned by the block
    s3["quantities"][1]["value_latex"] = "0.20"  # a value is compared as written, after the normalizer
    figures = pass_agreement(3, P3, s3, first_earlier=EARLIER, second_earlier={1: s1, 2: s2})
    assert figures["quantities"]["matched"] == 2
    # q001: anchors v003 and m002 and symbol m all shared: Jaccard 3/3; q002: only the symbol: 1/1
    assert figures["quantities"]["mean_score"] == 1.0
    assert figures["quantity_kind"]["rate"] == 1.0
    assert figures["quantity_value"] == {"n": 2, "agree": 1, "rate": 0.5}
    assert figures["quantity_unit"] == {"n": 2, "agree": 1, "rate": 0.5}
    assert figures["quantity_owner"] == {"n": 2, "agree": 1, "rate": 0.5}
    assert "entities" not in figures and "regions" not in figures


def test_quantities_match_by_anchor_before_symbol():
    # the second wrote the mass's symbol as M and gave the friction coefficient the symbol m
    s3 = copy.deepcopy(P3)
    s3["quantities"][0]["symbol_latex"] = "M"
    s3["quantities"][1]["symbol_latex"] = "m"
    pairs = record_pairs(3, P3, s3, first_earlier=EARLIER, second_earlier=EARLIER)
    assert [p for p in pairs if p.collection == "quantities"] == [
        RecordPair("quantities", "q001", "q001", pytest.approx(2 / 4)),  # v003, m002 shared; m ≠ M
        RecordPair("quantities", "q002", None, 0.0),
        RecordPair("quantities", None, "q002", 0.0),
    ]


def test_a_dropped_mention_and_an_owner_unmatched():
    s3 = copy.deepcopy(P3)
    s3["text_mentions"][0]["occurrence"] = 2  # another span
    figures = pass_agreement(3, P3, s3, first_earlier=EARLIER, second_earlier=EARLIER)
    assert figures["mentions"]["matched"] == 1 and figures["mentions"]["recall"] == 0.5


# --------------------------------------------------------------------------------------------
# κ and pooling
# --------------------------------------------------------------------------------------------


def test_kappa_on_a_textbook_two_by_two_table():
    # yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o 0.7, p_e 0.5·0.6 + 0.5·0.4 = 0.5, κ 0.4
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    result = cohen_kappa(pairs)
    assert result == {
        "kappa": pytest.approx(0.4),
        "n": 50,
        "observed": pytest.approx(0.7),
        "expected": pytest.approx(0.5),
    }


def test_kappa_on_a_three_by_three_table():
    # rows first, columns second: a b c
    table = {("a", "a"): 25, ("a", "b"): 2, ("a", "c"): 3, ("b", "a"): 4, ("b", "b"): 30, ("b", "c"): 6,
             ("c", "a"): 1, ("c", "b"): 8, ("c", "c"): 21}  # fmt: skip
    pairs = [pair for pair, count in table.items() for _ in range(count)]
    # n 100, p_o 0.76; first a 30 b 40 c 30, second a 30 b 40 c 30: p_e 0.09 + 0.16 + 0.09 = 0.34
    result = cohen_kappa(pairs)
    assert result["n"] == 100
    assert result["observed"] == pytest.approx(0.76) and result["expected"] == pytest.approx(0.34)
    assert result["kappa"] == pytest.approx(0.42 / 0.66)


def test_kappa_without_pairs():
    assert cohen_kappa([]) == {"kappa": None, "n": 0, "observed": None, "expected": None}


def test_combine_pools_counts_not_rates():
    one = pass_agreement(
        1, pass1(box("v001", [100, 100, 200, 200])), pass1(box("v001", [120, 100, 220, 200]))
    )
    first = pass1(*(box(f"v00{i}", [100 * i, 0, 100 * i + 50, 50]) for i in (1, 2, 3)))
    two = pass_agreement(1, first, pass1(first["visual_nodes"][0]))
    pooled = combine([one, two])
    assert pooled["parents"] == 2
    assert pooled["regions"]["first"] == 4 and pooled["regions"]["matched"] == 2
    assert pooled["regions"]["recall"] == 0.5 and pooled["regions"]["precision"] == 1.0
    assert pooled["regions"]["mean_score"] == pytest.approx((2 / 3 + 1) / 2)
    assert combine([]) == {"parents": 0}


def test_combine_pools_kappa_pairs():
    s1, _ = second_side()
    s2 = permuted(P2, RENAME)
    s2["physical_nodes"][1]["type"] = "rod"
    a = pass_agreement(2, P2, copy.deepcopy(P2), first_earlier=EARLIER, second_earlier=EARLIER)
    b = pass_agreement(2, P2, s2, first_earlier=EARLIER, second_earlier={1: s1})
    pooled = combine([a, b])["entity_type"]
    # pairs: body/body ×2, surface/surface, surface/rod → p_o 3/4; first body 1/2 surface 1/2,
    # second body 1/2 surface 1/4 rod 1/4: p_e 1/4 + 1/8 = 3/8; κ (3/4 − 3/8)/(5/8) = 0.6
    assert pooled["n"] == 4 and pooled["agree"] == 3
    assert pooled["kappa"]["kappa"] == pytest.approx(0.6)


def test_an_unknown_pass_is_refused():
    with pytest.raises(ValueError, match="passes 1–4"):
        pass_agreement(5, {}, {})


def test_malformed_drafts_do_not_raise():
    broken = {
        "visual_nodes": [{"id": "v001", "bbox_1000": "nope"}, "x", {"no": "id"}],
        "physical_nodes": None,
    }
    figures = pass_agreement(1, broken, P1)
    assert figures["regions"]["first"] == 1 and figures["regions"]["matched"] == 0
    assert (
        pass_agreement(2, broken, P2, first_earlier={1: broken}, second_earlier=EARLIER)["entities"]["first"]
        == 0
    )
