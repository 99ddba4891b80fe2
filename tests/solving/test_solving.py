"""Solving runs through the database: planning, the prompt, script scoring, retries, claims, grading, summary."""

from __future__ import annotations

from decimal import Decimal

import pytest

from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError
from solving.grading import solve_response_grade
from solving.models import DebateTurn, GradeComponent, SolveResponse, SolveRun
from solving.runs import (
    build_solve_request,
    solve_chunk_process,
    solve_response_execute,
    solve_run_cancel,
    solve_run_create,
    solve_run_dispatch,
    solve_run_resume,
)
from solving.runs.execute import _claim
from solving.summary import solve_run_summary
from tests.factories import ParentProblemFactory, ProblemImageFactory, scripted

pytestmark = pytest.mark.django_db


def make_parents():
    """Four parents with unique statements (the scripted model matches on them)."""
    choice = ParentProblemFactory(
        problem_id="S_CHOICE",
        stem="UNIQ-CHOICE A cart rolls.",
        query="Which force?",
        answer_type="choice",
        answer="B",
        options=[{"id": "A", "text": "2 N"}, {"id": "B", "text": "4 N"}, {"id": "C", "text": "6 N"}],
    )
    ProblemImageFactory(parent=choice, image_id="img_0", ordinal=0)
    fill = ParentProblemFactory(
        problem_id="S_FILL",
        stem="UNIQ-FILL A stone falls.",
        query="Speed?",
        answer_type="fill",
        answer="3 m/s",
    )
    calc = ParentProblemFactory(
        problem_id="S_CALC",
        stem="UNIQ-CALC A spring.",
        query="Energy?",
        answer_type="calc",
        answer="SECRET-ANSWER-5J",
    )
    wrong = ParentProblemFactory(
        problem_id="S_WRONG", stem="UNIQ-WRONG A lever.", query="Torque?", answer_type="fill", answer="12 N m"
    )
    return choice, fill, calc, wrong


SCRIPT = [
    {"match": "UNIQ-CHOICE", "outputs": [r"<reasoning>compare</reasoning> so \boxed{(B)}"]},
    {"match": "UNIQ-FILL", "outputs": [r"v = sqrt(2gh) = \boxed{300\ \text{cm/s}}"]},
    {"match": "UNIQ-CALC", "outputs": [r"E = kx^2/2 \boxed{5 J}"]},
    {"match": "UNIQ-WRONG", "outputs": [r"\boxed{7 N m}"]},
]


def run_now(**kwargs):
    """Create the run and dispatch it (eager Celery), as the on-commit hook does outside a test transaction."""
    run = solve_run_create(**kwargs, enqueue=False)
    solve_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    return run


@pytest.fixture
def parents(db):
    return make_parents()


def test_rows_are_planned_up_front(parents):
    model = scripted("solver", SCRIPT)
    run = solve_run_create(
        model=model,
        parent_ids=["S_WRONG", "S_CHOICE", "S_CHOICE", "S_FILL", "S_CALC"],
        name="plan",
        enqueue=False,
    )
    assert run.total == 4 and run.responses.count() == 4
    assert run.parent_ids == ["S_WRONG", "S_CHOICE", "S_FILL", "S_CALC"]
    assert set(run.responses.values_list("status", flat=True)) == {"pending"}
    gradings = dict(run.responses.values_list("parent__problem_id", "grading"))
    assert gradings == {"S_WRONG": "script", "S_CHOICE": "script", "S_FILL": "script", "S_CALC": "none"}
    assert run.manifest["model"]["provider"] == "scripted"
    assert run.manifest["prompt"]["template_sha256"] and run.manifest["parent_ids_sha256"]
    assert run.manifest["answer_types"] == {"fill": 2, "choice": 1, "calc": 1}


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"parent_ids": ["S_FILL", "NOPE"]}, "parents_invalid"),
        ({"parent_ids": []}, "no_parents"),
        ({"parent_ids": ["S_FILL"], "model": None}, "model_invalid"),
        ({"parent_ids": ["S_FILL"], "model": "unknown-model"}, "model_invalid"),
        ({"parent_ids": ["S_FILL"], "kind": "ensemble"}, "kind_invalid"),
    ],
)
def test_bad_input_is_refused_and_creates_nothing(parents, kwargs, code):
    scripted("solver", SCRIPT)
    with pytest.raises(ApplicationError) as error:
        solve_run_create(**{"model": "solver", **kwargs}, enqueue=False)
    assert error.value.code == code
    assert SolveRun.objects.count() == 0 and SolveResponse.objects.count() == 0


def test_inactive_model_is_refused(parents):
    model = scripted("solver", SCRIPT)
    ModelConfig.objects.filter(pk=model.pk).update(is_active=False)
    with pytest.raises(ApplicationError):
        solve_run_create(model="solver", parent_ids=["S_FILL"], enqueue=False)


def test_the_prompt_is_the_original_problem_only(parents):
    choice, fill, calc, _ = parents
    request = build_solve_request(choice)
    assert "UNIQ-CHOICE A cart rolls." in request.user and "Which force?" in request.user
    assert "A. 2 N\nB. 4 N\nC. 6 N" in request.user
    assert "\\boxed{" in request.user and len(request.images) == 1
    for parent in (fill, calc):
        sent = build_solve_request(parent)
        for private in (parent.answer, parent.solution, "SECRET"):
            assert private not in sent.user and private not in sent.system
        assert "candidate" not in sent.user.lower() and "probe" not in sent.user.lower()
    assert choice.solution not in request.user and "SECRET" not in request.user
    assert "worked solution" in build_solve_request(calc).user
    assert not build_solve_request(fill).images


def test_run_scores_by_script_and_waits_for_the_expert(parents, eager):
    model = scripted("solver", SCRIPT)
    run = run_now(model=model, parent_ids=["S_CHOICE", "S_FILL", "S_CALC", "S_WRONG"])
    run.refresh_from_db()
    assert run.status == "grading"
    rows = {r.parent.problem_id: r for r in run.responses.select_related("parent")}
    assert (rows["S_CHOICE"].final_answer, rows["S_CHOICE"].match, rows["S_CHOICE"].credit) == (
        "(B)",
        True,
        1.0,
    )
    assert (rows["S_FILL"].match, rows["S_FILL"].correct) == (True, True)  # 300 cm/s = 3 m/s
    assert (rows["S_WRONG"].final_answer, rows["S_WRONG"].match, rows["S_WRONG"].credit) == (
        "7 N m",
        False,
        0.0,
    )
    calc = rows["S_CALC"]
    assert (calc.grading, calc.credit, calc.correct, calc.final_answer) == ("pending", None, None, "5 J")
    summary = solve_run_summary(run)
    assert summary.done == 4 and summary.awaiting_grading == 1
    assert summary.solve_acc.value is None  # one parent is not graded yet
    assert summary.solve_acc.lower == pytest.approx(2 / 4) and summary.solve_acc.upper == pytest.approx(3 / 4)
    assert summary.calls == 4 and summary.input_tokens > 0

    graded = solve_response_grade(
        response=calc,
        components=[
            {"description": "energy of a spring", "awarded": "2", "maximum": "2"},
            {"description": "numerical value", "awarded": "1.5", "maximum": "3"},
        ],
        correct=True,
        note="ok",
        actor=_admin(),
    )
    assert graded.credit == pytest.approx(3.5 / 5) and graded.correct is True and graded.grading == "graded"
    run.refresh_from_db()
    assert run.status == "completed"
    summary = solve_run_summary(run)
    assert summary.solve_acc.value == pytest.approx((1 + 1 + 0.7 + 0) / 4)
    assert summary.accuracy.value == pytest.approx(3 / 4)


def _admin():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    user = get_user_model().objects.create_user("grader-admin", password="x")
    user.groups.add(Group.objects.get_or_create(name="admin")[0])
    # grading is against the reference answer: a key holder
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return get_user_model().objects.get(pk=user.pk)


def _graded_calc(parents, eager):
    run = run_now(model=scripted("solver", SCRIPT), parent_ids=["S_CALC"])
    return run, run.responses.get()


@pytest.mark.parametrize(
    ("components", "correct", "field"),
    [
        ([], True, None),
        ([{"description": "", "awarded": 1, "maximum": 2}], True, "description"),
        ([{"description": "x", "awarded": 3, "maximum": 2}], True, "awarded"),
        ([{"description": "x", "awarded": -1, "maximum": 2}], True, "awarded"),
        ([{"description": "x", "awarded": 0, "maximum": 0}], True, "maximum"),
        ([{"description": "x", "awarded": "abc", "maximum": 2}], True, "awarded"),
        ([{"description": "x", "awarded": "nan", "maximum": 2}], True, "awarded"),
        ([{"description": "x", "awarded": 1, "maximum": 2}], "yes", None),
    ],
)
def test_invalid_grades_are_refused_and_change_nothing(parents, eager, components, correct, field):
    run, row = _graded_calc(parents, eager)
    admin = _admin()
    solve_response_grade(
        response=row,
        components=[{"description": "kept", "awarded": 1, "maximum": 4}],
        correct=False,
        actor=admin,
    )
    with pytest.raises(ApplicationError) as error:
        solve_response_grade(response=row, components=components, correct=correct, actor=admin)
    assert error.value.code == "grade_invalid"
    if field:
        assert error.value.extra["field"] == field
    row.refresh_from_db()
    assert row.credit == 0.25 and row.correct is False
    assert list(row.components.values_list("description", flat=True)) == ["kept"]


def test_regrading_replaces_and_non_admins_cannot_grade(parents, eager, django_user_model):
    run, row = _graded_calc(parents, eager)
    admin = _admin()
    solve_response_grade(
        response=row,
        components=[
            {"description": "a", "awarded": 1, "maximum": 1},
            {"description": "b", "awarded": 0, "maximum": 1},
        ],
        correct=False,
        actor=admin,
    )
    solve_response_grade(
        response=row, components=[{"description": "c", "awarded": 2, "maximum": 2}], correct=True, actor=admin
    )
    row.refresh_from_db()
    assert (row.credit, row.correct) == (1.0, True)
    assert list(GradeComponent.objects.filter(response=row).values_list("description", "awarded")) == [
        ("c", Decimal("2.00"))
    ]
    nobody = django_user_model.objects.create_user("plain", password="x")
    with pytest.raises(ApplicationError) as error:
        solve_response_grade(
            response=row,
            components=[{"description": "z", "awarded": 0, "maximum": 1}],
            correct=False,
            actor=nobody,
        )
    assert error.value.code == "forbidden"
    row.refresh_from_db()
    assert row.credit == 1.0


def test_script_scored_answers_cannot_be_expert_graded(parents, eager):
    run = run_now(model=scripted("solver", SCRIPT), parent_ids=["S_FILL"])
    with pytest.raises(ApplicationError) as error:
        solve_response_grade(
            response=run.responses.get(),
            components=[{"description": "x", "awarded": 1, "maximum": 1}],
            correct=True,
            actor=_admin(),
        )
    assert error.value.code == "not_gradable"


def test_infra_failures_retry_twice_then_infra_missing(parents, eager):
    model = scripted("flaky", [{"match": "UNIQ-FILL", "outputs": [{"error": 500}]}])
    run = run_now(model=model, parent_ids=["S_FILL", "S_CALC"])
    rows = {r.parent.problem_id: r for r in run.responses.select_related("parent")}
    fill = rows["S_FILL"]
    assert fill.status == "infra_missing" and fill.raw_output is None
    assert len(fill.attempts) == 3  # the first try plus two retries
    assert (fill.credit, fill.correct, fill.grading) == (None, None, "none")
    calc = rows["S_CALC"]  # the default output "{}" has no boxed answer: still a returned output to grade
    assert calc.status == "completed" and calc.grading == "pending"
    summary = solve_run_summary(run)
    assert summary.solve_acc.value is None and summary.solve_acc.missing == 2


def test_recovered_after_one_failure_is_not_resampled(parents, eager):
    model = scripted(
        "flaky", [{"match": "UNIQ-FILL", "outputs": [{"error": 503}, r"\boxed{3 m/s}", r"\boxed{9 m/s}"]}]
    )
    run = run_now(model=model, parent_ids=["S_FILL"])
    row = run.responses.get()
    assert row.status == "completed" and row.final_answer == "3 m/s" and row.correct is True
    assert len(row.attempts) == 2
    solve_run_dispatch(run_id=run.pk)  # a second dispatch finds nothing to do
    row.refresh_from_db()
    assert row.final_answer == "3 m/s" and row.claims == 1


def test_refusal_and_truncation_score_zero(parents, eager):
    model = scripted(
        "refuser",
        [
            {"match": "UNIQ-FILL", "outputs": [{"text": "I can't", "finish_reason": "refusal"}]},
            {"match": "UNIQ-CALC", "outputs": [{"text": "E = ", "finish_reason": "length"}]},
        ],
    )
    run = run_now(model=model, parent_ids=["S_FILL", "S_CALC"])
    rows = {r.parent.problem_id: r for r in run.responses.select_related("parent")}
    assert (rows["S_FILL"].status, rows["S_FILL"].credit, rows["S_FILL"].correct) == ("refusal", 0.0, False)
    assert (rows["S_CALC"].status, rows["S_CALC"].credit, rows["S_CALC"].grading) == (
        "truncated",
        0.0,
        "script",
    )
    run.refresh_from_db()
    assert run.status == "completed"


def test_a_stale_claim_never_writes_twice(parents):
    run = solve_run_create(
        model=scripted("solver", SCRIPT),
        parent_ids=["S_FILL"],
        enqueue=False,
        options={"claim_lease_seconds": 0},
    )
    row_id = run.responses.get().pk
    first, state = _claim(row_id, lease=0)
    assert state == "claimed"
    second, state = _claim(row_id, lease=0)  # the first lease expired: another worker takes the row
    assert state == "claimed" and second.claims == 2
    first = SolveResponse.objects.select_related("run__model", "parent").get(pk=first.pk)
    first.claim_token = _token_of(first, row_id)
    solve_response_execute(row=first)  # the stale claim holder returns: nothing is written
    row = SolveResponse.objects.get(pk=row_id)
    assert row.status == "running" and row.raw_output is None
    second = SolveResponse.objects.select_related("run__model", "parent").get(pk=row_id)
    solve_response_execute(row=second)
    row.refresh_from_db()
    assert row.status == "completed" and row.final_answer == "300\\ \\text{cm/s}"
    solve_response_execute(row=second)  # a duplicated task: the row is terminal, nothing changes
    row2 = SolveResponse.objects.get(pk=row_id)
    assert row2.completed_at == row.completed_at


def _token_of(row, row_id):
    current = SolveResponse.objects.get(pk=row_id).claim_token
    return "0" * 32 if current != "0" * 32 else "1" * 32


def test_three_lost_claims_make_the_row_infra_missing(parents):
    run = solve_run_create(model=scripted("solver", SCRIPT), parent_ids=["S_FILL"], enqueue=False)
    row_id = run.responses.get().pk
    for _ in range(3):
        assert _claim(row_id, lease=0)[1] == "claimed"
    assert _claim(row_id, lease=0)[1] == "exhausted"
    row = SolveResponse.objects.get(pk=row_id)
    assert row.status == "infra_missing" and row.error and row.credit is None


def test_cancel_and_resume(parents, eager):
    run = solve_run_create(model=scripted("solver", SCRIPT), parent_ids=["S_FILL", "S_WRONG"], enqueue=False)
    solve_run_cancel(run=run)
    ids = list(run.responses.values_list("pk", flat=True))
    assert solve_chunk_process(run_id=run.pk, response_ids=ids) == []
    assert set(run.responses.values_list("status", flat=True)) == {"pending"}
    with pytest.raises(ApplicationError):
        solve_run_cancel(run=run)
    run = solve_run_resume(run=run)
    assert run.status == "completed"
    assert set(run.responses.values_list("status", flat=True)) == {"completed"}
    with pytest.raises(ApplicationError):
        solve_run_resume(run=run)


def test_debate_runs_go_through_the_debate_hook(parents, eager, monkeypatch):
    model = scripted("judge", SCRIPT)
    seen = []

    def debate_response_execute(*, row):
        seen.append(row.parent.problem_id)
        if row.parent.problem_id == "S_WRONG":
            return {
                "status": "infra_missing",
                "raw_output": None,
                "final_answer": "",
                "calls": 2,
                "input_tokens": 5,
                "output_tokens": 0,
                "cost_usd": Decimal("0.001"),
                "latency_ms": 3,
                "error": "solver unavailable",
                "turns": [],
            }
        return {
            "status": "completed",
            "raw_output": "long chosen solution without a box",
            "final_answer": "0.003 km/s",
            "calls": 3,
            "input_tokens": 30,
            "output_tokens": 12,
            "cost_usd": Decimal("0.0300"),
            "latency_ms": 40,
            "error": "",
            "turns": [
                {
                    "seq": 1,
                    "round": 1,
                    "stage": "solve",
                    "agent": "a",
                    "model": model,
                    "raw_output": "x",
                    "parsed": {"answer": "3 m/s"},
                    "status": "completed",
                    "input_tokens": 10,
                    "output_tokens": 4,
                    "cost_usd": Decimal("0.01"),
                    "latency_ms": 10,
                },
                {
                    "seq": 2,
                    "round": 1,
                    "stage": "vote",
                    "agent": "",
                    "model": None,
                    "parsed": {"clusters": [[0]]},
                    "status": "completed",
                },
            ],
        }

    monkeypatch.setattr("solving.runs.execute.debate_response_execute", debate_response_execute)
    run = run_now(kind="debate", parent_ids=["S_FILL", "S_WRONG"], name="debate")
    assert sorted(seen) == ["S_FILL", "S_WRONG"]
    rows = {r.parent.problem_id: r for r in run.responses.select_related("parent")}
    fill = rows["S_FILL"]
    assert (fill.status, fill.final_answer, fill.correct, fill.calls) == ("completed", "0.003 km/s", True, 3)
    assert fill.cost_usd == Decimal("0.03")
    assert list(DebateTurn.objects.filter(response=fill).values_list("seq", "stage", "model_id")) == [
        (1, "solve", model.pk),
        (2, "vote", None),
    ]
    wrong = rows["S_WRONG"]
    assert (wrong.status, wrong.raw_output, wrong.credit, wrong.error) == (
        "infra_missing",
        None,
        None,
        "solver unavailable",
    )
    summary = solve_run_summary(run)
    assert summary.calls == 5 and summary.cost_usd == Decimal("0.031")


def test_management_command_runs_and_resumes(parents, capsys):
    from django.core.management import CommandError, call_command

    scripted("solver", SCRIPT)
    call_command("solve", "--parents", "S_FILL,S_WRONG", "--model", "solver", "--name", "cli", "--inline")
    run = SolveRun.objects.get(name="cli")
    assert run.status == "completed" and run.responses.filter(status="completed").count() == 2
    out = capsys.readouterr().out
    assert "2/2" in out and "SolveAcc 0.500" in out
    with pytest.raises(CommandError):
        call_command("solve", "--parents", "S_FILL", "--model", "nope", "--inline")
    with pytest.raises(CommandError):
        call_command("solve", "--resume", str(run.pk), "--inline")  # every response is already returned


def test_the_simulated_model_answers_a_solving_run_offline(parents, eager):
    model = ModelConfig.objects.create(
        name="sim-solver", provider="simulated", model="sim", extra={"seed": 3}
    )
    run = run_now(model=model, parent_ids=["S_CHOICE", "S_FILL", "S_CALC"])
    rows = {r.parent.problem_id: r for r in run.responses.select_related("parent")}
    assert all(r.status == "completed" for r in rows.values())
    assert rows["S_CHOICE"].final_answer in {"A", "B", "C"}
    assert rows["S_CHOICE"].correct is (rows["S_CHOICE"].final_answer == "B")
    assert rows["S_FILL"].final_answer.split(" ")[0].replace(".", "").isdigit()
    assert rows["S_CALC"].grading == "pending" and run.status == "grading"
