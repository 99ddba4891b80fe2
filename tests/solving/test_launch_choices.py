"""What the solve and debate launch forms offer on a fresh demo install: the three demo solvers, never the OCR
probe baseline, and a problem source whose choice and fill-in problems are scored by script."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.demo.solving_problems import SOURCE_NAME, solving_demo_problems_ensure
from annotation.models import ParentProblem
from models_registry.demo import DEMO_SOLVERS, demo_models_ensure
from solving.forms import DebateLaunchForm, SolveLaunchForm
from solving.models import SolveRun
from solving.summary import solve_run_summary

pytestmark = pytest.mark.django_db


def test_forms_offer_the_demo_solvers_and_not_the_baseline():
    demo_models_ensure()
    solve_choices = [c.name for c in SolveLaunchForm().fields["model"].queryset]
    assert "baseline-ocr-nearest" not in solve_choices
    assert set(DEMO_SOLVERS) <= set(solve_choices)
    debate = DebateLaunchForm()
    for field in ("solver_1", "solver_2", "solver_3", "pruner", "selector"):
        values = [value for value, _ in debate.fields[field].choices]
        assert "baseline-ocr-nearest" not in values
        assert set(DEMO_SOLVERS) <= set(values)


def test_demo_problems_are_choice_and_fill():
    parents = solving_demo_problems_ensure()
    assert len(parents) == 20
    assert {p.answer_type for p in parents} == {"choice", "fill"}
    assert solving_demo_problems_ensure() and ParentProblem.objects.count() == 20  # idempotent


def test_solve_run_from_a_source_is_scored_by_script(
    client, admin_user_role, eager, django_capture_on_commit_callbacks
):
    demo_models_ensure()
    parents = solving_demo_problems_ensure()
    client.force_login(admin_user_role)
    form_page = client.get(reverse("solving:solve_run_list")).content.decode()
    assert f"{SOURCE_NAME} (20 parent problems)" in form_page
    assert "baseline-ocr-nearest" not in form_page
    source = parents[0].source
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("solving:solve_run_list"),
            {"model": str(_pk("sim-careful")), "source": str(source.pk), "name": "from source"},
        )
    assert response.status_code == 302
    run = SolveRun.objects.get(name="from source")
    summary = solve_run_summary(run)
    assert summary.total == 20 and summary.awaiting_grading == 0
    assert summary.solve_acc.value is not None and summary.solve_acc.value >= 0.7  # sim-careful solves 0.94


def test_source_and_parents_together_are_refused(client, admin_user_role):
    demo_models_ensure()
    parents = solving_demo_problems_ensure()
    client.force_login(admin_user_role)
    response = client.post(
        reverse("solving:solve_run_list"),
        {
            "model": str(_pk("sim-careful")),
            "source": str(parents[0].source.pk),
            "parent_ids": parents[0].problem_id,
        },
    )
    assert response.status_code == 400 and "exactly one of the three" in response.content.decode()
    assert SolveRun.objects.count() == 0


def test_debate_from_a_source_with_the_three_demo_solvers(client, admin_user_role, eager):
    demo_models_ensure()
    parents = solving_demo_problems_ensure()
    client.force_login(admin_user_role)
    data = {
        "name": "demo debate",
        "level": 1,
        "source": str(parents[0].source.pk),
        "solver_1": DEMO_SOLVERS[0],
        "solver_2": DEMO_SOLVERS[1],
        "solver_3": DEMO_SOLVERS[2],
        "pruning": "on",
        "value_voting": "on",
        "max_resolve_rounds": 2,
        "rel_tol": 0.01,
        "ocr": "model",
        "verify_iterations": 5,
        "svg_char_cap": 12000,
    }
    response = client.post(reverse("solving:debate_run_list"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    run = SolveRun.objects.get(name="demo debate")
    assert run.kind == "debate" and run.total == 20
    assert run.debate.solver_names == list(DEMO_SOLVERS)
    assert run.responses.count() == 20


def _pk(name: str) -> int:
    from models_registry.models import ModelConfig

    return ModelConfig.objects.get(name=name).pk
