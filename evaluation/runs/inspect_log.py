"""An inspect_ai log stored as an evaluation run (issue 17, item 2): ``manage.py import_inspect_log``.

The log of ``physalign_studio.inspect_task:physalign`` (any model) becomes one completed ``EvalRun``: one
``EvalRequest`` per sample (the probe by its logical id, the condition of the task's arguments) with the raw
output text, the finish reason, the tokens the log counted and the sample's time, scored by the app's own path
(``scores.score_of``: the probe's key in the database) and finalized like a run the app executed
(``results.eval_run_finalize``: metric snapshots and the item file), so the run pages, dashboards and
``manage.py metrics`` read it like any other. The outputs are read as the inspect scorer reads them
(``evaluation.inspect_outputs``), so where the log carries inspect's scores they agree item by item; the import
counts the agreement and names any difference.

The model is a ``ModelConfig`` that never calls anything: an existing config named with ``model_name``, else
``inspect-<model>``, created inactive (no run can plan it) with the ``scripted`` provider and no script (a call,
were one ever made, is refused before anything is sent). A log is imported once: its eval id is recorded in the
run's options and a second import is refused, naming the run. The import is one transaction: a refused log leaves
nothing behind. Of each sample only the text, tokens and scores are kept (not its images or events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import connection, transaction
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

from ..inspect_outputs import InspectOutput, inspect_response
from ..models import EvalRequest, EvalRun, ItemScore
from ..scoring import CONDITIONS
from .planning import condition_applies, probe_pools
from .progress import progress_counters_recount
from .results import eval_run_finalize
from .scores import score_of
from .tables import DEFAULT_OPTIONS

SOURCE = "inspect_ai"
SCORER = "physalign_scorer"
# the task argument that names the key file: a local path, not recorded
_PRIVATE_ARGS = ("private",)
# what the import does not read of a probe (it reads the messages, pool flags and the key's mapping)
_PROBE_DEFERRED = ("raw_view", "gold_view", "metadata", "key__native_query", "key__displays", "key__assets")


class InspectLogError(ApplicationError):
    """The log cannot be stored as a run (not an inspect log, unknown probes, already imported, …)."""


@dataclass
class InspectImport:
    run: EvalRun
    samples: int
    compared: int = 0  # items the log scored with the PhysAlign scorer
    agreed: int = 0
    differences: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LoggedSample:
    """What the import keeps of one sample (the log's images, events and transcript are not held)."""

    id: str
    output: InspectOutput
    usage: Usage
    system: str
    user_texts: tuple[str, ...]
    logged: tuple[int | None, int | None, int | None] | None  # the PhysAlign scorer's C, G, J in the log
    error: str
    total_time: float | None
    completed_at: Any


def _invalid(path: Path, exc: Exception) -> InspectLogError:
    return InspectLogError(
        f"{path.name} is not an inspect_ai log ({type(exc).__name__}: {str(exc)[:300]})",
        code="inspect_log_invalid",
    )


def _read(path: Path) -> tuple[Any, list[LoggedSample]]:
    """The log's header and its samples, each kept as a ``LoggedSample``; the events, the attachments (the
    images) and the stores are not read."""
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise InspectLogError(f"no such file: {path}", code="inspect_log_missing")
    try:
        log = read_eval_log(str(path), exclude_fields={"events", "attachments", "store"})
    except Exception as exc:  # inspect raises zip, JSON and validation errors of many types
        raise _invalid(path, exc) from exc
    return log, [_logged_sample(s) for s in log.samples or []]


def _logged_sample(sample: Any) -> LoggedSample:
    served = sample.error is None and bool(sample.output.choices)
    output = inspect_response(
        served=served,
        completion=sample.output.completion if served else None,
        stop_reason=sample.output.stop_reason if served else None,
    )
    # the tokens: the output's usage, else the sum of what the sample used per model
    usages = [sample.output.usage] if sample.output.usage else list(sample.model_usage.values())
    messages = sample.input if isinstance(sample.input, list) else []
    user = next((m for m in messages if m.role == "user"), None)
    if user is None:
        texts: tuple[str, ...] = (sample.input,) if isinstance(sample.input, str) else ()
    elif isinstance(user.content, str):
        texts = (user.content,)
    else:
        texts = tuple(c.text for c in user.content if c.type == "text")
    return LoggedSample(
        id=str(sample.id),
        output=output,
        usage=Usage(
            input_tokens=sum(u.input_tokens or 0 for u in usages),
            output_tokens=sum(u.output_tokens or 0 for u in usages),
        ),
        system=next((m.text for m in messages if m.role == "system"), ""),
        user_texts=texts,
        logged=_logged_score(sample),
        error=str(sample.error.message) if sample.error else "",
        total_time=sample.total_time,
        completed_at=sample.completed_at,
    )


def _when(value: Any) -> datetime | None:
    if not value:
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _condition(log: Any) -> str:
    condition = str(log.eval.task_args.get("condition", "raw"))
    if condition not in CONDITIONS:
        raise InspectLogError(f"the log's condition {condition!r} is not one of {list(CONDITIONS)}")
    return condition


def _release(log: Any, release_id: str | None) -> Release | None:
    logged = (log.eval.metadata or {}).get("physalign_release_id")
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


def _model_config(log: Any, model_name: str | None) -> ModelConfig:
    if model_name:
        config = ModelConfig.objects.filter(name=model_name).first()
        if config is None:
            raise InspectLogError(f"no model config named {model_name!r}", code="model_missing")
        return config
    name = slugify(f"inspect-{log.eval.model}".replace("/", "-"))[:100]
    generate = log.eval.model_generate_config
    config, _ = ModelConfig.objects.get_or_create(
        name=name,
        defaults={
            "provider": ModelConfig.Provider.SCRIPTED,  # no script: a call would be refused, nothing sent
            "model": str(log.eval.model)[:200],
            "is_active": False,  # never planned by a run: it stands for a model inspect called
            "max_output_tokens": getattr(generate, "max_tokens", None),
            "temperature": getattr(generate, "temperature", None),
            "extra": {"imported_from": SOURCE},
        },
    )
    return config


def _check_messages(sample: LoggedSample, probe: Probe, condition: str) -> None:
    """The sample asked the probe's released messages (system, then the user text), else its scores would be
    of another question."""
    expected = probe.gold_messages if condition == "gold" else probe.raw_messages
    if sample.system != expected["system"] or sample.user_texts != (expected["user"],):
        raise InspectLogError(
            f"sample {probe.logical_probe_id} was not asked the probe's {condition} messages as released",
            code="inspect_messages_differ",
        )


def _logged_score(sample: Any) -> tuple[int | None, int | None, int | None] | None:
    found = (sample.scores or {}).get(SCORER)
    if found is None or not isinstance(found.value, dict):
        return None

    def one(name: str) -> int | None:
        value = found.value.get(name)
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)

    return one("C"), one("G"), one("J")


def _eval_id_lock(eval_id: str) -> None:
    """Two imports of one log at once: the second waits for the first and then finds its run."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"inspect_log:{eval_id}"])


def inspect_log_import(
    *,
    path: Path,
    name: str = "",
    release_id: str | None = None,
    model_name: str | None = None,
    actor: Any = None,
) -> InspectImport:
    log, samples = _read(path)
    log.samples = None  # only the kept parts of the samples stay in memory
    eval_id = log.eval.eval_id
    if not eval_id:
        raise InspectLogError(f"{path.name} has no eval id", code="inspect_log_invalid")
    if log.status != "success":
        raise InspectLogError(
            f"the eval of {path.name} ended {log.status}, not success: only a finished eval is a run "
            "(finish it with inspect eval-retry, then import that log)",
            code="inspect_log_unfinished",
        )
    condition = _condition(log)
    if not samples:
        raise InspectLogError(f"{path.name} holds no samples (was it run with --no-log-samples?)")
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise InspectLogError(
            "the log has several samples per probe (epochs > 1); a run holds one response per probe",
            code="inspect_log_epochs",
        )
    with transaction.atomic():
        _eval_id_lock(eval_id)
        existing = EvalRun.objects.filter(options__inspect_eval_id=eval_id).first()
        if existing is not None:
            raise InspectLogError(
                f"this log (eval {eval_id}) is already run {existing.pk} ({existing})",
                code="inspect_log_imported",
            )
        release = _release(log, release_id)
        items = dict(release.items.values_list("logical_probe_id", "membership")) if release else None
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
                f"{len(unknown)} sample id(s) are not probes of {where}: {', '.join(unknown[:5])}"
                + ("…" if len(unknown) > 5 else ""),
                code="inspect_probes_unknown",
            )
        config = _model_config(log, model_name)
        run = _run(log, path, eval_id, name, release, condition, config, probes, ids, actor)
        rows = []
        for sample in samples:
            probe = probes[sample.id]
            pools = probe_pools(items, probe.logical_probe_id, (probe.in_b, probe.in_l, probe.in_p))
            if not condition_applies(condition, pools):
                raise InspectLogError(
                    f"probe {probe.logical_probe_id} is not in pool P: it has no {condition} condition",
                    code="inspect_condition_invalid",
                )
            _check_messages(sample, probe, condition)
            rows.append(_row(run, config, probe, condition, pools, sample))
        EvalRequest.objects.bulk_create(rows, batch_size=1000)
        result = InspectImport(run=run, samples=len(rows))
        scores = []
        for row, sample in zip(rows, samples, strict=True):
            item = score_of(row)
            row.status = item.status  # the scored status is the row's final status, as in a run
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
        progress_counters_recount(run.pk)
        finalized = eval_run_finalize(run_id=run.pk)
        if finalized is None:  # not reached: every row ended in this transaction, and the run is running
            raise InspectLogError(f"run {run.pk} could not be finalized", code="inspect_run_unfinished")
        finished = _when(log.stats.completed_at)
        if finished:
            EvalRun.objects.filter(pk=run.pk).update(finished_at=finished)
        finalized.refresh_from_db()
        result.run = finalized
        event_record(
            actor=actor,
            verb="eval_run.import_inspect",
            obj=finalized,
            after={
                "eval_id": eval_id,
                "samples": result.samples,
                "compared": result.compared,
                "agreed": result.agreed,
            },
        )
    return result


def _run(
    log: Any,
    path: Path,
    eval_id: str,
    name: str,
    release: Release | None,
    condition: str,
    config: ModelConfig,
    probes: dict[str, Probe],
    ids: list[str],
    actor: Any,
) -> EvalRun:
    args = {k: v for k, v in log.eval.task_args.items() if k not in _PRIVATE_ARGS}
    options = {**DEFAULT_OPTIONS, "imported_from": SOURCE, "inspect_eval_id": eval_id}
    run = EvalRun.objects.create(
        name=name or f"inspect {log.eval.task} {log.eval.model} {condition}"[:200],
        release=release,
        conditions=[condition],
        probe_filter={"probe_ids": sorted(ids)},
        options=options,
        status=EvalRun.Status.RUNNING,
        total=len(ids),
        started_at=_when(log.stats.started_at) or timezone.now(),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    run.model_configs.set([config])
    run.manifest = {
        "schema": "physalign_eval_manifest_v1",
        "imported": {
            "from": SOURCE,
            "log": path.name,
            "eval_id": eval_id,
            "run_id": log.eval.run_id,
            "task": log.eval.task,
            "task_args": args,
            "model": log.eval.model,
            "created": str(log.eval.created),
            "status": log.status,
            "inspect_version": (log.eval.packages or {}).get("inspect_ai"),
        },
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
        "models": {config.name: {"provider": SOURCE, "model": log.eval.model}},
    }
    run.save(update_fields=["manifest"])
    return run


def _row(
    run: EvalRun, config: ModelConfig, probe: Probe, condition: str, pools: list[str], sample: LoggedSample
) -> EvalRequest:
    output, usage = sample.output, sample.usage
    served = output.text is not None
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
        error=sample.error[:2000] or ("" if served else "no model output"),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage_cost(
            usage, price_in_per_mtok=config.price_in_per_mtok, price_out_per_mtok=config.price_out_per_mtok
        )
        if served
        else Decimal(0),
        latency_ms=int((sample.total_time or 0) * 1000),
        completed_at=_when(sample.completed_at) or timezone.now(),
    )
