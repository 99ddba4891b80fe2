"""``manage.py physics_check (--all | --parent ID) [--json]`` and the selectors it reads through."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.demo.generator import generate_workspace
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem
from annotation.physics.selectors import (
    document_physics_findings,
    parent_physics_findings,
    physics_findings_of_parents,
)
from kit.canonical import digest
from tests.factories import ParentProblemFactory, PassDocumentFactory

pytestmark = pytest.mark.django_db

PASS1 = {"visual_nodes": [{"id": "v001", "type": "text_glyph", "text": "2.0 kg"}]}
PASS2 = {"physical_nodes": [{"id": "p001", "type": "body"}, {"id": "p002", "type": "force"}]}


def _pass3(unit: str = "kg", owner: str = "p001", target: str = "normal_force") -> dict:
    return {
        "new_or_updated_physical_nodes": [],
        "quantities": [
            {
                "id": "q001",
                "kind": "mass",
                "value_latex": "2.0",
                "unit_latex": unit,
                "owner_id": owner,
                "visual_anchor_ids": ["v001"],
            }
        ],
        "query_target": {"target_kind": target},
    }


def _parent(pass3: dict, problem_id: str = "prob_physics") -> ParentProblem:
    parent = ParentProblemFactory(problem_id=problem_id, query="What is the normal force on block A?")
    for pass_no, document in ((1, PASS1), (2, PASS2), (3, pass3)):
        PassDocumentFactory(
            parent=parent, pass_no=pass_no, document=document, document_sha256=digest(document)
        )
    return parent


def _run(*args: str) -> str:
    out = StringIO()
    call_command("physics_check", *args, stdout=out)
    return out.getvalue()


def test_the_command_prints_every_finding_and_a_summary():
    _parent(_pass3(unit="J", owner="p002", target="energy"))
    _parent(_pass3(), problem_id="prob_clean")
    lines = _run("--all").splitlines()
    assert lines == [
        "prob_physics  pass 3  PHYS_OWNER_TYPE  q001  quantities[0].owner_id  q001 is a mass owned by p002, a "
        "force; a mass belongs to body, charge, coil, conductor rod, inclined plane, particle, pulley, rod, rope, "
        "spring, system or wire.  [rule PHYS_OWNER_TYPE]",
        'prob_physics  pass 3  PHYS_UNIT_DIMENSION  q001  quantities[0].unit_latex  q001 is a mass but its unit "J" '
        "is a unit of energy, work or torque (J, N·m); a mass needs a unit of mass (kg).  [rule PHYS_UNIT_DIMENSION]",
        "prob_physics  pass 3  PHYS_LABEL_AGREEMENT  q001  quantities[0].visual_anchor_ids[0]  q001 anchors the "
        'label v001 "2.0 kg", a value of mass (kg), but its unit "J" is a unit of energy, work or torque (J, N·m).  '
        "[rule PHYS_LABEL_AGREEMENT]",
        "prob_physics  pass 3  PHYS_QUERY_KIND  query_target  query_target.target_kind  The question asks for force "
        '(N) ("normal force") but the query target\'s kind "energy" is energy, work or torque (J, N·m).  '
        "[rule PHYS_QUERY_KIND]",
        "Rules physics-rules-1: 4 findings in 6 documents of 2 problems (PHYS_LABEL_AGREEMENT 1, PHYS_OWNER_TYPE 1, "
        "PHYS_QUERY_KIND 1, PHYS_UNIT_DIMENSION 1).",
    ]


def test_the_command_for_one_parent_by_problem_id_or_database_id():
    bad = _parent(_pass3(unit="J"))
    _parent(_pass3(unit="J"), problem_id="prob_other")
    by_problem_id = _run("--parent", "prob_physics")
    assert by_problem_id.count("PHYS_UNIT_DIMENSION") == 3  # the code, the rule and the summary
    assert "prob_other" not in by_problem_id
    assert _run("--parent", str(bad.pk)) == by_problem_id


def test_the_command_refuses_an_unknown_parent_and_needs_a_choice():
    with pytest.raises(CommandError, match="No problem has the id 'nope'"):
        _run("--parent", "nope")
    with pytest.raises(CommandError):
        _run()
    with pytest.raises(CommandError):
        _run("--all", "--parent", "x")


def test_the_command_as_json():
    _parent(_pass3(unit="J"))
    payload = json.loads(_run("--all", "--json"))
    assert payload["rules_version"] == "physics-rules-1"
    assert payload["summary"] == {
        "problems": 1,
        "documents": 3,
        "findings": 2,
        "by_code": {"PHYS_LABEL_AGREEMENT": 1, "PHYS_UNIT_DIMENSION": 1},
    }
    assert payload["findings"][0] == {
        "problem_id": "prob_physics",
        "pass_no": 3,
        "code": "PHYS_UNIT_DIMENSION",
        "record_id": "q001",
        "path": "quantities[0].unit_latex",
        "message": 'q001 is a mass but its unit "J" is a unit of energy, work or torque (J, N·m); a mass needs a '
        "unit of mass (kg).",
        "rule": "PHYS_UNIT_DIMENSION",
    }


def test_the_imported_generated_demo_has_no_findings(tmp_path):
    generate_workspace(tmp_path / "ws", count=12, seed=2027)
    import_kit_workspace(workspace=tmp_path / "ws")
    assert ParentProblem.objects.count() == 12
    out = _run("--all")
    assert out == "Rules physics-rules-1: 0 findings in 48 documents of 12 problems (none).\n"
    assert json.loads(_run("--all", "--json"))["summary"]["findings"] == 0


def test_the_selectors_read_the_stored_earlier_passes():
    parent = _parent(_pass3())
    assert parent_physics_findings(parent=parent) == {1: [], 2: [], 3: []}
    findings = document_physics_findings(parent=parent, pass_no=3, document=_pass3(unit="s"))
    assert [f.code for f in findings] == ["PHYS_UNIT_DIMENSION", "PHYS_LABEL_AGREEMENT"]
    assert document_physics_findings(parent=parent, pass_no=3, document="not a document") == []


def test_the_selector_over_many_parents_is_flat_in_queries():
    for n in range(3):
        _parent(_pass3(), problem_id=f"prob_{n}")
    with CaptureQueriesContext(connection) as few:
        list(physics_findings_of_parents(parents=ParentProblem.objects.all()))
    for n in range(3, 12):
        _parent(_pass3(), problem_id=f"prob_{n}")
    with CaptureQueriesContext(connection) as many:
        results = list(physics_findings_of_parents(parents=ParentProblem.objects.all()))
    assert len(results) == 12 and len(many.captured_queries) == len(few.captured_queries) == 2
