"""Moving solve runs, responses, grading components and debate rows from evaluation to solving keeps every row and
link on a database with rows, and the database constraints still hold on the renamed tables."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from tests.migration_helpers import apps_at, back_to_latest, migrate_to, migrate_to_latest  # noqa: F401 (fixture)

BEFORE = [("evaluation", "0004_model_config_moves_to_registry")]
TABLES = ("solverun", "solveresponse", "gradecomponent", "debaterun", "debateturn")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_solving_rows_survive_the_move():
    old = apps_at(
        migrate_to([*BEFORE, ("solving", None)]),
        [*BEFORE, ("models_registry", "0002_model_config_table_name")],
    )
    model = old.get_model("models_registry", "ModelConfig").objects.create(
        name="sim", provider="simulated", model="m"
    )
    source = old.get_model("annotation", "Source").objects.create(name="S")
    parent = old.get_model("annotation", "ParentProblem").objects.create(
        problem_id="P1",
        source=source,
        source_split="x",
        source_sample_id="1",
        language="en",
        answer_type="calc",
    )
    run = old.get_model("evaluation", "SolveRun").objects.create(kind="debate", model=model, name="r")
    debate = old.get_model("evaluation", "DebateRun").objects.create(solve_run=run, level=2, pruner=model)
    response = old.get_model("evaluation", "SolveResponse").objects.create(
        run=run, parent=parent, answer_type="calc", final_answer="42 N", credit="0.5"
    )
    component = old.get_model("evaluation", "GradeComponent").objects.create(
        response=response, order=1, description="Newton's law", awarded="1.00", maximum="2.00"
    )
    turn = old.get_model("evaluation", "DebateTurn").objects.create(
        response=response, seq=1, stage="solve", agent="solver-1", model=model, raw_output="x"
    )

    new = migrate_to_latest()
    tables = connection.introspection.table_names()
    for name in TABLES:
        assert f"solving_{name}" in tables and f"evaluation_{name}" not in tables
    get = lambda name: new.get_model("solving", name).objects  # noqa: E731
    kept = get("SolveRun").get(pk=run.pk)
    assert (kept.kind, kept.model_id, kept.name) == ("debate", model.pk, "r")
    assert get("DebateRun").get(pk=debate.pk).solve_run_id == run.pk
    kept_response = get("SolveResponse").get(pk=response.pk)
    assert (kept_response.run_id, kept_response.parent_id, kept_response.final_answer) == (
        run.pk,
        parent.pk,
        "42 N",
    )
    assert str(get("GradeComponent").get(pk=component.pk).awarded) == "1.00"
    assert get("DebateTurn").get(pk=turn.pk).agent == "solver-1"
    with pytest.raises(IntegrityError), transaction.atomic():
        get("GradeComponent").create(
            response_id=response.pk, order=2, description="over", awarded="3", maximum="2"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM annotation_parentproblem WHERE id = %s", [parent.pk])
