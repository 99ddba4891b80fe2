"""Kit §5.6 diagnostics as the Kit computes them: public-text availability and the nearest region.

The first twelve availability vectors are the Kit's own (physalign_converter/tests/test_native.py,
``DiagnosticTests``); the rest cover the spacing, NFC, U+2212, no-break-space, LaTeX-wrapper, finite-
grammar and scanned-string rules, with the values the Kit's ``read_availability`` gives for them.
Each row: public input, expected reading, Kit status, full hits ``(field, start, end, text)``,
component hits ``(component, start, end)``, distinct public numeric literals.
"""

from __future__ import annotations

import copy
import json
from io import StringIO

import pytest
from django.core.management import call_command

from kit.canonical import digest
from probes.compiler import compile_parent
from probes.compiler.diagnostics import (
    nearest_region,
    public_text_fields,
    read_availability,
    with_outcome,
)

from . import kit_demo as demo

U = "/messages/user"


def _user(text, **more):
    return {"messages": {"user": text}, **more}


VECTORS = [
    # --- the Kit's DiagnosticTests
    (
        "options",
        _user("Stem: which value? Options: A. 2 kg B. 3 kg"),
        "2 kg",
        "verbatim_available",
        [(U, 31, 35, "2 kg")],
        [("2", 31, 32), ("kg", 33, 35), ("kg", 41, 43)],
        2,
    ),
    (
        "alt",
        _user("Read R1", attachments=[{"path": "x.png", "alt": "Mass = 2kg"}]),
        "2 kg",
        "verbatim_available",
        [("/attachments/0/alt", 7, 10, "2kg")],
        [],
        0,
    ),
    ("emoji_offsets", _user("中文😀之后 2kg"), "2 kg", "verbatim_available", [(U, 6, 9, "2kg")], [], 0),
    ("ohm_offsets", _user("阻值 2Ω"), "2 Ω", "verbatim_available", [(U, 3, 5, "2Ω")], [], 1),
    ("absent_label", _user("Choose an object."), "z_9", "not_found", [], [], 0),
    ("no_arithmetic", _user("8-(2/3)"), "(8-2)/3", "unknown", [], [], 3),
    ("no_unit_conversion", _user("0.02 m"), "2 cm", "not_found", [], [], 1),
    ("no_case_folding", _user("M"), "m", "not_found", [], [], 0),
    ("digit_boundary", _user("22"), "2", "not_found", [], [], 1),
    ("unsupported_latex", _user("anything"), r"\frac{1}{2}", "unknown", [], [], 0),
    (
        "latex_wrapped",
        _user(r"$2\,\mathrm{kg}$"),
        "2kg",
        "verbatim_available",
        [(U, 1, 15, r"2\,\mathrm{kg}")],
        [("2", 1, 2), ("kg", 12, 14)],
        1,
    ),
    (
        "private_and_paths_not_scanned",
        {
            "messages": {"user": "question"},
            "private": {"packet": "2 kg"},
            "attachments": [{"path": "2 kg.png"}],
        },
        "2 kg",
        "not_found",
        [],
        [],
        0,
    ),
    # --- finite grammar: outside it, no hit means unknown (never not_found)
    ("degree_absent", _user("The incline makes an angle of 37 degrees."), "37°", "unknown", [], [], 1),
    ("degree_present", _user("θ = 37° at the base"), "37°", "verbatim_available", [(U, 4, 7, "37°")], [], 1),
    ("unlisted_unit", _user("q = 4.0 nC"), "+4.0 nC", "unknown", [], [], 1),
    ("unsupported_gold", _user("x"), "$x", "unknown", [], [], 0),
    # --- NFC, with offsets in the original string
    ("nfc_ohm_sign", _user("R = 2\u2126"), "2 Ω", "verbatim_available", [(U, 4, 6, "2\u2126")], [], 1),
    (
        "nfc_shifts_offsets",
        _user("A\u030a then 2 kg"),
        "2 kg",
        "verbatim_available",
        [(U, 8, 12, "2 kg")],
        [("2", 8, 9), ("kg", 10, 12)],
        1,
    ),
    # --- U+2212 minus, either side
    (
        "unicode_minus_in_text",
        _user("U = \u22123 V"),
        "-3 V",
        "verbatim_available",
        [(U, 4, 8, "\u22123 V")],
        [("-3", 4, 6), ("V", 7, 8)],
        1,
    ),
    ("unicode_minus_in_gold", _user("U=-3V"), "\u22123 V", "verbatim_available", [(U, 2, 5, "-3V")], [], 0),
    # --- separators between number and unit
    (
        "no_break_space",
        _user("m = 2\u00a0kg"),
        "2 kg",
        "verbatim_available",
        [(U, 4, 8, "2\u00a0kg")],
        [("2", 4, 5), ("kg", 6, 8)],
        1,
    ),
    (
        "narrow_no_break_space",
        _user("m = 2\u202fkg"),
        "2 kg",
        "verbatim_available",
        [(U, 4, 8, "2\u202fkg")],
        [("2", 4, 5), ("kg", 6, 8)],
        1,
    ),
    (
        "newline_is_not_a_separator",
        _user("2\nkg"),
        "2 kg",
        "components_available",
        [],
        [("2", 0, 1), ("kg", 2, 4)],
        1,
    ),
    (
        "text_wrapper_and_thick_space",
        _user(r"$m = 2\;\text{kg}$"),
        "2 kg",
        "verbatim_available",
        [(U, 5, 17, r"2\;\text{kg}")],
        [("2", 5, 6), ("kg", 14, 16)],
        1,
    ),
    # --- components, multiplicity, boundaries, structured messages, literal counting
    (
        "components_only",
        _user("The mass is 5 kg; the length is 2 m."),
        "2 kg",
        "components_available",
        [],
        [("2", 32, 33), ("kg", 14, 16)],
        2,
    ),
    (
        "multiple_hits_word_boundary",
        _user("F1 pulls the block; F12 is a label; F1 again"),
        "F1",
        "verbatim_available",
        [(U, 0, 2, "F1"), (U, 36, 38, "F1")],
        [],
        0,
    ),
    ("greek_letters_are_word_characters", _user("αm and βm"), "m", "not_found", [], [], 0),
    (
        "dollar_wrapped_label",
        _user("point $P_1$ on the rod"),
        "P_1",
        "verbatim_available",
        [(U, 7, 10, "P_1")],
        [],
        0,
    ),
    (
        "structured_parts_skip_image_urls",
        {
            "messages": {
                "system": "S 1",
                "user": [
                    {"type": "text", "text": "Mass 2 kg"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,2 kg"}},
                ],
            }
        },
        "2 kg",
        "verbatim_available",
        [("/messages/user/0/text", 5, 9, "2 kg")],
        [("2", 5, 6), ("kg", 7, 9)],
        2,
    ),
    (
        "numeric_literal_positions",
        {"messages": {"system": "You read 3 diagrams.", "user": "2 kg, 2 kg, 3.5 m, x2, -1 and .5"}},
        "3.5 m",
        "verbatim_available",
        [(U, 12, 17, "3.5 m")],
        [("3.5", 12, 15), ("m", 16, 17)],
        5,
    ),
]


@pytest.mark.parametrize(
    ("name", "raw", "expected", "status", "hits", "components", "literals"),
    VECTORS,
    ids=[v[0] for v in VECTORS],
)
def test_availability_matches_the_kit(name, raw, expected, status, hits, components, literals):
    result = read_availability(raw, expected)
    assert result["public_text_availability"] == status
    assert [(h["field"], h["start"], h["end"], h["text"]) for h in result["full_hits"]] == hits
    assert [(h["component"], h["start"], h["end"]) for h in result["component_hits"]] == components
    assert result["hit_multiplicity"] == {0: "none", 1: "one"}.get(len(hits), "multiple")
    assert result["distinct_public_numeric_literals"] == literals
    assert result["vision_required"] is None and result["unique_value_bound_to_R"] == "not_established"
    # offsets are code points of the original string: the slice is the hit's text
    fields = dict(public_text_fields(raw))
    for hit in result["full_hits"] + result["component_hits"]:
        assert fields[hit["field"]][hit["start"] : hit["end"]] == hit["text"]


def test_kit_vectors_are_all_there():
    assert len(VECTORS) == 30
    assert len({v[0] for v in VECTORS}) == len(VECTORS)


def test_scanned_fields_and_raw_text_root_follow_message_order():
    raw = {
        "messages": {"system": "You ground.", "user": "Read R1."},
        "attachment_ids": ["V1", "img_0"],
        "attachments": [
            {"asset_id": "V1", "path": "views/V1.png", "caption": "Diagram 1", "title": ["T", "U"]}
        ],
    }
    result = read_availability(raw, "m")
    assert result["scanned_fields"] == [
        "/messages/system",
        "/messages/user",
        "/attachments/0/title/0",
        "/attachments/0/title/1",
        "/attachments/0/caption",
    ]
    assert result["raw_text_root"] == digest(
        [
            ["/messages/system", "You ground."],
            ["/messages/user", "Read R1."],
            ["/attachments/0/title/0", "T"],
            ["/attachments/0/title/1", "U"],
            ["/attachments/0/caption", "Diagram 1"],
        ]
    )
    assert result["normalizer_id"] == "ocr_label_v2_1"
    assert set(result) == {
        "public_text_availability",
        "normalizer_id",
        "full_hits",
        "component_hits",
        "scanned_fields",
        "raw_text_root",
        "hit_multiplicity",
        "distinct_public_numeric_literals",
        "unique_value_bound_to_R",
        "vision_required",
        "scope_note",
        "priority",
    }


def test_full_hit_has_priority_over_components_and_carries_the_normalized_target():
    result = read_availability(_user("2 kg and 2 kg"), "2kg")
    assert result["public_text_availability"] == "verbatim_available"
    assert result["hit_multiplicity"] == "multiple"
    assert {h["normalized"] for h in result["full_hits"]} == {"2 kg"}


def test_literal_profile_is_accepted_and_unknown_profile_refused():
    assert read_availability(_user("x = A "), "A", "ocr_literal_v2_1")["normalizer_id"] == "ocr_literal_v2_1"
    with pytest.raises(ValueError, match="unknown normalizer"):
        read_availability(_user("x"), "x", "ocr_fuzzy")


# Nearest region --------------------------------------------------------------------------------
def _loc(box, image="img"):
    return {"kind": "visual", "image_id": image, "geometry": {"type": "bbox", "bbox_1000": box}}


def _view():
    """The Kit's DiagnosticTests.view()."""
    return {
        "query_anchor_ids": ["R1"],
        "anchors": {"R1": _loc([490, 490, 510, 510])},
        "candidates": [
            {"alias": "E1", "kind": "entity", "locators": [_loc([600, 490, 700, 510])]},
            {"alias": "E2", "kind": "entity", "locators": [_loc([490, 700, 510, 800])]},
        ],
    }


def test_nearest_uses_pixel_aspect_ratio():
    # horizontal gap 100 px, vertical gap 20 px on a 1000×100 image, though normalized gaps are 90 vs 190
    n = nearest_region(_view(), {"img": (1000, 100)})
    assert n == {
        "status": "predicted",
        "predicted_alias": "E2",
        "tied_aliases": [],
        "squared_distance_numerators": {"E1": 40_000_000_000, "E2": 1_600_000_000},
        "distance_denominator": 4_000_000,
        "policy_id": "public_R_center_to_rectangle_pixel_squared_v1",
    }
    assert n["squared_distance_numerators"]["E1"] / n["distance_denominator"] == 10000
    assert n["squared_distance_numerators"]["E2"] / n["distance_denominator"] == 400


def test_nearest_ties_are_reported_not_broken():
    view = _view()
    view["candidates"][1]["locators"] = copy.deepcopy(view["candidates"][0]["locators"])
    n = nearest_region(view, {"img": (100, 100)})
    assert (n["status"], n["predicted_alias"], n["tied_aliases"]) == ("tie", None, ["E1", "E2"])
    assert with_outcome(n, {"E1": {"id": "a"}, "E2": {"id": "b"}}, [{"id": "a"}])["outcome"] == "tie"


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda v: v["anchors"].update(R1={"kind": "text"}), "text_R_has_no_visual_origin"),
        (lambda v: v.update(query_anchor_ids=["R1", "R2"]), "query_arity"),
        (
            lambda v: v["anchors"]["R1"].update(geometry={"type": "point", "xy_1000": [5, 5]}),
            "unsupported_geometry",
        ),
        (
            lambda v: v["candidates"][0]["locators"].append(
                {"kind": "visual", "image_id": "img", "geometry": {"type": "point", "xy_1000": [5, 5]}}
            ),
            "unsupported_candidate_geometry",
        ),
        (
            lambda v: v["candidates"][1].update(locators=[_loc([1, 1, 2, 2], "img_1")]),
            "cross_image_candidate_distance_undefined",
        ),
    ],
)
def test_nearest_not_applicable_reasons(edit, reason):
    view = _view()
    edit(view)
    n = nearest_region(view, {"img": (100, 100), "img_1": (100, 100)})
    assert n == {"status": "not_applicable", "reason": reason}
    assert with_outcome(n, {}, [])["outcome"] == "not_applicable"


def test_nearest_ignores_text_locators_and_takes_the_nearest_part():
    view = _view()
    view["candidates"][0]["locators"] += [{"kind": "text", "section": "stem"}, _loc([495, 495, 505, 505])]
    n = nearest_region(view, {"img": (1000, 100)})
    assert n["squared_distance_numerators"]["E1"] == 0 and n["predicted_alias"] == "E1"


def test_outcome_is_attached_after_the_prediction():
    n = nearest_region(_view(), {"img": (1000, 100)})
    cmap = {"E1": {"kind": "entity", "id": "PE-1"}, "E2": {"kind": "entity", "id": "PE-2"}}
    assert with_outcome(n, cmap, [{"kind": "entity", "id": "PE-2"}]) == {**n, "outcome": "correct"}
    assert with_outcome(n, cmap, [{"kind": "entity", "id": "PE-1"}])["outcome"] == "wrong"
    assert "outcome" not in n


# Metadata of compiled probes (native_probe_metadata_v1) ---------------------------------------
KIT_METADATA_FIELDS = {
    "schema_version",
    "interface",
    "group_id",
    "evidence_group",
    "read_origin",
    "public_text_availability",
    "vision_required",
    "representation_kind",
    "candidate_representation",
    "candidate_native_types_PRIVATE",
    "candidate_count",
    "same_native_type_candidate_count",
    "native_types_homogeneous",
    "image_count",
    "source_language",
    "source_namespace",
    "source_domain",
    "selector",
    "fallback_reason",
    "singleton_basis",
    "nearest_region",
    "chance_probability",
    "packet_state",
    "packet_policy_id",
    "packet_nonempty_candidate",
    "P_approved",
    "L_candidate",
    "repair_policy_id",
    "repair_applied_to_query",
    "source_approved",
    "transformation_passed",
    "benchmark_QA_approval",
    "human_item_review",
}
AVAILABILITY_DETAIL = {
    "normalizer_id",
    "full_hits",
    "component_hits",
    "scanned_fields",
    "raw_text_root",
    "hit_multiplicity",
    "distinct_public_numeric_literals",
    "unique_value_bound_to_R",
    "scope_note",
    "priority",
}


@pytest.fixture(scope="module")
def demo_metadata():
    return {p.logical_probe_id: p for p in compile_parent(demo.demo_source()).probes}


@pytest.mark.parametrize(
    ("qid", "origin", "availability"),
    [
        (demo.T02, "none", "not_applicable"),
        (demo.T03_IMAGE, "image", "verbatim_available"),
        (demo.T03_TEXT, "source_text", "not_applicable"),
    ],
)
def test_read_origin_and_field_names_follow_the_kit(demo_metadata, qid, origin, availability):
    probe = demo_metadata[qid]
    meta = probe.metadata
    assert meta["read_origin"] == origin
    assert meta["public_text_availability"] == availability
    reads = bool(probe.key["read_targets"])
    assert set(meta) == KIT_METADATA_FIELDS | (AVAILABILITY_DETAIL if reads else set())
    assert meta["L_candidate"] is reads
    assert meta["candidate_native_types_PRIVATE"] == {"E1": "body", "E2": "body"}
    assert meta["candidate_representation"] == {"E1": "entity_geometry", "E2": "entity_geometry"}
    assert (meta["source_approved"], meta["transformation_passed"], meta["repair_policy_id"]) == (
        True,
        True,
        None,
    )


def test_t03_image_availability_and_nearest_region(demo_metadata):
    probe = demo_metadata[demo.T03_IMAGE]
    meta = probe.metadata
    # the stem says "The mass is m.": the glyph's reading is already in the prompt
    assert [(h["field"], h["start"], h["end"], h["text"]) for h in meta["full_hits"]] == [(U, 66, 67, "m")]
    assert probe.raw_messages["user"][66:67] == "m"
    assert meta["hit_multiplicity"] == "one"
    assert meta["scanned_fields"] == ["/messages/system", "/messages/user"]
    assert meta["raw_text_root"] == digest(
        [["/messages/system", probe.raw_messages["system"]], [U, probe.raw_messages["user"]]]
    )
    # glyph m [70,200,115,280] on the 320×200 original: block A (E2) 64,000/2000 px below, block B far right
    assert meta["nearest_region"] == {
        "status": "predicted",
        "predicted_alias": "E2",
        "tied_aliases": [],
        "squared_distance_numerators": {"E1": 105_474_560_000, "E2": 4_096_000_000},
        "distance_denominator": 4_000_000,
        "policy_id": "public_R_center_to_rectangle_pixel_squared_v1",
        "outcome": "correct",
    }


def test_text_query_has_no_nearest_region(demo_metadata):
    assert demo_metadata[demo.T02].metadata["nearest_region"] == {
        "status": "not_applicable",
        "reason": "text_R_has_no_visual_origin",
        "outcome": "not_applicable",
    }


# Where the metadata is exposed: show_probe and the probe API's private part -----------------------
@pytest.fixture
def stored(demo_parent):
    from probes.services import compile_run_create, compile_run_execute

    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)


def test_show_probe_exposes_the_kit_metadata(stored):
    out = StringIO()
    call_command("show_probe", demo.T03_IMAGE, "--format", "json", stdout=out)
    doc = json.loads(out.getvalue())
    assert set(doc["metadata"]) == KIT_METADATA_FIELDS | AVAILABILITY_DETAIL
    assert doc["metadata"]["nearest_region"]["predicted_alias"] == "E2"
    assert doc["metadata"]["candidate_native_types_PRIVATE"] == {"E1": "body", "E2": "body"}
    # The Kit's asset records: the original image and the rendered views.
    assert set(doc["assets"]) == {"img_0", "V1", "V2", "V3"}
    assert doc["assets"]["img_0"]["width"] == 320
    out = StringIO()
    call_command("show_probe", demo.T02, stdout=out)
    text = out.getvalue()
    assert "read_origin: none  public_text_availability: not_applicable  hit_multiplicity: n/a" in text
    assert "nearest_region: not_applicable text_R_has_no_visual_origin (outcome not_applicable)" in text
    assert "candidate types: E1=body, E2=body" in text


def test_probe_api_gives_the_metadata_only_in_the_private_part(client, scorer, stored):
    client.force_login(scorer)
    body = client.get(f"/api/probes/{demo.T03_TEXT}/").json()
    assert body["private"]["metadata"]["read_origin"] == "source_text"
    assert body["private"]["metadata"]["fallback_reason"] == "no_source_text_glyph_anchor"
    from django.contrib.auth.models import Permission

    scorer.user_permissions.remove(Permission.objects.get(codename="view_private_mapping"))
    client.force_login(type(scorer).objects.get(pk=scorer.pk))  # an admin without the scorer permission
    body = client.get(f"/api/probes/{demo.T03_TEXT}/").json()
    assert "private" not in body and "metadata" not in body
