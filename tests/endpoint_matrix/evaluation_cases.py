"""Matrix rows for evaluation runs: launch/list and its request-count preview, run page, htmx progress, items, drill-down, downloads,
cancel/resume, and the run API. Everything here is admin-only (``can_run_evaluations``): other roles get
403, anonymous visitors 302 to the login page (pages) or 403 (API).

``populate`` builds its own small probe by hand (this module's ``populate`` runs before the probes
area's, which compiles the demo parent and records a review on every probe, so the key carries an empty
``packet_plan``; the probe's split is ``blocked``, so no release, development review or audit sample picks it
up) and two runs over it: a completed run with scored rows and
stored metrics (few resamples), and a cancelled run whose rows are all terminal, so resuming it only
finalizes — no provider call.
"""

from __future__ import annotations

from typing import Any

from evaluation.models import EvalRequest, EvalRun, ItemScore
from evaluation.runs import metrics_store
from models_registry.models import ModelConfig
from probes.models import Probe, ProbeKey
from tests.endpoint_matrix import ADM, ANON, KEY, Case, World, only
from tests.factories import ParentProblemFactory

PAGES = only({ADM: 200, ANON: 302})
API = only({ADM: 200})
REDIRECT = only({ADM: 302, ANON: 302})  # the admin is sent back to the run page, anonymous to the login page
NOT_FOUND_PAGE = only({ADM: 404, ANON: 302})
KEY_PAGES = only(
    {KEY: 200, ANON: 302}
)  # pages of targets: the admin without the key-holder permission gets 403
SECRET_GOLD = "ent-matrix-secret-gold-block"  # the gold entity id behind alias E1: private


def _probe(parent, probe_id: str) -> Probe:
    user = 'Which region is the block? Answer with JSON {"binding": alias}.\n[Candidates]\nE1: box\nE2: box'
    view = {"candidates": [{"alias": "E1"}, {"alias": "E2"}]}
    probe = Probe.objects.create(
        logical_probe_id=probe_id,
        parent=parent,
        task_id="T02",
        interface="T02-single",
        language="en",
        group_id="g",
        parent_group_id="pg",
        evidence_group="eg",
        content_group_hint="h",
        content_root="c",
        review_target_root="r",
        closure_root="cl",
        packet_review_root="pr",
        state="superseded",
        split="blocked",
        in_b=True,
        raw_view=view,
        gold_view=view,
        raw_messages={"system": "You ground physics text in diagrams.", "user": user},
        gold_messages={"system": "You ground physics text in diagrams.", "user": user},
        attachment_ids=[],
        metadata={"nearest_region": {"status": "predicted", "predicted_alias": "E2", "tied_aliases": []}},
    )
    ProbeKey.objects.create(
        probe=probe,
        native_query={},
        displays={},
        assets={},
        key={
            "candidate_map": {"E1": {"id": SECRET_GOLD}, "E2": {"id": "ent-matrix-pulley"}},
            "gold_targets": [{"id": SECRET_GOLD}],
            "read_targets": [],
            "packet_plan": {"observation_ids": []},
            "response_contract": {"binding_key": "binding", "cardinality": "one"},
        },
    )
    return probe


def _run(config: ModelConfig, probes: list[Probe], status: str) -> EvalRun:
    run = EvalRun.objects.create(
        name=f"matrix {status}",
        conditions=["raw", "no_image"],
        status=status,
        options={"chunk_size": 10, "claim_lease_seconds": 300, "resamples": 20},
    )
    run.model_configs.set([config])
    for probe, output, g in zip(probes, ['{"binding": "E1"}', '{"binding": "E2"}'], (1, 0), strict=True):
        for condition in run.conditions:
            row = EvalRequest.objects.create(
                run=run,
                model=config,
                probe=probe,
                condition=condition,
                pools=["B"],
                status="completed",
                raw_output=output,
                claims=1,
            )
            ItemScore.objects.create(
                request=row,
                status="completed",
                C=None,
                G=g,
                object_valid=True,
                field_valid={"binding": True},
                canonical=[SECRET_GOLD if g else "ent-matrix-pulley"],
            )
    run.total = run.requests.count()
    run.save(update_fields=["total"])
    return run


def populate(world: World, users: dict[str, Any]) -> None:
    config = ModelConfig.objects.create(
        name="matrix-eval", provider="scripted", model="s", extra={"default": '{"binding": "E1"}'}
    )
    probes = [
        _probe(ParentProblemFactory(problem_id=f"eval-matrix-{i}"), f"PAQ-EVAL-MATRIX-{i}") for i in (1, 2)
    ]
    done = _run(config, probes, EvalRun.Status.COMPLETED)
    metrics_store(run=done)
    world.eval_run_id = done.pk
    world.eval_request_id = done.requests.order_by("pk").first().pk
    world.eval_cancelled_id = _run(config, probes, EvalRun.Status.CANCELLED).pk
    queued = EvalRun.objects.create(name="matrix queued", conditions=["raw"], options={"resamples": 20})
    queued.model_configs.set([config])
    world.eval_queued_id = queued.pk
    world.eval_probe_id = probes[0].logical_probe_id


def _launch_form(world: World) -> dict[str, Any]:
    return {
        "name": "matrix launch",
        "models": ["matrix-eval"],
        "conditions": ["raw"],
        "resamples": 20,
        "interface": "T02-single",
        "limit": 1,
    }


def _launch_api(world: World) -> dict[str, Any]:
    return {
        "models": ["matrix-eval"],
        "conditions": ["raw", "no_image"],
        "name": "matrix api launch",
        "probe_filter": {"probe_ids": [world.eval_probe_id]},
        "resamples": 20,
    }


CASES: list[Case] = [
    # pages
    Case("eval runs page", "get", "/runs/", expected=PAGES, fmt=None),
    Case("eval run launch form", "post", "/runs/", _launch_form, expected=REDIRECT, fmt="multipart"),
    Case(
        "eval run launch form invalid",
        "post",
        "/runs/",
        {"name": "no models"},
        expected=PAGES,
        fmt="multipart",
    ),
    Case(
        "eval run launch preview",
        "get",
        "/runs/preview/?models=matrix-eval&conditions=raw&conditions=gold&resamples=20",
        headers={"HX-Request": "true"},
        expected=PAGES,
        fmt=None,
    ),
    Case("eval run launch preview empty", "get", "/runs/preview/", expected=PAGES, fmt=None),
    Case("eval run page", "get", lambda w: f"/runs/{w.eval_run_id}/", expected=PAGES, fmt=None),
    Case("eval run page missing", "get", "/runs/999999/", expected=NOT_FOUND_PAGE, fmt=None),
    Case(
        "eval run progress partial",
        "get",
        lambda w: f"/runs/{w.eval_queued_id}/progress/",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "eval run progress partial htmx",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/progress/",
        headers={"HX-Request": "true"},
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "eval run items page",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/items/?condition=raw&status=completed",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "eval request drill-down",  # every admin sees scores and the parsed answer; the target, key holders only
        "get",
        lambda w: f"/eval-requests/{w.eval_request_id}/",
        expected=PAGES,
        fmt=None,
        secrets=lambda w: [SECRET_GOLD],
    ),
    Case(
        "eval request drill-down missing", "get", "/eval-requests/999999/", expected=NOT_FOUND_PAGE, fmt=None
    ),
    Case(
        "eval run download csv",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/download/csv/",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "eval run download json",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/download/json/",
        expected=PAGES,
        fmt=None,
    ),
    Case(
        "eval run download items",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/download/items/",
        expected=KEY_PAGES,
        fmt=None,
    ),
    Case(
        "eval run download unknown format",
        "get",
        lambda w: f"/runs/{w.eval_run_id}/download/xlsx/",
        expected=NOT_FOUND_PAGE,
        fmt=None,
    ),
    Case(
        "eval run cancel",
        "post",
        lambda w: f"/runs/{w.eval_queued_id}/do/cancel/",
        expected=REDIRECT,
        fmt="multipart",
    ),
    Case(
        "eval run resume",
        "post",
        lambda w: f"/runs/{w.eval_cancelled_id}/do/resume/",
        expected=REDIRECT,
        fmt="multipart",
    ),
    Case(
        "eval run unknown action",
        "post",
        lambda w: f"/runs/{w.eval_run_id}/do/delete/",
        expected=NOT_FOUND_PAGE,
        fmt="multipart",
    ),
    Case(
        "eval run cancel by GET",
        "get",
        lambda w: f"/runs/{w.eval_queued_id}/do/cancel/",
        expected=only({ANON: 302}, others=405),
        fmt=None,
    ),
    # API
    Case("eval runs api", "get", "/api/eval/runs/", expected=API),
    Case("eval runs api launch", "post", "/api/eval/runs/", _launch_api, expected=only({ADM: 201})),
    Case(
        "eval runs api launch bad body", "post", "/api/eval/runs/", {"models": []}, expected=only({ADM: 400})
    ),
    Case(
        "eval runs api launch unknown model",
        "post",
        "/api/eval/runs/",
        {"models": ["no-such-model"], "conditions": ["raw"]},
        expected=only({ADM: 400}),
    ),
    Case("eval run api", "get", lambda w: f"/api/eval/runs/{w.eval_run_id}/", expected=API),
    Case("eval run api missing", "get", "/api/eval/runs/999999/", expected=only({ADM: 404})),
    # model configurations (list/create/detail/update rows live in llm_cases)
    Case(
        "model detail api missing",
        "get",
        "/api/models/no-such-model/",
        expected=only({"annotator": 404, ADM: 404}),
    ),
]
