"""Parsing (Kit §5.1), output states (§5.2), field scoring (§5.3) and the normalizer table (§5.4)."""

from __future__ import annotations

import pytest

from evaluation.parsing import parse_response
from evaluation.scoring import ModelResponse, score
from kit.normalizers import LABEL, LITERAL, UnsupportedGoldReading, equivalent, normalize

LABEL_TABLE = [
    ("2kg", "2 kg"),
    ("2\u00a0kg", "2 kg"),
    ("\u22122 kg", "-2 kg"),
    ("$2\\,\\mathrm{kg}$", "2 kg"),
    ("\\(2\\;kg\\)", "2 kg"),
    ("$$x$$", "x"),
    ("\\text{Kg}", "Kg"),
    ("2000g", "2000 g"),
    ("2.0kg", "2.0 kg"),
    ("2 Kg", "2 Kg"),
    ("m_{1}", "m_{1}"),
    ("\u20132kg", "\u20132kg"),
    ("\\vec{v}", None),
    ("\\mathbf{m}", None),
    ("$x", None),
    ("$$$$", None),
    (" \u200b ", None),
    ("M", "M"),
    ("\\[ F \\]", "F"),
    ("2\u202fkg", "2 kg"),
    ("  .5 m ", ".5 m"),
    ("+3mA", "+3 mA"),
    ("3 Ω", "3 Ω"),
    ("e\u0301", "\u00e9"),
    ("\\frac{1}{2}", None),
    ("$2$ $", None),
    ("$$x$", None),
    ("\\(x", None),
    ("a\\ b", "a b"),
    (5, None),
    (None, None),
    ("", None),
]


@pytest.mark.parametrize(("value", "expected"), LABEL_TABLE)
def test_label_normalizer_table(value, expected):
    assert normalize(value, LABEL) == expected


def test_label_inequalities_from_the_kit():
    assert normalize("2000g", LABEL) != normalize("2 kg", LABEL)
    assert normalize("2.0kg", LABEL) != normalize("2 kg", LABEL)
    assert normalize("\u20132kg", LABEL) != normalize("-2 kg", LABEL)
    assert normalize("m_{1}", LABEL) != normalize("m_1", LABEL)
    assert normalize("M", LABEL) != normalize("m", LABEL)


def test_literal_normalizer_keeps_everything_but_outer_space_and_nfc():
    assert normalize("  2kg ", LITERAL) == "2kg"
    assert normalize("$x$", LITERAL) == "$x$"
    assert not equivalent("2kg", "2 kg", LITERAL)
    assert equivalent("2kg", "2 kg", LABEL)
    assert normalize("\u200b", LITERAL) is None


def test_unsupported_gold_is_an_error_and_unknown_profile_raises():
    with pytest.raises(UnsupportedGoldReading):
        equivalent("x", "\\vec{v}", LABEL)
    with pytest.raises(ValueError):
        normalize("x", "ocr_fuzzy")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"owner": "E1"}', {"owner": "E1"}),
        ('  \n{"owner": "E1"}\n ', {"owner": "E1"}),
        ('```json\n{"owner": "E1"}\n```', {"owner": "E1"}),
        ('```\n{"owner": "E1"}\n```', {"owner": "E1"}),
        ('```json  \r\n{"owner": "E1"}\r\n```', {"owner": "E1"}),
        ('```json{"owner": "E1"}```', None),  # no newline after the fence
        ('```json\n{"owner": "E1"}\n```\nthanks', None),  # text after the fence
        ('```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```', None),  # two fences
        ('The answer: {"owner": "E1"}', None),  # prose
        ('{"owner": "E1"} done', None),
        ('{"owner": "E1"}{"owner": "E2"}', None),  # two objects
        ('["E1"]', None),
        ('"E1"', None),
        ("", None),
        ("null", None),
        ('{"owner": "E1", "owner": "E2"}', None),  # duplicate key
        ('{"read": {"R1": "m", "R1": "n"}, "owner": "E1"}', None),  # nested duplicate
        ('{"owner": "E1", "x": NaN}', None),
        ('{"x": Infinity}', None),
        ('{"x": -Infinity}', None),
        ("{'owner': 'E1'}", None),
        ('{"owner": "E1",}', None),
    ],
)
def test_parse_response(text, expected):
    assert parse_response(text) == expected


def test_parse_rejects_non_strings():
    assert parse_response(None) is None
    assert parse_response({"owner": "E1"}) is None
    assert parse_response(["E1"]) is None
    assert parse_response(5) is None
    assert parse_response(2.5) is None
    assert parse_response(b'{"owner": "E1"}') is None


@pytest.mark.parametrize(
    "output",
    [["E2"], [{"read": "2 kg", "owner": "E2"}], 5, 2.5, True, None, {"read": "2 kg", "owner": "E2"}],
    ids=repr,
)
def test_non_text_output_is_unparseable_where_the_kit_raises(output):
    # the Kit's _parse_response raises TypeError on a non-string response; we score it unparseable
    raw = score(ModelResponse(output, "completed"), _key(), "raw")
    assert (raw.status, raw.C, raw.G, raw.J, raw.object_valid, raw.field_valid) == (
        "unparseable",
        0,
        0,
        0,
        False,
        {},
    )
    gold = score(ModelResponse(output, "completed"), _key(), "gold")
    assert (gold.status, gold.C, gold.G) == ("unparseable", None, 0)
    if output is not None:  # the bare-value shorthand: any non-None value is a completed output
        assert score(output, _key(), "raw").status == "unparseable"


def test_bare_none_is_no_response_not_unparseable():
    assert (score(None, _key(), "raw").status, score(None, _key(), "raw").G) == ("infra_missing", None)


def _key(reads=True, multi=False):
    read_targets = []
    if reads:
        read_targets = [{"anchor_alias": "R1", "normalizer_id": LABEL, "expected": "2 kg"}]
        if multi:
            read_targets.append({"anchor_alias": "R2", "normalizer_id": LABEL, "expected": "m"})
    return {
        "candidate_map": {"E1": {"id": "ent_a"}, "E2": {"id": "ent_b"}, "E3": {"id": "ent_c"}},
        "gold_targets": [{"id": "ent_b"}],
        "read_targets": read_targets,
        "response_contract": {
            "binding_key": "owner",
            "cardinality": "one",
            "read_shape": "object_by_anchor" if multi else ("string" if reads else "none"),
        },
    }


def test_fields_are_scored_independently():
    s = score('{"read": "2kg", "owner": "E1"}', _key(), "raw")
    assert (s.status, s.C, s.G, s.J) == ("completed", 1, 0, 0)
    s = score('{"read": "2 g", "owner": " E2 "}', _key(), "raw")
    assert (s.C, s.G, s.J) == (0, 1, 0)
    s = score('{"read": "$2\\\\,\\\\mathrm{kg}$", "owner": "E2", "extra": 1}', _key(), "raw")
    assert (s.C, s.G, s.J) == (1, 1, 1)


def test_alias_rules_case_type_and_domain():
    assert score('{"owner": "e2"}', _key(False), "raw").G == 0
    assert score('{"owner": ["E2"]}', _key(False), "raw").G == 0
    unknown = score('{"owner": "E9"}', _key(False), "raw")
    assert unknown.G == 0 and unknown.field_valid == {"owner": False}
    assert score('{"owner": "ent_b"}', _key(False), "raw").G == 0  # canonical ids are not aliases


def test_c_only_for_raw_probes_with_reads():
    assert score('{"owner": "E2"}', _key(False), "raw").C is None
    gold = score('{"read": "2 kg", "owner": "E2"}', _key(), "gold")
    assert (gold.C, gold.G, gold.J) == (None, 1, None)
    assert score('{"read": "2 kg", "owner": "E2"}', _key(), "no_image").C is None
    missing_read = score('{"owner": "E2"}', _key(), "raw")
    assert (missing_read.C, missing_read.G) == (0, 1)


def test_multi_anchor_read_needs_exact_key_set():
    key = _key(multi=True)
    assert score('{"read": {"R1": "2kg", "R2": "m"}, "owner": "E2"}', key, "raw").C == 1
    assert score('{"read": {"R1": "2kg"}, "owner": "E2"}', key, "raw").C == 0
    extra = score('{"read": {"R1": "2kg", "R2": "m", "R3": "x"}, "owner": "E2"}', key, "raw")
    assert (extra.C, extra.G) == (0, 1)
    assert score('{"read": "2kg", "owner": "E2"}', key, "raw").C == 0


def test_a_single_anchor_object_by_anchor_contract_needs_the_object():
    """The read shape is the contract's, by the Kit's name; one target under object_by_anchor is still an object."""
    key = _key()
    key["response_contract"]["read_shape"] = "object_by_anchor"
    assert score('{"read": {"R1": "2kg"}, "owner": "E2"}', key, "raw").C == 1
    assert score('{"read": "2kg", "owner": "E2"}', key, "raw").C == 0


def test_output_states():
    valid = '{"read": "2 kg", "owner": "E2"}'
    truncated = score(ModelResponse(valid, "truncated"), _key(), "raw")
    assert (truncated.status, truncated.C, truncated.G, truncated.J) == ("truncated", 0, 0, 0)
    refusal = score(ModelResponse(valid, "refusal"), _key(), "gold")
    assert (refusal.status, refusal.C, refusal.G) == ("refusal", None, 0)
    missing = score(ModelResponse(None, "infra_missing"), _key(), "raw")
    assert (missing.status, missing.C, missing.G, missing.J) == ("infra_missing", None, None, None)
    bad = score("I think E2", _key(), "raw")
    assert (bad.status, bad.C, bad.G, bad.J) == ("unparseable", 0, 0, 0)
    assert score("I think E2", _key(False), "raw").C is None


def test_set_cardinality_exact_set_equality():
    key = _key(False)
    key["response_contract"]["cardinality"] = "set"
    key["gold_targets"] = [{"id": "ent_a"}, {"id": "ent_b"}]
    assert score('{"owner": ["E2", "E1", "E1"]}', key, "raw").G == 1
    partial = score('{"owner": ["E1"]}', key, "raw")
    assert partial.G == 0 and partial.set_f1 == pytest.approx(2 / 3)
    assert score('{"owner": "E1"}', key, "raw").G == 0


# The reasons (issue 15 item 11): each score with the rule that decided it, from the scorer itself --------------
GOLD_ENTITY = "PE-eae41e91c5291580a371bfa47ae67ad1105996e5abe87686c6c8555f01a202a0"
OTHER_ENTITY = "PE-f6fd7b3d38fdc500661c992e8a2a4e427e9ae7b15cbacaa6aff4014b98e74926"


def _probe_key():
    return {
        "candidate_map": {
            "E1": {"id": OTHER_ENTITY, "kind": "entity"},
            "E2": {"id": GOLD_ENTITY, "kind": "entity"},
        },
        "gold_targets": [{"id": GOLD_ENTITY, "kind": "entity"}],
        "read_targets": [{"anchor_alias": "R1", "normalizer_id": LABEL, "expected": "6 Ω"}],
        "response_contract": {"binding_key": "owner", "cardinality": "one", "read_shape": "string"},
    }


def _reasons(output, condition="raw", key=None):
    s = score(output, key or _probe_key(), condition)
    return (s.C, s.G, s.J), (s.reasons.C, s.reasons.G, s.reasons.J)


def test_reasons_of_a_correct_answer():
    assert _reasons('{"read": "6Ω", "owner": "E2"}') == (
        (1, 1, 1),
        (
            'C = 1: the parsed reading "6Ω" (normalized "6 Ω") matches the expected "6 Ω" under the label '
            "normalizer (ocr_label_v2_1)",
            "G = 1: chose E2 (entity PE-eae41e91), the expected target",
            "J = 1: C × G = 1 × 1; the reading and the grounding are both correct",
        ),
    )


def test_reasons_of_a_wrong_grounding():
    assert _reasons('{"read": "6 Ω", "owner": "E1"}') == (
        (1, 0, 0),
        (
            'C = 1: the parsed reading "6 Ω" matches the expected "6 Ω" under the label normalizer (ocr_label_v2_1)',
            "G = 0: chose E1 (entity PE-f6fd7b3d), expected E2 (entity PE-eae41e91)",
            "J = 0: C × G = 1 × 0; the reading is correct but the grounding is wrong",
        ),
    )


def test_reasons_of_a_wrong_reading():
    assert _reasons('{"read": "6 V", "owner": "E2"}') == (
        (0, 1, 0),
        (
            'C = 0: the parsed reading "6 V" does not match the expected "6 Ω" under the label normalizer '
            "(ocr_label_v2_1)",
            "G = 1: chose E2 (entity PE-eae41e91), the expected target",
            "J = 0: C × G = 0 × 1; the grounding is correct but the reading is wrong",
        ),
    )


def test_reasons_of_an_unparseable_output():
    why = "the output did not parse: it is not a JSON object (it begins “The owner is E2.”)"
    assert _reasons("The owner is E2.") == (
        (0, 0, 0),
        (
            f"C = 0: {why}; such an output fails every field",
            f"G = 0: {why}; such an output fails every field",
            "J = 0: C × G = 0 × 0; neither the reading nor the grounding is correct",
        ),
    )
    assert _reasons('{"owner": "E2", "owner": "E1"}')[1][1] == (
        "G = 0: the output did not parse: it is not valid JSON (duplicate key 'owner'); "
        "such an output fails every field"
    )


def test_reasons_of_invalid_fields_and_of_scores_that_do_not_apply():
    (_, _, _), (c, g, j) = _reasons('{"owner": "e2"}')
    assert c == 'C = 0: the answer has no "read" field; expected "6 Ω"'
    assert (
        g
        == 'G = 0: "e2" is not a candidate label (the candidates are E1, E2); expected E2 (entity PE-eae41e91)'
    )
    assert (
        _reasons('{"read": "6 Ω"}')[1][1]
        == 'G = 0: the answer has no "owner" field; expected E2 (entity PE-eae41e91)'
    )
    assert _reasons('{"read": "6 Ω", "owner": "E2"}', "gold")[1] == (
        "not scored: C is scored only under the raw (Base) condition; this request is gold (+GT)",
        "G = 1: chose E2 (entity PE-eae41e91), the expected target",
        "not scored: J = C × G exists only where C does",
    )
    missing = (
        "not scored: no response was served (infrastructure missing); it counts as missing, never as wrong"
    )
    assert _reasons(None)[1] == (missing, missing, missing)
    assert _reasons(ModelResponse('{"owner": "E2"}', "refusal"))[1][1] == (
        "G = 0: the model refused; such an output fails every field"
    )


def test_reasons_never_change_a_score():
    """The explanation is extra: every score is what it was, and two scores compare equal without it."""
    for output in ('{"read": "6Ω", "owner": "E2"}', '{"owner": "E1"}', "nope", None):
        s = score(output, _probe_key(), "raw")
        plain = type(s)(s.status, s.C, s.G, s.object_valid, s.field_valid, s.canonical, s.set_f1)
        assert s == plain and s.reasons is not None


PARSE_CASES = [
    '{"owner": "E1"}',
    '```json\n{"owner": "E1"}\n```',
    '```json {"owner": "E1"}```',
    '{"a": 1, "a": 2}',
    '{"x": NaN}',
    "[1, 2]",
    "I think E2",
    "",
    "   ",
    '{"owner": "E1"} trailing',
    None,
    5,
    ["E1"],
]


@pytest.mark.parametrize("text", PARSE_CASES)
def test_parse_failure_explains_exactly_the_outputs_parse_response_refuses(text):
    from evaluation.parsing import parse_failure

    assert (parse_failure(text) is None) == (parse_response(text) is not None)


@pytest.mark.parametrize("condition", ["gold", "no_image", "reordered"])
def test_the_read_fields_validity_is_reported_under_every_condition_as_the_kit_does(condition):
    """Issue 26 item 2: the Kit's item score carries field_valid.read wherever the probe asks for a reading;
    C stays unscored outside raw, and G does not move."""
    right = score('{"read": "2 kg", "owner": "E2"}', _key(), condition)
    assert (right.C, right.G, right.field_valid) == (None, 1, {"owner": True, "read": True})
    wrong_reading = score('{"read": "5 m", "owner": "E2"}', _key(), condition)  # valid, just not the gold
    assert wrong_reading.field_valid == {"owner": True, "read": True}
    missing = score('{"owner": "E1"}', _key(), condition)
    assert (missing.G, missing.field_valid) == (0, {"owner": True, "read": False})
    not_text = score('{"read": 5, "owner": "E2"}', _key(), condition)
    assert not_text.field_valid == {"owner": True, "read": False}
    multi = score('{"read": {"R1": "2 kg", "R2": "m"}, "owner": "E2"}', _key(multi=True), condition)
    assert multi.field_valid == {"owner": True, "read": True}
    extra_anchor = score(
        '{"read": {"R1": "2 kg", "R2": "m", "R3": "x"}, "owner": "E2"}', _key(multi=True), condition
    )
    assert extra_anchor.field_valid["read"] is False
    assert score('{"owner": "E2"}', _key(False), condition).field_valid == {"owner": True}  # no read asked
    # raw reports the same validity beside C
    for text in (
        '{"read": "5 m", "owner": "E2"}',
        '{"owner": "E1"}',
        '{"read": {"R1": "2 kg"}, "owner": "E2"}',
    ):
        for multi_key in (False, True):
            k = _key(multi=multi_key)
            assert score(text, k, "raw").field_valid == score(text, k, condition).field_valid
