"""The run an inspect_ai log becomes: the checked samples of a log written as one completed ``EvalRun``.

``evaluation.runs.inspect_log`` reads the log and checks every value; ``inspect_log_store`` then writes, inside
that import's transaction: the rows (one per sample, matched to its probe by logical id, asked the probe's
released messages), their item scores (the app's own scorer, compared item by item with what the log's
PhysAlign scorer said), and the finalized run with its audit event. What this module refuses (probes the
database or the release does not hold, a condition a probe lacks, costs beyond their columns) is refused with
the same ``InspectLogError`` as the reading, before the transaction commits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.text import slugify

from audit.services import event_record
from kit.canonical import digest
from llm.cost import usage_cost
from llm.types import OutputStatus, Usage
from models_registry.models import ModelConfig
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release
from run_engine.manifest import code_revision, package_versions

from ..inspect_outputs import InspectOutput
from ..models import EvalRequest, EvalRun, ItemScore
from .planning import condition_applies, probe_pools
from .progress import progress_counters_recount
from .results import eval_run_finalize
from .scores import score_of
from .tables import DEFAULT_OPTIONS

SOURCE = "inspect_ai"
# what the import does not read of a probe (it reads the messages, pool flags and the key's mapping)
_PROBE_DEFERRED = ("raw_view", "gold_view", "metadata", "key__native_query", "key__displays", "key__assets")
# a request's cost column: 14 digits, 8 after the point; the run's: 20 digits, 8 after the point
REQUEST_COST_LIMIT = Decimal(10) ** 6
RUN_COST_LIMIT = Decimal(10) ** 12
# unknown probes named in a refusal
_SHOWN_UNKNOWN = 5


class InspectLogError(ApplicationError):
    """The log cannot be stored as a run (not an inspect log, unknown probes, already imported, a value the
    database cannot hold, …)."""


@dataclass
class InspectImport:
    run: EvalRun
    samples: int
    compared: int = 0  # items the log scored with the PhysAlign scorer
    agreed: int = 0
    differences: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LoggedSample:
    """What the import keeps of one sample (the log's images, events and transcript are not held), every value
    checked to fit its column."""

    id: str
    output: InspectOutput
    usage: Usage
    system: str
    user_texts: tuple[str, ...]
    logged: tuple[int | None, int | None, int | None] | None  # the PhysAlign scorer's C, G, J in the log
    error: str
    total_time: float | None
    completed_at: datetime | None


@dataclass(frozen=True)
class CheckedLog:
    """A log read and checked: what the run is made of, every value within its column."""

    log: Any  # the header (its samples are not kept)
    sha256: str
    eval_id: str
    run_name: str
    imported: dict[str, Any]  # what the run's manifest keeps of the header
    condition: str
    logged_release: str | None
    generate: dict[str, Any]  # what a created model config keeps of the log's generate config
    started: datetime | None
    finished: datetime | None
    samples: list[LoggedSample]
    ids: list[str]  # the samples' ids (probes' logical ids), distinct


def _shown(value: Any) -> str:
    """A value from the log as a message quotes it: ASCII-only JSON of at most 80 characters of its text, so
    a NUL, a surrogate or a megabyte of text is printable and short."""
    text = str(value)
    return json.dumps(text[:80]) + ("…" if len(text) > 80 else "")


def _refused(where: str, name: str, problem: str) -> InspectLogError:
    return InspectLogError(
        f"{where}: {name} {problem}; the log is refused and nothing was imported",
        code="inspect_log_value_invalid",
    )


def inspect_log_store(
    checked: CheckedLog, *, release_id: str | None, model_name: str | None, actor: Any
) -> InspectImport:
    """Write the checked log as a finalized run. Called inside the import's transaction, once the log is
    known not to be imported already."""
    release = _release(checked.logged_release, release_id)
    items = dict(release.items.values_list("logical_probe_id", "membership")) if release else None
    probes = _probes(checked.ids, release, items)
    config = _model_config(checked.log, model_name, checked.generate)
    run = _run(checked, release=release, config=config, probes=probes, actor=actor)
    rows = _rows(checked, run, config, probes, items)
    EvalRequest.objects.bulk_create(rows, batch_size=1000)
    result = _score(run, rows, checked.samples)
    return _finalize(result, checked, actor)


def _release(logged: str | None, release_id: str | None) -> Release | None:
    wanted = release_id or logged
    if not wanted:
        return None
    release = Release.objects.filter(release_id=wanted).first()
    if release is None:
        if release_id:
            raise InspectLogError(f"no release {release_id}", code="release_missing")
        return None  # the log's release is not in this database: the probes are matched live
    if release_id and logged and logged != release_id:
        raise InspectLogError(f"the log ran release {logged}, not {release_id}", code="release_mismatch")
    return release


def _probes(ids: list[str], release: Release | None, items: dict[str, Any] | None) -> dict[str, Probe]:
    """The samples' probes by logical id; refused when one is not a probe of the database (or, with a release,
    not an item of the release)."""
    probes = (
        Probe.objects.select_related("key")
        .defer(*_PROBE_DEFERRED)
        .in_bulk(ids, field_name="logical_probe_id")
    )
    missing = set(ids) - probes.keys()
    if items is not None:
        missing |= set(ids) - items.keys()
    unknown = sorted(missing)
    if unknown:
        where = f"release {release.release_id}" if release else "this database"
        raise InspectLogError(
            f"{len(unknown)} sample id(s) are not probes of {where}: {', '.join(unknown[:_SHOWN_UNKNOWN])}"
            + ("…" if len(unknown) > _SHOWN_UNKNOWN else ""),
            code="inspect_probes_unknown",
        )
    return probes


def _model_config(log: Any, model_name: str | None, generate: dict[str, Any]) -> ModelConfig:
    if model_name:
        config = ModelConfig.objects.filter(name=model_name).first()
        if config is None:
            raise InspectLogError(f"no model config named {model_name!r}", code="model_missing")
        return config
    name = slugify(f"inspect-{log.eval.model}".replace("/", "-"))[:100]
    config, _ = ModelConfig.objects.get_or_create(
        name=name,
        defaults={
            "provider": ModelConfig.Provider.SCRIPTED,  # no script: a call would be refused, nothing sent
            "model": str(log.eval.model)[:200],
            "is_active": False,  # never planned by a run: it stands for a model inspect called
            **generate,
            "extra": {"imported_from": SOURCE},
        },
    )
    return config


def _run(
    checked: CheckedLog,
    *,
    release: Release | None,
    config: ModelConfig,
    probes: dict[str, Probe],
    actor: Any,
) -> EvalRun:
    ids = checked.ids
    options = {
        **DEFAULT_OPTIONS,
        "imported_from": SOURCE,
        "inspect_eval_id": checked.eval_id,
        "inspect_log_sha256": checked.sha256,
    }
    run = EvalRun.objects.create(
        name=checked.run_name,
        release=release,
        conditions=[checked.condition],
        probe_filter={"probe_ids": sorted(ids)},
        options=options,
        status=EvalRun.Status.RUNNING,
        total=len(ids),
        started_at=checked.started or timezone.now(),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    run.model_configs.set([config])
    run.manifest = {
        "schema": "physalign_eval_manifest_v1",
        "imported": checked.imported,
        "code_revision": code_revision(),
        "packages": package_versions(),
        "conditions": run.conditions,
        "seed": run.seed,
        "options": options,
        "release": release.release_id if release else None,
        "probe_filter": run.probe_filter,
        "probe_ids_sha256": digest(sorted(ids)),
        "system_prompt_sha256": sorted({digest(probes[i].raw_messages["system"]) for i in ids}),
        "scoring": {"parsing": "kit_5_1", "normalizers": "v2_1"},
        "models": {config.name: {"provider": SOURCE, "model": checked.imported["model"]}},
    }
    run.save(update_fields=["manifest"])
    return run


def _check_messages(sample: LoggedSample, probe: Probe, condition: str) -> None:
    """The sample asked the probe's released messages (system, then the user text), else its scores would be
    of another question."""
    expected = probe.gold_messages if condition == "gold" else probe.raw_messages
    if sample.system != expected["system"] or sample.user_texts != (expected["user"],):
        raise InspectLogError(
            f"sample {probe.logical_probe_id} was not asked the probe's {condition} messages as released",
            code="inspect_messages_differ",
        )


def _rows(
    checked: CheckedLog,
    run: EvalRun,
    config: ModelConfig,
    probes: dict[str, Probe],
    items: dict[str, Any] | None,
) -> list[EvalRequest]:
    """One unsaved row per sample, in the samples' order; refused when a probe lacks the condition, a sample
    was asked other messages, or the costs exceed the run's cost column."""
    condition, rows = checked.condition, []
    for sample in checked.samples:
        probe = probes[sample.id]
        pools = probe_pools(items, probe.logical_probe_id, (probe.in_b, probe.in_l, probe.in_p))
        if not condition_applies(condition, pools):
            raise InspectLogError(
                f"probe {probe.logical_probe_id} is not in pool P: it has no {condition} condition",
                code="inspect_condition_invalid",
            )
        _check_messages(sample, probe, condition)
        rows.append(_row(run, config, probe, condition, pools, sample))
    total_cost = sum((r.cost_usd for r in rows), Decimal(0))
    if total_cost >= RUN_COST_LIMIT:
        raise _refused(
            "the log", "the cost of its samples", f"is ${total_cost:,}, more than a run's cost column holds"
        )
    return rows


def _row(
    run: EvalRun, config: ModelConfig, probe: Probe, condition: str, pools: list[str], sample: LoggedSample
) -> EvalRequest:
    output, usage = sample.output, sample.usage
    served = output.text is not None
    cost = (
        usage_cost(
            usage, price_in_per_mtok=config.price_in_per_mtok, price_out_per_mtok=config.price_out_per_mtok
        )
        if served
        else Decimal(0)
    )
    if cost >= REQUEST_COST_LIMIT:
        raise _refused(
            f"sample {_shown(sample.id)}",
            "its tokens",
            f"cost ${cost:,} at {config.name}'s prices, more than a request's cost column holds",
        )
    return EvalRequest(
        run=run,
        model=config,
        probe=probe,
        condition=condition,
        pools=pools,
        status=EvalRequest.Status.COMPLETED if served else EvalRequest.Status.INFRA_MISSING,
        raw_output=output.text,
        finish_reason=output.finish_reason,
        provider_status=output.status if served else OutputStatus.FAILED,
        error=sample.error or ("" if served else "no model output"),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=cost,
        latency_ms=int((sample.total_time or 0) * 1000),
        completed_at=sample.completed_at or timezone.now(),
    )


def _score(run: EvalRun, rows: list[EvalRequest], samples: list[LoggedSample]) -> InspectImport:
    """Score the stored rows with the app's scorer (the scored status is the row's final status, as in a run)
    and count where the log's own PhysAlign scores agree."""
    result = InspectImport(run=run, samples=len(rows))
    scores = []
    for row, sample in zip(rows, samples, strict=True):
        item = score_of(row)
        row.status = item.status
        scores.append(item)
        if sample.logged is not None:
            result.compared += 1
            if sample.logged == (item.C, item.G, item.J):
                result.agreed += 1
            else:
                result.differences.append(
                    f"{sample.id}: inspect C/G/J {sample.logged}, app {(item.C, item.G, item.J)}"
                )
    EvalRequest.objects.bulk_update(rows, ["status"], batch_size=1000)
    ItemScore.objects.bulk_create(scores, batch_size=1000)
    return result


def _finalize(result: InspectImport, checked: CheckedLog, actor: Any) -> InspectImport:
    """Finalize the run like one the app executed (its finish time the log's), and record the import."""
    run = result.run
    progress_counters_recount(run.pk)
    finalized = eval_run_finalize(run_id=run.pk)
    if finalized is None:  # not reached: every row ended in this transaction, and the run is running
        raise InspectLogError(f"run {run.pk} could not be finalized", code="inspect_run_unfinished")
    if checked.finished:
        EvalRun.objects.filter(pk=run.pk).update(finished_at=checked.finished)
    finalized.refresh_from_db()
    result.run = finalized
    event_record(
        actor=actor,
        verb="eval_run.import_inspect",
        obj=finalized,
        after={
            "eval_id": checked.eval_id,
            "sha256": checked.sha256,
            "samples": result.samples,
            "compared": result.compared,
            "agreed": result.agreed,
        },
    )
    return result
