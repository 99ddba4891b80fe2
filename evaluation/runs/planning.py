"""What a run asks: the probes it plans for each model and condition, and the manifest it records."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from audit.services import event_record
from kit.canonical import digest
from models_registry.models import ModelConfig
from models_registry.preflight import models_missing, models_preflight
from models_registry.providers import provider_config_for
from physalign_site.db import analyze_after_commit
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release
from run_engine.engine import (
    MAX_CLAIMS,
)
from run_engine.manifest import code_revision, package_versions

from ..models import EvalRequest, EvalRun
from ..scoring import CONDITIONS
from .control import eval_run_dispatch
from .estimate import ModelEstimate, plan_estimates
from .tables import DEFAULT_OPTIONS


@dataclass(frozen=True)
class PlannedProbe:
    probe: Probe
    pools: list[str]


# What planning reads of a probe: its id, pool flags and (for the manifest's prompt hashes) its messages —
# never the views, keys or metadata, which at the paper's scale are most of a probe's bytes.
PLAN_FIELDS = ("logical_probe_id", "in_b", "in_l", "in_p", "raw_messages")


def _planned_queryset(
    release: Release | None, probe_filter: dict[str, Any]
) -> tuple[QuerySet[Probe], dict[str, dict[str, Any]] | None]:
    """The probes a run plans, in order, and the release's membership per probe (None: the live probes)."""
    items = None
    if release is not None:
        items = dict(release.items.values_list("logical_probe_id", "membership"))
        probes = Probe.objects.filter(logical_probe_id__in=items)
    else:
        probes = Probe.objects.exclude(state__in=["superseded", "rejected"])
    if probe_filter.get("interface"):
        probes = probes.filter(interface=probe_filter["interface"])
    if probe_filter.get("task_id"):
        probes = probes.filter(task_id=probe_filter["task_id"])
    if probe_filter.get("probe_ids"):
        probes = probes.filter(logical_probe_id__in=probe_filter["probe_ids"])
    probes = probes.order_by("logical_probe_id")
    if probe_filter.get("limit"):
        probes = probes[: int(probe_filter["limit"])]
    return probes, items


def probe_pools(
    items: dict[str, dict[str, Any]] | None, logical_id: str, flags: tuple[bool, bool, bool]
) -> list[str]:
    """A planned probe's pools: the release's membership when the run is on a release, else the probe's flags."""
    if items is not None:
        member = items[logical_id]
        return [p for p in ("B", "L", "P") if member.get(p)]
    return [p for p, flag in zip(("B", "L", "P"), flags, strict=True) if flag]


def _planned_probes(release: Release | None, probe_filter: dict[str, Any]) -> list[PlannedProbe]:
    probes, items = _planned_queryset(release, probe_filter)
    return [
        PlannedProbe(probe, probe_pools(items, probe.logical_probe_id, (probe.in_b, probe.in_l, probe.in_p)))
        for probe in probes.only(*PLAN_FIELDS)
    ]


# What the launch preview's cost estimate reads of a probe: the messages and the attachments' identities.
ESTIMATE_FIELDS = (*PLAN_FIELDS, "gold_messages", "parent_id", "attachment_ids")


def _planned_pools(release: Release | None, probe_filter: dict[str, Any]) -> list[list[str]]:
    """The pools of each planned probe, without building a probe (the launch preview counts only these)."""
    probes, items = _planned_queryset(release, probe_filter)
    return [
        probe_pools(items, logical_id, (in_b, in_l, in_p))
        for logical_id, in_b, in_l, in_p in probes.values_list("logical_probe_id", "in_b", "in_l", "in_p")
    ]


def _manifest(run: EvalRun, configs: list[ModelConfig], planned: list[PlannedProbe]) -> dict[str, Any]:
    prompt_hashes = sorted({digest(p.probe.raw_messages["system"]) for p in planned})
    return {
        "schema": "physalign_eval_manifest_v1",
        "code_revision": code_revision(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "conditions": run.conditions,
        "seed": run.seed,
        "options": run.options,
        "release": run.release.release_id if run.release else None,
        "probe_filter": run.probe_filter,
        "probe_ids_sha256": digest(sorted(p.probe.logical_probe_id for p in planned)),
        "system_prompt_sha256": prompt_hashes,
        "scoring": {"parsing": "kit_5_1", "normalizers": "v2_1", "max_infra_retries": MAX_CLAIMS - 1},
        "models": {c.name: provider_config_for(c).settings_record() for c in configs},
        "bootstrap": {"resamples": run.options["resamples"], "seed": run.seed, "unit": "parent"},
    }


# What each condition runs on, in words for the launch form (the rule itself is ``condition_applies``).
CONDITION_SCOPE = {
    "raw": "every planned probe",
    "gold": "paired probes only (pool P: a valid +GT reading packet)",
    "no_image": "every planned probe",
    "reordered": "every planned probe",
}


def condition_applies(condition: str, pools: list[str]) -> bool:
    """+GT (gold) runs only on paired-eligible probes (pool P); every other condition on every planned probe."""
    return condition != "gold" or "P" in pools


def _ordered_conditions(conditions: list[str]) -> list[str]:
    unknown = [c for c in conditions if c not in CONDITIONS]
    if not conditions or unknown:
        raise ApplicationError(f"Conditions must be among {list(CONDITIONS)}.", code="conditions_invalid")
    return [c for c in CONDITIONS if c in conditions]


def _active_configs(model_names: list[str]) -> list[ModelConfig]:
    return list(ModelConfig.objects.filter(name__in=model_names, is_active=True).order_by("name"))


def _request_plan(conditions: list[str], planned: list[PlannedProbe]) -> list[tuple[str, PlannedProbe]]:
    """The (condition, probe) pairs one model is asked: the run creates one row per model and pair."""
    return [(c, p) for c in conditions for p in planned if condition_applies(c, p.pools)]


@dataclass(frozen=True)
class ConditionPreview:
    condition: str
    scope: str
    probes: int  # planned probes this condition applies to
    chosen: bool
    requests: int  # rows it adds: probes × models when chosen, else 0


@dataclass(frozen=True)
class RunPreview:
    """What a launch would create, before it does: per condition the probes it applies to, and the rows."""

    probes: int
    models: int
    conditions: list[ConditionPreview]
    pairs: int  # (condition, probe) pairs per model
    total: int  # request rows: models × pairs
    estimates: list[ModelEstimate] = field(default_factory=list)  # per model (``llm.estimate``'s rule)
    cost_usd: Decimal = Decimal(0)  # the estimates' total
    batch: bool = False  # priced at the batch discount (a batch-mode launch)
    unavailable: list[str] = field(default_factory=list)  # the preflight's refusals: the launch would fail


def eval_run_preview(
    *,
    model_names: list[str],
    conditions: list[str],
    release: Release | None = None,
    probe_filter: dict[str, Any] | None = None,
    batch: bool = False,
) -> RunPreview:
    """The rows ``eval_run_create`` would make for the same arguments, counted by the same planning code.
    Unknown conditions and inactive models count for nothing (the launch refuses them). ``batch``: priced as
    a batch-mode run (``llm.batch``'s discount for the models whose provider has a batch API)."""
    planned = _planned_pools(release, probe_filter or {})
    chosen = [c for c in CONDITIONS if c in conditions]
    configs = _active_configs(model_names)
    models = len(configs)
    applies = {c: sum(1 for pools in planned if condition_applies(c, pools)) for c in CONDITIONS}
    per_condition = [
        ConditionPreview(
            condition=c,
            scope=CONDITION_SCOPE[c],
            probes=applies[c],
            chosen=c in chosen,
            requests=applies[c] * models if c in chosen else 0,
        )
        for c in CONDITIONS
    ]
    pairs = sum(applies[c] for c in chosen)  # what _request_plan makes per model
    estimates = _estimates(configs, chosen, release, probe_filter or {}, batch) if configs and pairs else []
    return RunPreview(
        probes=len(planned),
        models=models,
        conditions=per_condition,
        pairs=pairs,
        total=models * pairs,
        estimates=estimates,
        cost_usd=sum((e.cost_usd for e in estimates), Decimal(0)),
        batch=batch,
        unavailable=[m.message for m in models_missing(configs)],
    )


def _estimates(
    configs: list[ModelConfig],
    conditions: list[str],
    release: Release | None,
    probe_filter: dict[str, Any],
    batch: bool,
) -> list[ModelEstimate]:
    """Each model's estimated tokens and dollars over the requests the launch would create."""
    probes, items = _planned_queryset(release, probe_filter)
    planned = [
        PlannedProbe(probe, probe_pools(items, probe.logical_probe_id, (probe.in_b, probe.in_l, probe.in_p)))
        for probe in probes.only(*ESTIMATE_FIELDS)
    ]
    pairs = [(c, p.probe) for c, p in _request_plan(conditions, planned)]
    return plan_estimates([(c.name, provider_config_for(c)) for c in configs], pairs, batch=batch)


@transaction.atomic
def eval_run_create(
    *,
    model_names: list[str],
    conditions: list[str],
    release: Release | None = None,
    probe_filter: dict[str, Any] | None = None,
    name: str = "",
    actor: Any = None,
    options: dict[str, Any] | None = None,
    start: bool = True,
) -> EvalRun:
    """Create the run and every request row (the fixed denominator), then queue the work. Refused before
    anything is written when a model is unknown or inactive, or needs what this machine lacks (the
    preflight: a tool such as tesseract, an API key variable, a base URL; ``model_unavailable``)."""
    ordered = _ordered_conditions(conditions)
    configs = _active_configs(model_names)
    missing = sorted(set(model_names) - {c.name for c in configs})
    if not configs or missing:
        raise ApplicationError(
            f"Unknown or inactive models: {missing or model_names}.", code="models_invalid"
        )
    models_preflight(configs)
    planned = _planned_probes(release, probe_filter or {})
    if not planned:
        raise ApplicationError("No probes match this run.", code="no_probes")
    run = EvalRun.objects.create(
        name=name,
        release=release,
        conditions=ordered,
        probe_filter=probe_filter or {},
        options={**DEFAULT_OPTIONS, **(options or {})},
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    run.model_configs.set(configs)
    rows = [
        EvalRequest(run=run, model=config, probe=p.probe, condition=condition, pools=p.pools)
        for config in configs
        for condition, p in _request_plan(run.conditions, planned)
    ]
    EvalRequest.objects.bulk_create(rows, batch_size=1000)
    analyze_after_commit(EvalRequest, rows=len(rows))
    run.total = len(rows)
    run.manifest = _manifest(run, configs, planned)
    run.save(update_fields=["total", "manifest"])
    event_record(
        actor=actor,
        verb="eval_run.create",
        obj=run,
        after={"total": run.total, "models": model_names, "conditions": run.conditions},
    )
    if start:
        transaction.on_commit(lambda: eval_run_dispatch(run_id=run.pk))
    return run
