"""Matrix rows for model configurations, LLM drafts and draft runs."""

from __future__ import annotations

from annotation.models import DraftRun, LLMDraft
from models_registry.models import ModelConfig
from tests.endpoint_matrix import ADM, ANN, ANON, Case, World, only, statuses
from tests.factories import ParentProblemFactory

DRAFTERS = only({ANN: 200, ADM: 200})
DRAFT_PAGES = only({ANN: 200, ADM: 200, ANON: 302})


def populate(world: World, users) -> None:
    config = ModelConfig.objects.create(
        name="matrix-sim", provider="scripted", model="s", extra={"default": "{}"}
    )
    parent = ParentProblemFactory(problem_id="llm-matrix-parent")
    run = DraftRun.objects.create(pass_no=1, model_config=config, prompt_version="draft-p1-v1", total=1)
    world.llm_pid = parent.problem_id
    world.llm_run_id = run.pk
    world.llm_draft_id = LLMDraft.objects.create(
        parent=parent,
        pass_no=1,
        run=run,
        model_config=config,
        model_label="m",
        prompt_version="draft-p1-v1",
        status="failed",
        error="x",
    ).pk
    world.llm_discard_id = LLMDraft.objects.create(
        parent=parent,
        pass_no=1,
        model_config=config,
        model_label="m",
        prompt_version="draft-p1-v1",
        status="failed",
    ).pk


CASES: list[Case] = [
    Case("models list api", "get", "/api/models/", expected=DRAFTERS),
    Case("models list api active page", "get", "/api/models/?active=1&page_size=1", expected=DRAFTERS),
    Case(
        "models create api",
        "post",
        "/api/models/",
        {"name": "matrix-new", "provider": "simulated", "model": "sim"},
        expected=only({ADM: 201}),
    ),
    Case("model detail api", "get", "/api/models/matrix-sim/", expected=DRAFTERS),
    Case(
        "model update api", "patch", "/api/models/matrix-sim/", {"max_retries": 1}, expected=only({ADM: 200})
    ),
    Case("models page", "get", "/models/", expected=only({ADM: 200, ANON: 302})),
    Case("drafts home page", "get", "/drafts/", expected=DRAFT_PAGES),
    Case("draft run page", "get", lambda w: f"/drafts/runs/{w.llm_run_id}/", expected=DRAFT_PAGES),
    Case(
        "draft review page", "get", lambda w: f"/problems/{w.llm_pid}/passes/1/drafts/", expected=DRAFT_PAGES
    ),
    Case(
        "parent drafts api", "get", lambda w: f"/api/parents/{w.llm_pid}/passes/1/drafts/", expected=DRAFTERS
    ),
    Case(
        "parent drafts start api",
        "post",
        lambda w: f"/api/parents/{w.llm_pid}/passes/1/drafts/",
        {"model": "matrix-sim"},
        expected=only({ANN: 202, ADM: 202}),
    ),
    Case("draft detail api", "get", lambda w: f"/api/drafts/{w.llm_draft_id}/", expected=DRAFTERS),
    Case(
        "draft accept api (failed draft)",
        "post",
        lambda w: f"/api/drafts/{w.llm_draft_id}/accept/",
        {},
        expected=only({ANN: 400, ADM: 400}),
    ),
    Case(
        "draft discard api", "post", lambda w: f"/api/drafts/{w.llm_discard_id}/discard/", expected=DRAFTERS
    ),
    Case("draft run api", "get", lambda w: f"/api/draft-runs/{w.llm_run_id}/", expected=DRAFTERS),
    # a missing parent is looked up after the role check; a missing draft or run before the object's
    Case(
        "parent drafts api missing parent",
        "get",
        "/api/parents/no-such-parent/passes/1/drafts/",
        expected=only({ANN: 404, ADM: 404}),
    ),
    Case("draft detail api missing", "get", "/api/drafts/999999/", expected=statuses(404, anonymous=403)),
    Case("draft run api missing", "get", "/api/draft-runs/999999/", expected=statuses(404, anonymous=403)),
]
