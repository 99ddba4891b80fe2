"""A run's items, metrics (stored as snapshots), rescoring and progress."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from audit.services import event_record
from kit.nearest import controls_choice
from probes.models import Probe
from run_engine.progress import RunTotals, rate_and_eta

from .. import metrics as metrics_core
from ..models import EvalRequest, EvalRun, MetricSnapshot
from .scores import score_row
from .tables import TERMINAL


def _nearest_outcome(probe: Probe) -> str:
    """The control's outcome: the compiler's Kit-shaped prediction, a tie broken by display order."""
    nearest = (probe.metadata or {}).get("nearest_region") or {}
    alias = controls_choice(nearest, [c["alias"] for c in probe.raw_view.get("candidates", [])])
    if alias is None:
        return "not_applicable"
    return "correct" if alias in probe.key.gold_aliases else "wrong"


def run_items(run: EvalRun) -> list[dict[str, Any]]:
    """The run as item-file records (the contract of ``manage.py metrics``)."""
    rows = (
        run.requests.filter(status__in=TERMINAL)
        .select_related("model", "probe__parent", "probe__key", "score")
        .order_by("pk")
    )
    nearest_cache: dict[int, str] = {}
    items = []
    for row in rows:
        probe = row.probe
        if probe.pk not in nearest_cache:
            nearest_cache[probe.pk] = _nearest_outcome(probe)
        s = getattr(row, "score", None)
        items.append(
            {
                "model": row.model.name,
                "condition": row.condition,
                "probe_id": probe.logical_probe_id,
                "parent_id": probe.parent.problem_id,
                "task_id": probe.task_id,
                "interface": probe.interface,
                "pools": row.pools,
                "status": s.status if s else row.status,
                "C": s.C if s else None,
                "G": s.G if s else None,
                "K": len(probe.key.view.candidate_map),
                "gold_alias_count": len(probe.key.gold_aliases),
                "nearest": nearest_cache[probe.pk],
            }
        )
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


POOL_OF = {
    "GAcc": "B",
    "CAcc": "L",
    "JAcc": "L",
    "GAcc_L": "L",
    "GAcc_given_C": "L",
    "GErr_given_C": "L",
    "quadrants": "L",
    "paired": "P_m",
    "kit_paired": "P",
    "no_image": "B",
    "reordered": "B",
    "H": "H",
    "H_hard": "H_hard",
    "random": "B",
    "nearest": "H",
}


@transaction.atomic
def metrics_store(*, run: EvalRun) -> dict[str, Any]:
    result = metrics_core.compute_metrics(
        run_items(run), resamples=int(run.options.get("resamples", 2000)), seed=run.seed
    )
    configs = {c.name: c for c in run.model_configs.all()}
    run.snapshots.all().delete()
    snapshots = []
    for subject, name, stat in metrics_core.iter_statistics(result):
        ci = stat["ci"] or [None, None]
        snapshots.append(
            MetricSnapshot(
                run=run,
                model=configs.get(subject),
                subject=subject,
                pool=POOL_OF.get(name.split(".")[0], ""),
                metric=name,
                value=stat["value"],
                ci_low=ci[0],
                ci_high=ci[1],
                lower=stat["lower"],
                upper=stat["upper"],
                support_parents=stat["parents"],
                support_probes=stat["probes"],
                undefined_reason=metrics_core.undefined_reason(stat),
            )
        )
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
        row.status = (
            EvalRequest.Status.INFRA_MISSING if row.raw_output is None else EvalRequest.Status.COMPLETED
        )
        item = score_row(row)
        changed += int(old != (item.C, item.G))
    result = metrics_store(run=run)
    event_record(actor=actor, verb="eval_run.rescore", obj=run, after={"changed_items": changed})
    return {"changed_items": changed, "metrics": result}


class RunProgress(RunTotals):
    """An evaluation run's progress (``run_engine.progress``)."""


def run_progress(run: EvalRun) -> RunProgress:
    counts = dict(run.requests.values_list("status").annotate(n=Count("pk")).order_by())
    done = sum(counts.get(s, 0) for s in TERMINAL)
    agg = run.requests.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))
    rate, eta = rate_and_eta(run, done)
    return RunProgress(
        total=run.total,
        done=done,
        by_status=counts,
        input_tokens=agg["i"] or 0,
        output_tokens=agg["o"] or 0,
        cost_usd=agg["c"] or Decimal(0),
        rate_per_s=rate,
        eta_s=eta,
    )
