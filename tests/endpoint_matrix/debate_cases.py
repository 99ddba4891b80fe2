"""Matrix rows for the debate solver: launch/list page, run page, htmx progress, transcript, comparison, and the
debate API. Everything is admin-only (``can_run_evaluations``): other roles get 403, anonymous visitors 302 to the
login page (pages) or 403 (API).

``populate`` plans one debate run with ``enqueue=False`` (nothing is called) and writes one finished response
with a short transcript by hand, so the pages have something to show.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from models_registry.models import ModelConfig
from solving.models import DebateTurn
from solving.runs import debate_run_create
from tests.endpoint_matrix import ADM, ANON, Case, World, only
from tests.factories import ParentProblemFactory

PAGES = only({ADM: 200, ANON: 302})
API = only({ADM: 200})
API_CREATED = only({ADM: 201})
SECRET_REFERENCE = "DEBATE-MATRIX-REFERENCE-4N"  # the parent's reference answer: key holders only


def populate(world: World, users: dict[str, Any]) -> None:
    parent = ParentProblemFactory(problem_id="debate-matrix-1", answer=SECRET_REFERENCE, answer_type="fill")
    for name in ("matrix-debate-a", "matrix-debate-b", "matrix-debate-c"):
        ModelConfig.objects.create(
            name=name,
            provider="scripted",
            model="s",
            extra={"default": "<reasoning>F = ma.</reasoning><answer>4 N</answer>"},
        )
    run = debate_run_create(
        solver_names=["matrix-debate-a", "matrix-debate-b", "matrix-debate-c"],
        parent_ids=[parent.problem_id],
        name="matrix debate",
        enqueue=False,
    )
    row = run.responses.get()
    row.status, row.final_answer, row.calls, row.cost_usd, row.correct, row.credit = (
        "completed",
        "4 N",
        3,
        Decimal("0.001"),
        True,
        1.0,
    )
    row.save()
    for seq, agent in enumerate(("matrix-debate-a", "matrix-debate-b", "matrix-debate-c"), start=1):
        DebateTurn.objects.create(
            response=row,
            seq=seq,
            round=1,
            stage="solve",
            agent=agent,
            model=ModelConfig.objects.get(name=agent),
            parsed={"answer": "4 N"},
            raw_output="<answer>4 N</answer>",
            status="completed",
        )
    DebateTurn.objects.create(
        response=row,
        seq=4,
        round=1,
        stage="vote",
        agent="canonicalizer",
        parsed={
            "groups": [["matrix-debate-a", "matrix-debate-b", "matrix-debate-c"]],
            "has_majority": True,
            "winner": "matrix-debate-a",
            "rendered": "4 N",
        },
    )
    DebateTurn.objects.create(
        response=row,
        seq=5,
        round=1,
        stage="selection",
        agent="orchestrator",
        parsed={"decided_by": "consensus", "final_solver": "matrix-debate-a", "rendered": "4 N"},
    )
    world.debate_run_id = run.pk
    world.debate_response_id = row.pk
    world.debate_parent_id = parent.problem_id


def _api_body(world: World) -> dict[str, Any]:
    # level 5 with one solver: the run is planned and dispatched after commit (never inside the test transaction)
    return {
        "solvers": ["matrix-debate-a"],
        "level": 5,
        "parent_ids": [world.debate_parent_id],
        "name": "matrix api",
    }


CASES = [
    Case("debate page", "get", "/debate/", expected=PAGES, fmt=None),
    Case(
        "debate launch (invalid form)",
        "post",
        "/debate/",
        body={"level": "1"},
        expected=only({ADM: 400, ANON: 302}),
        fmt=None,
    ),
    Case("debate run page", "get", lambda w: f"/debate/runs/{w.debate_run_id}/", expected=PAGES, fmt=None),
    Case(
        "debate run progress",
        "get",
        lambda w: f"/debate/runs/{w.debate_run_id}/progress/",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "debate transcript",
        "get",
        lambda w: f"/debate/responses/{w.debate_response_id}/",
        expected=PAGES,
        fmt=None,
        secrets=lambda w: [SECRET_REFERENCE],
    ),
    Case("debate compare", "get", "/debate/compare/", expected=PAGES, fmt=None),
    Case(
        "debate compare chosen",
        "get",
        lambda w: f"/debate/compare/?runs={w.debate_run_id}",
        expected=PAGES,
        fmt=None,
    ),
    Case("api debate runs list", "get", "/api/debate/runs/", expected=API),
    Case("api debate runs create", "post", "/api/debate/runs/", body=_api_body, expected=API_CREATED),
    Case("api debate run detail", "get", lambda w: f"/api/debate/runs/{w.debate_run_id}/", expected=API),
    Case(
        "api debate transcript",
        "get",
        lambda w: f"/api/debate/responses/{w.debate_response_id}/transcript/",
        expected=API,
        secrets=lambda w: [SECRET_REFERENCE],
    ),
]
