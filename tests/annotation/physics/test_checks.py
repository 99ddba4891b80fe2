"""The physics checker (annotation.physics.checks): the rule table, the interface, each rule's behaviour at
its edges, and robustness on malformed documents."""

from __future__ import annotations

import copy
import json
import time

import pytest

from annotation.demo.generator import generate_problem
from annotation.physics.checks import (
    RULES_PATH,
    Finding,
    RuleSet,
    asked_dimensions,
    check_document,
    load_rules,
)
from annotation.physics.units import parse_unit
from kit.passes.validator import PHYSICAL_TYPES

CODES = (
    "PHYS_UNIT_DIMENSION",
    "PHYS_UNIT_MISSING",
    "PHYS_UNIT_PARSE",
    "PHYS_VALUE_PARSE",
    "PHYS_VALUE_RANGE",
    "PHYS_LABEL_AGREEMENT",
    "PHYS_OWNER_TYPE",
    "PHYS_QUERY_KIND",
)


# --------------------------------------------------------------------------------------------
# The rule table


def test_the_rule_table_is_versioned_and_lists_every_rule():
    rules = load_rules()
    assert rules.version == "physics-rules-1"
    assert rules.codes == CODES
    for rule in rules.rules:
        assert rule.title and len(rule.description) > 40
    assert rules.rule("PHYS_OWNER_TYPE").title == "Owner suits the kind"
    with pytest.raises(KeyError):
        rules.rule("PHYS_NOPE")


def test_the_default_table_is_read_once():
    assert load_rules() is load_rules() is load_rules(RULES_PATH)


def test_owner_types_are_the_kits_entity_types():
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    for group, types in data["owner_groups"].items():
        assert set(types) <= set(PHYSICAL_TYPES), group
        assert "unknown_physical" not in types


def test_every_reference_unit_parses_and_every_kind_names_known_dimensions():
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    for name, dimension in data["dimensions"].items():
        assert parse_unit(dimension["unit"]) is not None, name
    for name, kind in data["kinds"].items():
        assert set(kind["dimensions"]) <= set(data["dimensions"]), name
        assert kind.get("owners", "massive") in data["owner_groups"], name
        assert kind.get("value_check", "positive") in data["value_checks"], name
    for synonym, target in data["kind_synonyms"].items():
        assert target in data["kinds"], synonym


def test_a_table_at_another_path_is_read_from_there(tmp_path):
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    data["version"] = "physics-rules-test"
    data["kinds"]["mass"]["owners"] = "springy"
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    rules = load_rules(path)
    assert rules.version == "physics-rules-test"
    finding = check_document(
        3,
        _pass3([_q("q001", "mass", "2.0", "kg", owner="p001")]),
        earlier={2: _pass2(p001="body")},
        question="",
        rules=rules,
    )
    assert [f.code for f in finding] == ["PHYS_OWNER_TYPE"]


def test_a_table_naming_an_unknown_dimension_is_refused(tmp_path):
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    data["kinds"]["mass"]["dimensions"] = ["heaviness"]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="heaviness"):
        load_rules(path)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the generator's kinds
        ("amplitude", "amplitude"),
        ("angle", "angle"),
        ("charge", "charge"),
        ("coefficient_of_kinetic_friction", "coefficient_of_friction"),
        ("distance", "distance"),
        ("emf", "emf"),
        ("focal_length", "focal_length"),
        ("length", "length"),
        ("mass", "mass"),
        ("object_distance", "object_distance"),
        ("resistance", "resistance"),
        ("spring_constant", "spring_constant"),
        ("tension", "tension"),
        ("weight", "weight"),
        ("image_distance", "image_distance"),
        ("period", "period"),
        ("electric_field", "electric_field"),
        ("acceleration", "acceleration"),
        ("current", "current"),
        ("speed", "speed"),
        # free text, normalised
        ("Normal force", "normal_force"),
        ("Angle-of-incline", "angle"),
        ("max speed", "speed"),
        ("mass_A", "mass"),
        ("kinetic energy of block", "kinetic_energy"),
        ("work_done_by_friction", "work"),
        ("x_component_of_velocity", "velocity"),
        ("Internal Resistance", "resistance"),
        ("force constant", "spring_constant"),
        ("net_force", "force"),
        ("equivalent_capacitance", "capacitance"),
        ("center_of_mass", "position"),
        ("potential difference", "voltage"),
        ("static_friction", "friction"),
        ("time_to_reach_top", "time"),
        ("electric_force", "force"),
        ("fringe_separation", "separation"),
    ],
)
def test_kinds_are_normalised(text, kind):
    assert load_rules().kind(text).name == kind


@pytest.mark.parametrize(
    "text", ["T_1", "wobble", "line_density", "mode_number", "number", "", "   ", None, 3]
)
def test_kinds_the_table_does_not_know_are_not_guessed(text):
    assert load_rules().kind(text) is None


def test_charge_density_is_not_a_mass_density():
    assert load_rules().kind("linear_charge_density").dimensions == ("linear_charge_density",)
    assert load_rules().kind("charge_density").dimensions == (
        "linear_charge_density",
        "surface_charge_density",
        "volume_charge_density",
    )


# --------------------------------------------------------------------------------------------
# Helpers: compact documents


def _q(qid, kind, value, unit, *, owner="", anchors=()):
    return {
        "id": qid,
        "kind": kind,
        "symbol_latex": "x",
        "value_latex": value,
        "unit_latex": unit,
        "owner_id": owner,
        "visual_anchor_ids": list(anchors),
        "text_mention_ids": [],
        "provenance": ["TEXT"],
    }


def _pass1(**glyphs):
    return {"visual_nodes": [{"id": i, "type": "text_glyph", "text": t} for i, t in glyphs.items()]}


def _pass2(**nodes):
    return {"physical_nodes": [{"id": i, "type": t} for i, t in nodes.items()]}


def _pass3(quantities, target_kind=None, updated=()):
    doc = {"new_or_updated_physical_nodes": list(updated), "quantities": quantities}
    if target_kind is not None:
        doc["query_target"] = {"target_kind": target_kind}
    return doc


def _codes(findings):
    return [(f.code, f.record_id, f.path) for f in findings]


# --------------------------------------------------------------------------------------------
# The interface


def test_a_finding_as_an_issue():
    (finding,) = check_document(3, _pass3([_q("q001", "force", "10", "J")]), earlier={}, question="")
    assert isinstance(finding, Finding) and finding.rule == finding.code == "PHYS_UNIT_DIMENSION"
    assert finding.as_issue() == {
        "code": "PHYS_UNIT_DIMENSION",
        "path": "quantities[0].unit_latex",
        "message": 'q001 is a force but its unit "J" is a unit of energy, work or torque (J, N·m); a force needs '
        "a unit of force (N).",
        "record_id": "q001",
        "rule": "PHYS_UNIT_DIMENSION",
    }


def test_findings_are_in_document_order():
    quantities = [_q(f"q{n:03d}", "mass", "1.0", "J") for n in range(1, 12)]
    findings = check_document(
        3, _pass3(quantities, "energy"), earlier={}, question="Find the mass of the block."
    )
    paths = [f.path for f in findings]
    assert paths == [f"quantities[{n}].unit_latex" for n in range(11)] + ["query_target.target_kind"]


@pytest.mark.parametrize("pass_no", [1, 2, 5, 0, 9])
def test_passes_without_quantities_have_no_findings(pass_no):
    doc = _pass3([_q("q001", "force", "10", "J")], "energy")
    assert check_document(pass_no, doc, earlier={}, question="Find the tension.") == []


@pytest.mark.parametrize(
    "document",
    [
        None,
        [],
        "text",
        {},
        {"quantities": None},
        {"quantities": "x"},
        {"quantities": [None, 3, "q", []]},
        {
            "quantities": [
                {
                    "id": 5,
                    "kind": ["mass"],
                    "value_latex": 3,
                    "unit_latex": {},
                    "owner_id": [],
                    "visual_anchor_ids": "v001",
                }
            ]
        },
        {"quantities": [{}], "query_target": "tension"},
        {"query_target": {"target_kind": 7}},
    ],
)
def test_malformed_documents_do_not_crash(document):
    earlier = {1: {"visual_nodes": "x"}, 2: {"physical_nodes": [None, {"id": 3}]}}
    assert check_document(3, document, earlier=earlier, question="Find the mass.") == []
    assert check_document(4, document, earlier=None, question=None) == []


def test_a_quantity_without_an_id_is_named_by_its_path():
    (finding,) = check_document(
        3, {"quantities": [{"kind": "mass", "value_latex": "2", "unit_latex": "s"}]}, earlier={}, question=""
    )
    assert (finding.record_id, finding.path) == ("quantities[0]", "quantities[0].unit_latex")


# --------------------------------------------------------------------------------------------
# Rules at their edges


def test_unknown_kinds_get_no_dimension_finding():
    assert check_document(3, _pass3([_q("q001", "wobble", "3", "J")]), earlier={}, question="") == []


@pytest.mark.parametrize(
    ("kind", "value", "unit", "codes"),
    [
        ("angle", "30", "", []),  # an angle may have no unit
        ("angle", "30", "rad", []),
        ("angle", "30", "m", ["PHYS_UNIT_DIMENSION"]),
        ("coefficient_of_friction", "0.35", "", []),
        ("refractive_index", "1.50", "", []),
        ("mass", "2.0", "", ["PHYS_UNIT_MISSING"]),
        ("mass", "m", "", []),  # a symbol needs no unit
        ("tension", "", "", []),  # an unknown value needs none either
        ("mass", "5\\,\\mathrm{kg}", "", []),  # the unit written in the value
        ("mass", "5\\,\\mathrm{J}", "", ["PHYS_UNIT_DIMENSION"]),
        ("mass", "2m", "kg", []),  # "2m" with a unit: an expression, not 2 metres
        ("electric_field", "3.0", "N/C", []),
        ("electric_field", "3.0", "V/m", []),
        ("magnetic_field", "0.5", "T", []),
        ("magnetic_field", "0.5", "G", []),
        ("speed", "3.0\\times10^{8}", "m/s", []),
        ("velocity", "-3.0", "m/s", []),  # a velocity may be negative ...
        ("speed", "-3.0", "m/s", ["PHYS_VALUE_RANGE"]),  # ... a speed may not
        ("period", "0", "s", ["PHYS_VALUE_RANGE"]),
        ("resistance", "0", "\\Omega", []),
        ("temperature", "-20", "°C", []),  # an offset unit: no sign check
        ("torque", "9.0", "N\\cdot m", []),
        ("power", "60", "W", []),
        ("capacitance", "2.5", "\\mu F", []),
        ("spring_constant", "20", "N/m", []),
        ("spring_constant", "20", "N", ["PHYS_UNIT_DIMENSION"]),
        ("voltage", "12", "A", ["PHYS_UNIT_DIMENSION"]),
        ("charge", "-4.0", "nC", []),
        ("mass", "4..0", "kg", ["PHYS_VALUE_PARSE"]),
        ("mass", "4.0", "kgg", ["PHYS_UNIT_PARSE"]),
    ],
)
def test_dimension_unit_value_rules(kind, value, unit, codes):
    findings = check_document(3, _pass3([_q("q001", kind, value, unit)]), earlier={}, question="")
    assert [f.code for f in findings] == codes


@pytest.mark.parametrize(
    ("glyph", "value", "unit", "agrees"),
    [
        ("2.0 kg", "2.0", "kg", True),
        ("2.0 kg", "2", "kg", True),
        ("2.0 kg", "2000", "g", True),  # same quantity, another unit
        ("2.0 kg", "2.1", "kg", False),
        ("2.0 kg", "2.04", "kg", True),  # within the printed digits' rounding
        ("2.0 kg", "2.0", "s", False),  # another dimension
        ("30°", "30", "^\\circ", True),
        ("30°", "30", "", True),  # no unit: the number is compared
        ("30°", "0.5236", "rad", True),
        ("30°", "60", "^\\circ", False),
        ("5 m", "5", "s", False),
        ("m", "5", "s", True),  # a symbol: nothing to compare
        ("1", "2.00", "kg", True),  # a bare number: a name or a tick, not compared
        ("v = 0", "0", "m/s", True),
        ("v = 0", "2", "m/s", False),
        ("2.0 kg", "m", "kg", False),  # a value printed but not copied
        ("2.0 kg", "", "kg", False),
        ("−3.0 μC", "-3.0", "\\mu C", True),
        ("−3.0 μC", "3.0", "\\mu C", False),  # the sign counts
        ("25 °C", "298", "K", True),
    ],
)
def test_label_agreement(glyph, value, unit, agrees):
    doc = _pass3([_q("q001", "quantity_of_interest", value, unit, anchors=["v001"])])
    findings = check_document(3, doc, earlier={1: _pass1(v001=glyph)}, question="")
    assert [f.code for f in findings] == ([] if agrees else ["PHYS_LABEL_AGREEMENT"])


def test_labels_are_read_from_pass_1_in_pass_3_and_from_the_document_in_pass_4():
    quantity = _q("q001", "mass", "3.0", "kg", anchors=["v001"])
    assert _codes(check_document(3, _pass3([quantity]), earlier={1: _pass1(v001="2.0 kg")}, question="")) == [
        ("PHYS_LABEL_AGREEMENT", "q001", "quantities[0].visual_anchor_ids[0]")
    ]
    assert check_document(3, _pass3([quantity]), earlier={}, question="") == []  # no Pass 1: not checked
    pass4 = {**_pass1(v001="2.0 kg"), "physical_nodes": [], "quantities": [quantity]}
    assert [f.code for f in check_document(4, pass4, earlier={}, question="")] == ["PHYS_LABEL_AGREEMENT"]


def test_a_non_text_anchor_is_not_a_label():
    pass1 = {"visual_nodes": [{"id": "v001", "type": "line_segment", "text": "2.0 kg"}]}
    doc = _pass3([_q("q001", "mass", "3.0", "kg", anchors=["v001"])])
    assert check_document(3, doc, earlier={1: pass1}, question="") == []


@pytest.mark.parametrize(
    ("kind", "owner_type", "suits"),
    [
        ("mass", "body", True),
        ("mass", "particle", True),
        ("mass", "system", True),
        ("mass", "rod", True),
        ("mass", "pulley", True),
        ("mass", "force", False),
        ("mass", "point", False),
        ("mass", "resistor", False),
        ("tension", "rope", True),
        ("tension", "force", True),
        ("tension", "body", False),
        ("resistance", "resistor", True),
        ("resistance", "wire", True),
        ("resistance", "conductor_rod", True),
        ("resistance", "capacitor", False),
        ("angle", "surface", True),
        ("angle", "inclined_plane", True),
        ("angle", "rope", True),
        ("angle", "trajectory", True),
        ("angle", "force", True),
        ("angle", "point", True),
        ("angle", "battery", False),
        ("charge", "charge", True),
        ("charge", "particle", True),
        ("charge", "capacitor", True),
        ("charge", "spring", False),
        ("spring_constant", "spring", True),
        ("spring_constant", "body", False),
        ("emf", "battery", True),
        ("emf", "resistor", False),
        ("capacitance", "capacitor", True),
        ("capacitance", "battery", False),
        ("mass", "unknown_physical", True),  # an unknown owner is not judged
        ("distance", "rope", True),  # a kind without an owner rule
    ],
)
def test_owner_types(kind, owner_type, suits):
    doc = _pass3([_q("q001", kind, "", "", owner="p001")])
    findings = check_document(3, doc, earlier={2: _pass2(p001=owner_type)}, question="")
    assert [f.code for f in findings] == ([] if suits else ["PHYS_OWNER_TYPE"])


def test_pass_3_updates_of_a_node_override_its_pass_2_type():
    doc = _pass3([_q("q001", "mass", "2.0", "kg", owner="p001")], updated=[{"id": "p001", "type": "force"}])
    assert [f.code for f in check_document(3, doc, earlier={2: _pass2(p001="body")}, question="")] == [
        "PHYS_OWNER_TYPE"
    ]


def test_an_owner_not_in_the_documents_is_not_judged():
    doc = _pass3([_q("q001", "mass", "2.0", "kg", owner="p009")])
    assert check_document(3, doc, earlier={2: _pass2(p001="force")}, question="") == []


@pytest.mark.parametrize(
    ("question", "target", "matches"),
    [
        ("What is the tension in the rope?", "tension", True),
        ("What is the tension in the rope?", "force", True),
        ("What is the tension in the rope?", "energy", False),
        ("Find the acceleration of block A.", "acceleration", True),
        ("Find the acceleration of block A.", "speed", False),
        ("How far does the block slide before it stops?", "distance", True),
        ("How far does the block slide before it stops?", "time", False),
        ("How long does the block take to stop?", "time", True),
        ("How long is the rod?", "length", True),
        ("How fast is the car moving at point B?", "speed", True),
        ("Find the speed and the acceleration of the block.", "acceleration", True),
        ("Determine the net force and the net torque on the loop.", "torque", True),
        ("求细绳中的张力大小。", "tension", True),
        ("求细绳中的张力大小。", "energy", False),
        ("求通过电阻R1的电流。", "current", True),
        ("求通过电阻R1的电流。", "resistance", False),
        ("求物块A沿斜面下滑时加速度的大小。", "acceleration", True),
        ("The block is released from rest.", "energy", True),  # says nothing it asks
        ("What happens to the block?", "energy", True),
        ("Find I_1 and I_2.", "energy", True),  # names symbols only
        ("What is the tension in the rope?", "wobble", True),  # an unknown target kind is not judged
    ],
)
def test_query_kind(question, target, matches):
    findings = check_document(3, _pass3([], target), earlier={}, question=question)
    assert [f.code for f in findings] == ([] if matches else ["PHYS_QUERY_KIND"])


def test_the_query_target_is_checked_in_pass_4_too():
    doc = {
        "visual_nodes": [],
        "physical_nodes": [],
        "quantities": [],
        "query_target": {"target_kind": "energy"},
    }
    assert _codes(check_document(4, doc, earlier={}, question="What is the tension in the rope?")) == [
        ("PHYS_QUERY_KIND", "query_target", "query_target.target_kind")
    ]


def test_asked_dimensions_reads_each_part():
    rules = load_rules()
    asked = asked_dimensions(
        rules, "(a) What is the speed at A? (b) How high does it rise? (c) Find its mass."
    )
    assert asked.dimensions == {"speed", "length", "mass"} and not asked.unreadable


# --------------------------------------------------------------------------------------------
# The generated demo: its documents are clean (test_demo_clean) and a planted mistake is found


def test_planted_mistakes_in_a_generated_problem_are_found():
    problem = generate_problem(seed=2027, index=0)
    p1, p2, p3, _ = (copy.deepcopy(doc) for doc in problem.passes)
    p3["quantities"][0]["unit_latex"] = "J"  # the 4.0 kg mass in joules
    p3["quantities"][1]["value_latex"] = "30"  # the printed 37° angle typed as 30
    p3["quantities"][0]["owner_id"] = "p004"  # owned by the weight force
    p3["query_target"]["target_kind"] = "energy"  # "Find the magnitude of the acceleration …"
    findings = check_document(
        3, p3, earlier={1: p1, 2: p2}, question=problem.manifest_row["segments"]["query"]
    )
    assert _codes(findings) == [
        ("PHYS_OWNER_TYPE", "q001", "quantities[0].owner_id"),
        ("PHYS_UNIT_DIMENSION", "q001", "quantities[0].unit_latex"),
        ("PHYS_LABEL_AGREEMENT", "q001", "quantities[0].visual_anchor_ids[0]"),
        ("PHYS_LABEL_AGREEMENT", "q002", "quantities[1].visual_anchor_ids[0]"),
        ("PHYS_QUERY_KIND", "query_target", "query_target.target_kind"),
    ]


def test_checking_the_40_demo_problems_is_fast():
    problems = [generate_problem(seed=2027, index=index) for index in range(40)]
    load_rules()
    started = time.perf_counter()
    for problem in problems:
        query = problem.manifest_row["segments"]["query"]
        for pass_no, document in enumerate(problem.passes, start=1):
            earlier = dict(enumerate(problem.passes[: pass_no - 1], start=1))
            check_document(pass_no, document, earlier=earlier, question=query)
    assert time.perf_counter() - started < 0.5


def test_rule_set_is_a_frozen_value():
    rules = load_rules()
    assert isinstance(rules, RuleSet)
    with pytest.raises(AttributeError):
        rules.version = "x"  # type: ignore[misc]
