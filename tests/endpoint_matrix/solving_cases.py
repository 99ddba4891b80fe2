"""Matrix rows for solving runs and expert grading: pages (list + launch, run, htmx progress, actions, response,
grading) and the API (runs list/create/detail, grade). Everything is admin-only (``can_run_evaluations``):
other roles get 403, anonymous visitors 302 to the login page (pages) or 403 (API).

``populate`` creates a scripted model, two parents (fill-in and calculation) and three runs executed in
process (the scripted provider makes no network call): one awaiting grading, one queued, one cancelled with
every row terminal (resuming it only finalizes).
"""

from __future__ import annotations

from typing import Any

from models_registry.models import ModelConfig
from solving.models import SolveRun
from solving.runs import solve_chunk_process, solve_run_create
from tests.endpoint_matrix import ADM, ANON, KEY, Case, World, only
from tests.factories import ParentProblemFactory

PAGES = only({ADM: 200, ANON: 302})
API = only({ADM: 200})
REDIRECT = only({ADM: 302, ANON: 302})
NOT_FOUND_PAGE = only({ADM: 404, ANON: 302})
BAD_FORM = only({ADM: 400, ANON: 302})
KEY_PAGES = only({KEY: 200, ANON: 302})  # grading is against the reference: key holders only
SECRET_ANSWER, SECRET_SOLUTION = "SOLVE-MATRIX-REFERENCE-ANSWER", "SOLVE-MATRIX-REFERENCE-SOLUTION"


def _executed(config: ModelConfig, parent_ids: list[str], name: str) -> SolveRun:
    run = solve_run_create(model=config, parent_ids=parent_ids, name=name, enqueue=False)
    SolveRun.objects.filter(pk=run.pk).update(status=SolveRun.Status.RUNNING)
    solve_chunk_process(run_id=run.pk, response_ids=list(run.responses.values_list("pk", flat=True)))
    run.refresh_from_db()
    return run


def populate(world: World, users: dict[str, Any]) -> None:
    config = ModelConfig.objects.create(
        name="matrix-solve",
        provider="scripted",
        model="s",
        extra={"default": "v = 3 m/s so \\boxed{3 m/s}", "backoff_base_seconds": 0},
    )
    ParentProblemFactory(
        problem_id="solve-matrix-fill", answer_type="fill", answer="3 m/s", stem="MATRIX-FILL"
    )
    ParentProblemFactory(
        problem_id="solve-matrix-calc",
        answer_type="calc",
        stem="MATRIX-CALC",
        answer=SECRET_ANSWER,
        solution=SECRET_SOLUTION,
    )
    grading = _executed(config, ["solve-matrix-fill", "solve-matrix-calc"], "matrix grading")
    world.solve_model_pk = config.pk
    world.solve_run_id = grading.pk
    world.solve_script_response_id = grading.responses.get(parent__problem_id="solve-matrix-fill").pk
    world.solve_pending_response_id = grading.responses.get(parent__problem_id="solve-matrix-calc").pk
    world.solve_queued_id = solve_run_create(
        model=config, parent_ids=["solve-matrix-fill"], name="matrix queued", enqueue=False
    ).pk
    cancelled = _executed(config, ["solve-matrix-fill"], "matrix cancelled")
    SolveRun.objects.filter(pk=cancelled.pk).update(status=SolveRun.Status.CANCELLED)
    world.solve_cancelled_id = cancelled.pk
    eval_config = ModelConfig.objects.filter(name="matrix-eval").first()
    if (
        eval_config is not None
    ):  # a solve run of the evaluation area's model, shown on that run's results page
        world.solve_eval_model_run_id = _executed(eval_config, ["solve-matrix-fill"], "matrix eval model").pk


def _grade(correct: bool = True, awarded: str = "1") -> dict[str, Any]:
    return {
        "description": ["method", "value"],
        "awarded": [awarded, "0"],
        "maximum": ["2", "1"],
        "correct": "on" if correct else "",
        "note": "matrix",
        "then": "next",
    }


def _grade_api(awarded: str = "1") -> dict[str, Any]:
    return {"components": [{"description": "method", "awarded": awarded, "maximum": "2"}], "correct": True}


CASES: list[Case] = [
    # pages
    Case("solve runs page", "get", "/solve-runs/", expected=PAGES, fmt=None),
    Case(
        "solve run launch form",
        "post",
        "/solve-runs/",
        lambda w: {"model": w.solve_model_pk, "parent_ids": "solve-matrix-fill", "name": "matrix launch"},
        expected=REDIRECT,
        fmt="multipart",
    ),
    Case(
        "solve run launch form invalid",
        "post",
        "/solve-runs/",
        lambda w: {"model": w.solve_model_pk, "parent_ids": ""},
        expected=BAD_FORM,
        fmt="multipart",
    ),
    Case(
        "solve run launch form unknown parent",
        "post",
        "/solve-runs/",
        lambda w: {"model": w.solve_model_pk, "parent_ids": "no-such-parent"},
        expected=BAD_FORM,
        fmt="multipart",
    ),
    Case(
        "solve run page",
        "get",
        lambda w: f"/solve-runs/{w.solve_run_id}/?grading=pending",
        expected=PAGES,
        fmt=None,
    ),
    Case("solve run page missing", "get", "/solve-runs/999999/", expected=NOT_FOUND_PAGE, fmt=None),
    Case(
        "solve run progress partial",
        "get",
        lambda w: f"/solve-runs/{w.solve_queued_id}/progress/",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "solve run progress partial htmx",
        "get",
        lambda w: f"/solve-runs/{w.solve_run_id}/progress/",
        headers={"HX-Request": "true"},
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "solve run cancel",
        "post",
        lambda w: f"/solve-runs/{w.solve_queued_id}/do/cancel/",
        expected=REDIRECT,
        fmt="multipart",
    ),
    Case(
        "solve run resume",
        "post",
        lambda w: f"/solve-runs/{w.solve_cancelled_id}/do/resume/",
        expected=REDIRECT,
        fmt="multipart",
    ),
    Case(
        "solve run unknown action",
        "post",
        lambda w: f"/solve-runs/{w.solve_run_id}/do/delete/",
        expected=NOT_FOUND_PAGE,
        fmt="multipart",
    ),
    Case(
        "solve run cancel by GET",
        "get",
        lambda w: f"/solve-runs/{w.solve_queued_id}/do/cancel/",
        expected=only({ANON: 302}, others=405),
        fmt=None,
    ),
    Case(
        "solve response page",
        "get",
        lambda w: f"/solve-runs/responses/{w.solve_script_response_id}/",
        expected=PAGES,
        fmt=None,
    ),
    Case(  # every admin sees the model's answer; the reference answer and solution, key holders only
        "solve response page of an expert-graded answer",
        "get",
        lambda w: f"/solve-runs/responses/{w.solve_pending_response_id}/",
        expected=PAGES,
        fmt=None,
        secrets=lambda w: [SECRET_ANSWER, SECRET_SOLUTION],
    ),
    Case(
        "solve response page missing",
        "get",
        "/solve-runs/responses/999999/",
        expected=NOT_FOUND_PAGE,
        fmt=None,
    ),
    Case(
        "solve grading page",
        "get",
        lambda w: f"/solve-runs/responses/{w.solve_pending_response_id}/grade/",
        expected=KEY_PAGES,
        fmt=None,
        secrets=lambda w: [SECRET_ANSWER, SECRET_SOLUTION],
    ),
    Case(
        "solve grading page of a script-scored answer",
        "get",
        lambda w: f"/solve-runs/responses/{w.solve_script_response_id}/grade/",
        expected=only({KEY: 404, ANON: 302}),
        fmt=None,
    ),
    Case(
        "solve grading save",
        "post",
        lambda w: f"/solve-runs/responses/{w.solve_pending_response_id}/grade/",
        _grade(),
        expected=only({KEY: 302, ANON: 302}),
        fmt="multipart",
    ),
    Case(
        "solve grading save invalid",
        "post",
        lambda w: f"/solve-runs/responses/{w.solve_pending_response_id}/grade/",
        _grade(awarded="5"),
        expected=only({KEY: 400, ANON: 302}),
        fmt="multipart",
    ),
    Case(
        "eval run page with solving run",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/?solve={getattr(w, 'solve_eval_model_run_id', 0)}",
        expected=PAGES,
        fmt=None,
    ),
    # API
    Case("solve runs api", "get", "/api/solve/runs/", expected=API),
    Case(
        "solve runs api launch",
        "post",
        "/api/solve/runs/",
        {"model": "matrix-solve", "parent_ids": ["solve-matrix-fill"], "name": "api launch"},
        expected=only({ADM: 201}),
    ),
    Case(
        "solve runs api launch bad body",
        "post",
        "/api/solve/runs/",
        {"parent_ids": ["solve-matrix-fill"]},
        expected=only({ADM: 400}),
    ),
    Case(
        "solve runs api launch unknown model",
        "post",
        "/api/solve/runs/",
        {"model": "no-such-model", "parent_ids": ["solve-matrix-fill"]},
        expected=only({ADM: 400}),
    ),
    Case(
        "solve runs api launch unknown release",
        "post",
        "/api/solve/runs/",
        {"model": "matrix-solve", "release": "NREL-no-such-release", "name": "api launch"},
        expected=only({ADM: 404}),
    ),
    Case("solve run api", "get", lambda w: f"/api/solve/runs/{w.solve_run_id}/", expected=API),
    Case("solve run api missing", "get", "/api/solve/runs/999999/", expected=only({ADM: 404})),
    Case(
        "solve response api grade",
        "post",
        lambda w: f"/api/solve/responses/{w.solve_pending_response_id}/grade/",
        _grade_api(),
        expected=only({KEY: 200}),
    ),
    Case(
        "solve response api grade invalid",
        "post",
        lambda w: f"/api/solve/responses/{w.solve_pending_response_id}/grade/",
        _grade_api(awarded="3"),
        expected=only({KEY: 400}),
    ),
    Case(
        "solve response api grade script-scored",
        "post",
        lambda w: f"/api/solve/responses/{w.solve_script_response_id}/grade/",
        _grade_api(),
        expected=only({KEY: 400}),
    ),
    Case(
        "solve response api grade missing",
        "post",
        "/api/solve/responses/999999/grade/",
        _grade_api(),
        expected=only({KEY: 404}),
    ),
]
