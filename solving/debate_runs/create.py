"""A debate run's settings (levels, debate and front-end switches, stage models) and creating it."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError

from ..models import DebateRun, SolveRun
from ..runs import solve_run_create, solve_run_dispatch

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


def debate_settings_clean(settings: dict[str, Any] | None, *, solver_names: list[str]) -> dict[str, Any]:
    """Check the ablation switches; unknown keys or bad values are refused with a clear message."""
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise ApplicationError(
            f"Unknown debate settings {unknown}; allowed: {list(SETTING_FIELDS)}.",
            code="settings_invalid",
            extra={"unknown": unknown},
        )
    for key in (
        "strict_pruning",
        "pruning",
        "value_voting",
        "cropper",
        "sharpen",
        "visual_extractor",
        "reconstructor",
    ):
        if key in settings and not isinstance(settings[key], bool):
            raise ApplicationError(f"Setting {key!r} must be true or false.", code="settings_invalid")
    bounds = {"max_resolve_rounds": (0, 2), "verify_iterations": (0, 10), "svg_char_cap": (500, 100_000)}
    for key, (low, high) in bounds.items():
        if key in settings:
            value = settings[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ApplicationError(
                    f"Setting {key!r} must be an integer from {low} to {high}.", code="settings_invalid"
                )
    if "rel_tol" in settings:
        value = settings["rel_tol"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) <= 0.5:
            raise ApplicationError("Setting 'rel_tol' must be a number in (0, 0.5].", code="settings_invalid")
        settings["rel_tol"] = float(value)
    if "ocr" in settings and settings["ocr"] not in ("model", "tesseract"):
        raise ApplicationError("Setting 'ocr' must be 'model' or 'tesseract'.", code="settings_invalid")
    if settings.get("default_solver") and settings["default_solver"] not in solver_names:
        raise ApplicationError("The default solver must be one of the solvers.", code="settings_invalid")
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
    release: Any = None,
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


def _dispatch_on_commit(run_id: int) -> None:
    """Queue the run's chunks once the run and its debate settings are committed (as solving runs do)."""
    transaction.on_commit(lambda: solve_run_dispatch(run_id=run_id))
