"""Evaluation runs: plan every request row up front, execute in claimed chunks, score, aggregate.

Safety: a row is claimed with a lease (``claims`` counts claims; at most 3 = the first try plus two
infrastructure retries); its result is written only by the claim holder and only while the row is
not terminal, so a redelivered or duplicated task never writes twice and a returned output is never
replaced. A worker killed mid-row leaves the row ``running``; once its lease expires another claim
takes it (that counts as an infrastructure retry).
"""

from __future__ import annotations

import platform
import subprocess
import uuid
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from annotation.events import event_record
from llm import ImageInput, LLMRequest, ResultStatus
from physalign_site.canonical import digest
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release

from . import metrics as metrics_core
from .conditions import reorder_candidates
from .llm_glue import provider_config_for, shared_limiter
from .models import EvalRequest, EvalRun, ItemScore, MetricSnapshot, ModelConfig
from .scoring import CONDITIONS, ModelResponse, score

MAX_CLAIMS = 3  # one attempt plus at most two infrastructure retries
DEFAULT_OPTIONS = {"chunk_size": 10, "claim_lease_seconds": 300, "resamples": 2000}
TERMINAL = EvalRequest.TERMINAL


# ------------------------------------------------------------------------------------------------ planning

@dataclass(frozen=True)
class PlannedProbe:
    probe: Probe
    pools: list[str]


def _planned_probes(release: Release | None, probe_filter: dict[str, Any]) -> list[PlannedProbe]:
    if release is not None:
        items = {i.logical_probe_id: i.membership for i in release.items.all()}
        probes = Probe.objects.filter(logical_probe_id__in=items)
    else:
        items = None
        probes = Probe.objects.exclude(state__in=["superseded", "rejected"])
    if probe_filter.get("interface"):
        probes = probes.filter(interface=probe_filter["interface"])
    if probe_filter.get("task_id"):
        probes = probes.filter(task_id=probe_filter["task_id"])
    if probe_filter.get("probe_ids"):
        probes = probes.filter(logical_probe_id__in=probe_filter["probe_ids"])
    planned = []
    for probe in probes.order_by("logical_probe_id"):
        if items is not None:
            member = items[probe.logical_probe_id]
            pools = [p for p in ("B", "L", "P") if member.get(p)]
        else:
            pools = [p for p, flag in (("B", probe.in_b), ("L", probe.in_l), ("P", probe.in_p)) if flag]
        planned.append(PlannedProbe(probe, pools))
    if probe_filter.get("limit"):
        planned = planned[: int(probe_filter["limit"])]
    return planned


def _code_revision() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(settings.BASE_DIR), capture_output=True,
                              text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _packages() -> dict[str, str]:
    result = {}
    for name in ("django", "celery", "numpy", "openai", "anthropic", "google-genai", "redis", "psycopg"):
        try:
            result[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            pass
    return result


def _manifest(run: EvalRun, configs: list[ModelConfig], planned: list[PlannedProbe]) -> dict[str, Any]:
    prompt_hashes = sorted({digest(p.probe.raw_messages["system"]) for p in planned})
    return {
        "schema": "physalign_eval_manifest_v1", "code_revision": _code_revision(), "python": platform.python_version(),
        "packages": _packages(), "conditions": run.conditions, "seed": run.seed, "options": run.options,
        "release": run.release.release_id if run.release else None, "probe_filter": run.probe_filter,
        "probe_ids_sha256": digest(sorted(p.probe.logical_probe_id for p in planned)),
        "system_prompt_sha256": prompt_hashes, "scoring": {"parsing": "kit_5_1", "normalizers": "v2_1",
                                                           "max_infra_retries": MAX_CLAIMS - 1},
        "models": {c.name: provider_config_for(c).settings_record() for c in configs},
        "bootstrap": {"resamples": run.options["resamples"], "seed": run.seed, "unit": "parent"},
    }


@transaction.atomic
def eval_run_create(*, model_names: list[str], conditions: list[str], release: Release | None = None,
                    probe_filter: dict[str, Any] | None = None, name: str = "", actor: Any = None,
                    options: dict[str, Any] | None = None, start: bool = True) -> EvalRun:
    """Create the run and every request row (the fixed denominator), then queue the work."""
    unknown = [c for c in conditions if c not in CONDITIONS]
    if not conditions or unknown:
        raise ApplicationError(f"Conditions must be among {list(CONDITIONS)}.", code="conditions_invalid")
    configs = list(ModelConfig.objects.filter(name__in=model_names, is_active=True).order_by("name"))
    missing = sorted(set(model_names) - {c.name for c in configs})
    if not configs or missing:
        raise ApplicationError(f"Unknown or inactive models: {missing or model_names}.", code="models_invalid")
    planned = _planned_probes(release, probe_filter or {})
    if not planned:
        raise ApplicationError("No probes match this run.", code="no_probes")
    run = EvalRun.objects.create(name=name, release=release, conditions=[c for c in CONDITIONS if c in conditions],
                                 probe_filter=probe_filter or {}, options={**DEFAULT_OPTIONS, **(options or {})},
                                 created_by=actor if getattr(actor, "pk", None) else None)
    run.model_configs.set(configs)
    rows = [EvalRequest(run=run, model=config, probe=p.probe, condition=condition, pools=p.pools)
            for config in configs for condition in run.conditions for p in planned
            if condition != "gold" or "P" in p.pools]
    EvalRequest.objects.bulk_create(rows, batch_size=1000)
    run.total = len(rows)
    run.manifest = _manifest(run, configs, planned)
    run.save(update_fields=["total", "manifest"])
    event_record(actor=actor, verb="eval_run.create", obj=run, after={"total": run.total, "models": model_names,
                                                                      "conditions": run.conditions})
    if start:
        transaction.on_commit(lambda: eval_run_dispatch(run_id=run.pk))
    return run


def eval_run_dispatch(*, run_id: int) -> int:
    """Queue chunk tasks for every non-terminal row. Safe to call again (resume, watchdog)."""
    from .tasks import eval_chunk_task

    run = EvalRun.objects.get(pk=run_id)
    if run.status in (EvalRun.Status.CANCELLED, EvalRun.Status.COMPLETED):
        return 0
    EvalRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=timezone.now())
    EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.RUNNING)
    ids = list(run.requests.exclude(status__in=TERMINAL).order_by("pk").values_list("pk", flat=True))
    size = int(run.options.get("chunk_size", 10))
    for start in range(0, len(ids), size):
        eval_chunk_task.delay(run_id, ids[start:start + size])
    if not ids:
        eval_run_finalize(run_id=run_id)
    return len(ids)


@transaction.atomic
def eval_run_cancel(*, run: EvalRun, actor: Any = None) -> EvalRun:
    if run.status not in (EvalRun.Status.QUEUED, EvalRun.Status.RUNNING):
        raise ApplicationError("Only a queued or running run can be cancelled.", code="not_running")
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.CANCELLED)
    event_record(actor=actor, verb="eval_run.cancel", obj=run)
    run.refresh_from_db()
    return run


def eval_run_resume(*, run: EvalRun, actor: Any = None) -> EvalRun:
    if run.status == EvalRun.Status.COMPLETED:
        raise ApplicationError("The run is complete.", code="complete")
    with transaction.atomic():
        EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING, finished_at=None)
        event_record(actor=actor, verb="eval_run.resume", obj=run)
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    return run


# ------------------------------------------------------------------------------------------------ execution

def _images(probe: Probe) -> tuple[ImageInput, ...]:
    originals = {img.image_id: img for img in probe.parent.images.all()}
    views = {v.view_id: v for v in probe.views.all()}
    images = []
    for asset_id in probe.attachment_ids:
        if asset_id in views:
            images.append(ImageInput(bytes(views[asset_id].png), "image/png"))
        else:
            img = originals[asset_id]
            suffix = Path(img.file.name).suffix.lower().lstrip(".")
            with img.file.open("rb") as handle:
                images.append(ImageInput(handle.read(), "image/jpeg" if suffix in ("jpg", "jpeg")
                                         else f"image/{suffix or 'png'}"))
    return tuple(images)


def build_request(row: EvalRequest, seed: int) -> LLMRequest:
    """The exact request of a row: a fresh context with the probe's public messages for the condition."""
    probe = row.probe
    messages = probe.gold_messages if row.condition == "gold" else probe.raw_messages
    user = messages["user"]
    if row.condition == "reordered":
        user = reorder_candidates(user, seed=seed, probe_id=probe.logical_probe_id)
    images = () if row.condition == "no_image" else _images(probe)
    return LLMRequest(system=messages["system"], user=user, images=images,
                      request_id=f"{row.run_id}:{row.model_id}:{probe.logical_probe_id}:{row.condition}")


def _claim(row_id: int, lease: int) -> tuple[EvalRequest | None, str]:
    """(row, "claimed") or (None, "terminal" | "busy" | "exhausted")."""
    token = uuid.uuid4().hex
    now = timezone.now()
    with transaction.atomic():
        row = (EvalRequest.objects.select_for_update(skip_locked=True).filter(pk=row_id).first())
        if row is None:
            return None, "busy"
        if row.status in TERMINAL:
            return None, "terminal"
        if row.status == EvalRequest.Status.RUNNING and row.claimed_at and row.claimed_at > now - timedelta(
                seconds=lease):
            return None, "busy"
        if row.claims >= MAX_CLAIMS:  # three claims died without an answer: not an answer
            _finish(row, status=EvalRequest.Status.INFRA_MISSING, raw_output=None,
                    error="worker lost the request three times")
            return None, "exhausted"
        row.status, row.claim_token, row.claimed_at, row.claims = EvalRequest.Status.RUNNING, token, now, row.claims + 1
        row.save(update_fields=["status", "claim_token", "claimed_at", "claims"])
    return row, "claimed"


def _finish(row: EvalRequest, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(row, name, value)
    row.completed_at = timezone.now()
    row.save()
    _score_row(row)


def _score_row(row: EvalRequest) -> ItemScore:
    key = row.probe.key.key if hasattr(row.probe, "key") else {}
    result = score(ModelResponse(row.raw_output, _response_status(row)), key, row.condition)
    item, _ = ItemScore.objects.update_or_create(
        request=row, defaults={"status": result.status, "C": result.C, "G": result.G, "J": result.J,
                               "object_valid": result.object_valid, "field_valid": result.field_valid,
                               "canonical": list(result.canonical) if result.canonical else None})
    if row.status != result.status:
        EvalRequest.objects.filter(pk=row.pk).update(status=result.status)
        row.status = result.status
    return item


def _response_status(row: EvalRequest) -> str:
    if row.status == EvalRequest.Status.INFRA_MISSING or row.raw_output is None:
        return "infra_missing"
    return {ResultStatus.REFUSAL: "refusal", ResultStatus.TRUNCATED: "truncated"}.get(row.provider_status,
                                                                                       "completed")


def eval_request_execute(*, row: EvalRequest, seed: int) -> None:
    config = provider_config_for(row.model)
    config = replace(config, max_retries=min(int(config.max_retries), MAX_CLAIMS - 1 - (row.claims - 1)))
    request = build_request(row, seed)
    from llm import generate

    result = generate(request, config, limiter=shared_limiter())
    fields: dict[str, Any] = {
        "attempts": result.attempts_record(), "finish_reason": result.finish_reason or "",
        "provider_status": result.status, "input_tokens": result.usage.input_tokens,
        "output_tokens": result.usage.output_tokens, "cost_usd": Decimal(result.cost_usd),
        "latency_ms": result.latency_ms, "request_hash": request.fingerprint(), "error": result.error[:2000],
    }
    if result.status == ResultStatus.FAILED:
        fields.update(status=EvalRequest.Status.INFRA_MISSING, raw_output=None)
    else:
        fields.update(status=EvalRequest.Status.COMPLETED, raw_output=result.text)
    with transaction.atomic():
        locked = EvalRequest.objects.select_for_update(of=("self",)).select_related("probe__key").get(pk=row.pk)
        if locked.status in TERMINAL or locked.claim_token != row.claim_token:
            return  # another claim finished it: never write twice
        _finish(locked, **fields)


def eval_chunk_process(*, run_id: int, request_ids: list[int]) -> list[int]:
    """Process the rows; return the ids another live claim still holds (the task retries those later)."""
    run = EvalRun.objects.get(pk=run_id)
    lease = int(run.options.get("claim_lease_seconds", 300))
    busy = []
    for row_id in request_ids:
        if EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.CANCELLED).exists():
            return []
        row, state = _claim(row_id, lease)
        if state == "busy":
            busy.append(row_id)
            continue
        if row is None:
            continue
        row = EvalRequest.objects.select_related("model", "probe__parent", "probe__key").get(pk=row.pk)
        eval_request_execute(row=row, seed=run.seed)
    if not busy and not run.requests.exclude(status__in=TERMINAL).exists():
        eval_run_finalize(run_id=run_id)
    return busy


# ------------------------------------------------------------------------------------------------ scoring & metrics

def _nearest_outcome(probe: Probe) -> str:
    nearest = (probe.metadata or {}).get("nearest_region") or {}
    status = nearest.get("status")
    if status == "unique":
        alias = nearest["alias"]
    elif status == "tie":
        # controls break ties by the frozen candidate (display) index (Kit §5.6)
        order = [c["alias"] for c in probe.raw_view.get("candidates", [])]
        alias = min(nearest["tied_aliases"], key=lambda a: order.index(a) if a in order else len(order))
    else:
        return "not_applicable"
    return "correct" if alias in probe.key.gold_aliases else "wrong"


def run_items(run: EvalRun) -> list[dict[str, Any]]:
    """The run as item-file records (the contract of ``manage.py metrics``)."""
    rows = (run.requests.filter(status__in=TERMINAL).select_related("model", "probe__parent", "probe__key", "score")
            .order_by("pk"))
    nearest_cache: dict[int, str] = {}
    items = []
    for row in rows:
        probe = row.probe
        if probe.pk not in nearest_cache:
            nearest_cache[probe.pk] = _nearest_outcome(probe)
        s = getattr(row, "score", None)
        items.append({"model": row.model.name, "condition": row.condition, "probe_id": probe.logical_probe_id,
                      "parent_id": probe.parent.problem_id, "task_id": probe.task_id, "interface": probe.interface,
                      "pools": row.pools, "status": s.status if s else row.status,
                      "C": s.C if s else None, "G": s.G if s else None,
                      "K": len(probe.key.key["candidate_map"]), "gold_alias_count": len(probe.key.gold_aliases),
                      "nearest": nearest_cache[probe.pk]})
    return items


def eval_run_finalize(*, run_id: int) -> EvalRun | None:
    with transaction.atomic():
        run = EvalRun.objects.select_for_update().get(pk=run_id)
        if run.status in (EvalRun.Status.COMPLETED, EvalRun.Status.SCORING, EvalRun.Status.CANCELLED):
            return None
        if run.requests.exclude(status__in=TERMINAL).exists():
            return None
        run.status = EvalRun.Status.SCORING
        run.save(update_fields=["status"])
    try:
        metrics_store(run=run)
    except Exception as exc:  # keep the rows; the run can be re-scored
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.FAILED, error=str(exc)[:2000])
        raise
    EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.COMPLETED, finished_at=timezone.now())
    run.refresh_from_db()
    return run


POOL_OF = {"GAcc": "B", "CAcc": "L", "JAcc": "L", "GAcc_L": "L", "GAcc_given_C": "L", "GErr_given_C": "L",
           "quadrants": "L", "paired": "P_m", "no_image": "B", "reordered": "B", "H": "H", "H_hard": "H_hard",
           "random": "B", "nearest": "H"}


@transaction.atomic
def metrics_store(*, run: EvalRun) -> dict[str, Any]:
    result = metrics_core.compute_metrics(run_items(run), resamples=int(run.options.get("resamples", 2000)),
                                          seed=run.seed)
    configs = {c.name: c for c in run.model_configs.all()}
    run.snapshots.all().delete()
    snapshots = []
    for subject, name, stat in metrics_core.iter_statistics(result):
        ci = stat["ci"] or [None, None]
        snapshots.append(MetricSnapshot(
            run=run, model=configs.get(subject), subject=subject, pool=POOL_OF.get(name.split(".")[0], ""),
            metric=name, value=stat["value"], ci_low=ci[0], ci_high=ci[1], lower=stat["lower"], upper=stat["upper"],
            support_parents=stat["parents"], support_probes=stat["probes"],
            undefined_reason=metrics_core.undefined_reason(stat)))
    MetricSnapshot.objects.bulk_create(snapshots)
    EvalRun.objects.filter(pk=run.pk).update(metrics=result)
    run.metrics = result
    return result


def eval_run_rescore(*, run: EvalRun, actor: Any = None) -> dict[str, Any]:
    """Recompute every ItemScore and every metric from the stored raw outputs; no model is called."""
    rows = run.requests.filter(status__in=TERMINAL).select_related("probe__key")
    changed = 0
    for row in rows.iterator(chunk_size=500):
        before = getattr(row, "score", None)
        old = (before.C, before.G) if before else None
        row.status = EvalRequest.Status.INFRA_MISSING if row.raw_output is None else EvalRequest.Status.COMPLETED
        item = _score_row(row)
        changed += int(old != (item.C, item.G))
    result = metrics_store(run=run)
    event_record(actor=actor, verb="eval_run.rescore", obj=run, after={"changed_items": changed})
    return {"changed_items": changed, "metrics": result}


# ------------------------------------------------------------------------------------------------ progress

@dataclass(frozen=True)
class RunProgress:
    total: int
    done: int
    by_status: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    rate_per_s: float | None
    eta_s: float | None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


def run_progress(run: EvalRun) -> RunProgress:
    counts = dict(run.requests.values_list("status").annotate(n=Count("pk")).order_by())
    done = sum(counts.get(s, 0) for s in TERMINAL)
    agg = run.requests.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))
    rate = eta = None
    if run.started_at and done:
        end = run.finished_at or timezone.now()
        elapsed = max((end - run.started_at).total_seconds(), 1e-3)
        rate = done / elapsed
        eta = (run.total - done) / rate if rate else None
    return RunProgress(total=run.total, done=done, by_status=counts, input_tokens=agg["i"] or 0,
                       output_tokens=agg["o"] or 0, cost_usd=agg["c"] or Decimal(0), rate_per_s=rate, eta_s=eta)
