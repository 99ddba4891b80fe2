"""Creating a solve run: the planned rows (one ``SolveResponse`` per parent, the fixed denominator) and the run
manifest, shared by both kinds; a single-solver run names its model, a debate run (``kind=debate``) adds its
``DebateRun`` settings (level, debate and front-end switches, stage models). The work is queued on commit.
"""

from __future__ import annotations

import platform
from typing import Any

from django.db import transaction

from annotation.models import ParentProblem
from audit.services import event_record
from kit.canonical import digest
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for
from physalign_site.db import analyze_after_commit
from physalign_site.errors import ApplicationError
from probes.models import Release
from run_engine.engine import MAX_CLAIMS
from run_engine.manifest import code_revision, package_versions

from ..models import DebateRun, SolveResponse, SolveRun
from ..scoring import SCRIPTED_TYPES
from .control import DEFAULT_OPTIONS, solve_run_dispatch
from .prompts import PROMPT_TEMPLATE_SHA256, PROMPT_VERSION

# ------------------------------------------------------------------------------------------------ both kinds


def _dispatch_on_commit(run_id: int) -> None:
    """Queue the run's chunks once the run (and a debate's settings) are committed."""
    transaction.on_commit(lambda: solve_run_dispatch(run_id=run_id))


def _resolve_model(model: ModelConfig | str | None) -> ModelConfig | None:
    if model is None or model == "":
        return None
    if isinstance(model, ModelConfig):
        config = model
    else:
        found = ModelConfig.objects.filter(name=model).first()
        if found is None:
            raise ApplicationError(f"Unknown model {model!r}.", code="model_invalid")
        config = found
    if not config.is_active:
        raise ApplicationError(f"The model {config.name!r} is not active.", code="model_invalid")
    return config


def _planned_parents(release: Release | None, parent_ids: list[str] | None) -> list[ParentProblem]:
    if release is not None and parent_ids:
        raise ApplicationError(
            "Give either a release or a list of parents, not both.", code="parents_invalid"
        )
    if release is not None:
        wanted = sorted(set(release.items.values_list("problem_id", flat=True)))
    elif parent_ids:
        wanted = list(dict.fromkeys(p.strip() for p in parent_ids if p and p.strip()))
    else:
        raise ApplicationError("Choose a release or at least one parent problem.", code="no_parents")
    parents = {p.problem_id: p for p in ParentProblem.objects.filter(problem_id__in=wanted)}
    missing = [p for p in wanted if p not in parents]
    if missing:
        raise ApplicationError(
            f"Unknown parent problems: {missing[:20]}.", code="parents_invalid", extra={"missing": missing}
        )
    if not wanted:
        raise ApplicationError("The release has no parent problems.", code="no_parents")
    return [parents[p] for p in wanted]


def _manifest(run: SolveRun, parents: list[ParentProblem]) -> dict[str, Any]:
    types: dict[str, int] = {}
    for parent in parents:
        types[parent.answer_type] = types.get(parent.answer_type, 0) + 1
    return {
        "schema": "physalign_solve_manifest_v1",
        "code_revision": code_revision(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "kind": run.kind,
        "seed": run.seed,
        "options": run.options,
        "release": run.release.release_id if run.release else None,
        "parent_ids_sha256": digest(run.parent_ids),
        "answer_types": types,
        "prompt": {"version": PROMPT_VERSION, "template_sha256": PROMPT_TEMPLATE_SHA256},
        "model": provider_config_for(run.model).settings_record() if run.model else None,
        "scoring": {
            "script": "boxed_match_v1 (choice letters; fill-in canonical same_value rel_tol=1e-2)",
            "expert": "rubric sum(p)/sum(w)",
            "max_infra_retries": MAX_CLAIMS - 1,
        },
    }


@transaction.atomic
def solve_run_create(
    *,
    kind: str = "single",
    model: ModelConfig | str | None = None,
    release: Release | None = None,
    parent_ids: list[str] | None = None,
    name: str = "",
    options: dict[str, Any] | None = None,
    actor: Any = None,
    enqueue: bool = True,
) -> SolveRun:
    """Create the run and one ``SolveResponse`` per parent (the fixed denominator), then queue the work."""
    if kind not in (SolveRun.Kind.SINGLE, SolveRun.Kind.DEBATE):
        raise ApplicationError("The kind must be 'single' or 'debate'.", code="kind_invalid")
    config = _resolve_model(model)
    if kind == SolveRun.Kind.SINGLE and config is None:
        raise ApplicationError("A single-solver run needs a model.", code="model_invalid")
    parents = _planned_parents(release, parent_ids)
    run = SolveRun.objects.create(
        name=name.strip()[:200],
        kind=kind,
        model=config,
        release=release,
        parent_ids=[p.problem_id for p in parents],
        options={**DEFAULT_OPTIONS, **(options or {})},
        total=len(parents),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    SolveResponse.objects.bulk_create(
        [
            SolveResponse(
                run=run,
                parent=p,
                answer_type=p.answer_type,
                grading=SolveResponse.Grading.SCRIPT
                if p.answer_type in SCRIPTED_TYPES
                else SolveResponse.Grading.NONE,
            )
            for p in parents
        ]
    )
    analyze_after_commit(SolveResponse, rows=len(parents))
    run.manifest = _manifest(run, parents)
    run.save(update_fields=["manifest"])
    event_record(
        actor=actor,
        verb="solve_run.create",
        obj=run,
        after={"total": run.total, "kind": kind, "model": config.name if config else None},
    )
    if enqueue:
        _dispatch_on_commit(run.pk)
    return run


# ------------------------------------------------------------------------------------------------ debate runs

PRUNER_THINKING_BUDGET = 2048  # Debate §3.3.2: the pruner runs at a reduced thinking budget


DEBATE_SETTING_FIELDS = (
    "max_resolve_rounds",
    "strict_pruning",
    "pruning",
    "value_voting",
    "rel_tol",
    "default_solver",
)


FRONTEND_SETTING_FIELDS = (
    "cropper",
    "sharpen",
    "ocr",
    "visual_extractor",
    "reconstructor",
    "verify_iterations",
    "svg_char_cap",
)


SETTING_FIELDS = DEBATE_SETTING_FIELDS + FRONTEND_SETTING_FIELDS


LEVELS = {1: "Text-only", 2: "Structure", 3: "Variable", 4: "Image-only", 5: "Photography (single solver)"}


def _named_config(name: str, role: str) -> ModelConfig:
    """``_config`` of a non-empty name, which resolves or raises."""
    config = _config(name, role)
    assert config is not None
    return config


def _config(name: str | None, role: str) -> ModelConfig | None:
    if not name:
        return None
    config = ModelConfig.objects.filter(name=name).first()
    if config is None:
        raise ApplicationError(
            f"Unknown model configuration {name!r} ({role}).",
            code="model_unknown",
            extra={"role": role, "name": name},
        )
    if not config.is_active:
        raise ApplicationError(
            f"The model configuration {name!r} ({role}) is not active.",
            code="model_inactive",
            extra={"role": role, "name": name},
        )
    return config


BOOLEAN_SETTINGS = (
    "strict_pruning",
    "pruning",
    "value_voting",
    "cropper",
    "sharpen",
    "visual_extractor",
    "reconstructor",
)
INTEGER_SETTINGS = {
    "max_resolve_rounds": (0, 2),
    "verify_iterations": (0, 10),
    "svg_char_cap": (500, 100_000),
}
REL_TOL_MAX = 0.5  # rel_tol lies in (0, REL_TOL_MAX]
OCR_MODES = ("model", "tesseract")


def _settings_refuse(message: str, **extra: Any) -> ApplicationError:
    return ApplicationError(message, code="settings_invalid", extra=extra or None)


def _check_types(settings: dict[str, Any]) -> None:
    """The switches are booleans and the counts integers within their bounds (a bool is no integer here)."""
    for key in BOOLEAN_SETTINGS:
        if key in settings and not isinstance(settings[key], bool):
            raise _settings_refuse(f"Setting {key!r} must be true or false.")
    for key, (low, high) in INTEGER_SETTINGS.items():
        value = settings.get(key)
        if key in settings and (
            isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
        ):
            raise _settings_refuse(f"Setting {key!r} must be an integer from {low} to {high}.")


def _clean_rel_tol(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) <= REL_TOL_MAX:
        raise _settings_refuse(f"Setting 'rel_tol' must be a number in (0, {REL_TOL_MAX}].")
    return float(value)


def debate_settings_clean(settings: dict[str, Any] | None, *, solver_names: list[str]) -> dict[str, Any]:
    """Check the ablation switches; unknown keys or bad values are refused with a clear message."""
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise _settings_refuse(
            f"Unknown debate settings {unknown}; allowed: {list(SETTING_FIELDS)}.", unknown=unknown
        )
    _check_types(settings)
    if "rel_tol" in settings:
        settings["rel_tol"] = _clean_rel_tol(settings["rel_tol"])
    if "ocr" in settings and settings["ocr"] not in OCR_MODES:
        raise _settings_refuse("Setting 'ocr' must be 'model' or 'tesseract'.")
    if settings.get("default_solver") and settings["default_solver"] not in solver_names:
        raise _settings_refuse("The default solver must be one of the solvers.")
    return settings


@transaction.atomic
def debate_run_create(
    *,
    solver_names: list[str],
    pruner: str | None = None,
    selector: str | None = None,
    extractor: str | None = None,
    frontend: str | None = None,
    level: int = 1,
    settings: dict[str, Any] | None = None,
    release: Release | None = None,
    parent_ids: list[str] | None = None,
    name: str = "",
    actor: Any = None,
    enqueue: bool = True,
) -> SolveRun:
    """Plan a debate run over the parents (one ``SolveResponse`` each) and dispatch it after commit.

    Levels 1–4 need three distinct solvers (ideally from different providers: same-provider solvers are
    allowed with a warning in ``run.manifest['debate_warnings']``); Level 5 exactly one. The pruner
    defaults to the second solver (Debate §3.3.2 reuses Solver 2), when pruning is on.
    """
    solver_names = [str(n).strip() for n in (solver_names or []) if str(n).strip()]
    if level not in LEVELS:
        raise ApplicationError("The level must be 1, 2, 3, 4 or 5.", code="level_invalid")
    if level == 5 and len(solver_names) != 1:
        raise ApplicationError("Level 5 uses exactly one solver (Debate §3.3.3).", code="solvers_invalid")
    if level < 5 and len(solver_names) != 3:
        raise ApplicationError("Levels 1–4 use exactly three solvers.", code="solvers_invalid")
    if len(set(solver_names)) != len(solver_names):
        raise ApplicationError(
            "The solvers must be three different model configurations.", code="solvers_invalid"
        )
    clean = debate_settings_clean(settings, solver_names=solver_names)
    solvers = [_named_config(n, f"solver {i}") for i, n in enumerate(solver_names, start=1)]
    warnings: list[str] = []
    providers = [s.provider for s in solvers]
    if len(solvers) > 1 and len(set(providers)) < len(providers):
        warnings.append(
            "Some solvers share a provider; heterogeneous solvers decorrelate errors (Debate §3.3)."
        )
    pruning_needed = level < 5 and clean.get("pruning", True) and clean.get("max_resolve_rounds", 2) > 0
    if pruning_needed and not pruner:
        pruner = solver_names[1]
    pruner_config = _config(pruner, "pruner") if level < 5 else None
    selector_config = _config(selector, "selector") if level < 5 else None
    if level < 5 and selector_config is None:
        warnings.append(
            "No selector: without a majority after the last round the default solver's answer is final."
        )
    extractor_config = _config(extractor, "extractor")
    frontend_config = _config(frontend, "front-end")
    run = solve_run_create(
        kind=SolveRun.Kind.DEBATE,
        model=None,
        release=release,
        parent_ids=parent_ids,
        name=name,
        options={"debate": True},
        actor=actor,
        enqueue=False,
    )
    DebateRun.objects.create(
        solve_run=run,
        solver_names=solver_names,
        pruner=pruner_config,
        selector=selector_config,
        extractor=extractor_config,
        frontend=frontend_config,
        level=level,
        settings=clean,
    )
    manifest = dict(run.manifest or {})
    manifest["debate_warnings"] = warnings
    run.manifest = manifest
    run.save(update_fields=["manifest"])
    if enqueue:
        _dispatch_on_commit(run.pk)
    return run
