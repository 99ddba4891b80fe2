"""Reads for evaluation runs and results."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.db.models import QuerySet

from .models import EvalRequest, EvalRun

TABLE2 = ("GAcc", "CAcc", "JAcc", "GAcc_L", "GAcc_given_C", "GErr_given_C")
QUADRANTS = ("q11", "q10", "q01", "q00")
SERIES_LABELS = {"GAcc": "GAcc", "CAcc": "CAcc", "JAcc": "JAcc", "GAcc_given_C": "GAcc|C"}
PAIRED = ("base", "gt", "delta", "repair_share", "harm_share", "repair_rate", "harm_rate")


def run_list() -> QuerySet[EvalRun]:
    return EvalRun.objects.select_related("release").prefetch_related("model_configs")


def run_requests(run: EvalRun, *, model: str = "", condition: str = "", status: str = "") -> QuerySet[EvalRequest]:
    rows = run.requests.select_related("model", "probe", "score").order_by("pk")
    if model:
        rows = rows.filter(model__name=model)
    if condition:
        rows = rows.filter(condition=condition)
    if status:
        rows = rows.filter(status=status)
    return rows


def results_tables(metrics: dict[str, Any] | None) -> dict[str, Any]:
    """Rows for the results page: Table 2 (main), Fig. 4 quadrants, paired +GT, Table 3 controls."""
    if not metrics:
        return {}
    models = metrics["models"]
    return {
        "main": [(m, [stats[k] for k in TABLE2]) for m, stats in models.items()],
        "quadrants": [(m, [stats["quadrants"][k] for k in QUADRANTS]) for m, stats in models.items()],
        "paired": [(m, [stats["paired"][k] for k in PAIRED]) for m, stats in models.items()],
        "conditions": [(m, [stats["no_image"]["GAcc"], stats["no_image"]["delta"], stats["reordered"]["GAcc"],
                            stats["reordered"]["delta"]]) for m, stats in models.items()],
        "heuristics": [(m, [stats["H"]["model"], stats["H"]["nearest"], stats["H"]["model_minus_nearest"],
                            stats["H_hard"]["model"], stats["H_hard"]["random"], stats["H_hard"]["model_minus_random"],
                            stats["H_hard"]["CpGm_share"], stats["H_hard"]["GErr_given_C"]])
                       for m, stats in models.items()],
        "baselines": metrics["baselines"],
        "bootstrap": metrics.get("bootstrap", {}),
    }


def chart_data(metrics: dict[str, Any] | None) -> dict[str, Any]:
    if not metrics:
        return {}
    models = list(metrics["models"])
    series = []
    for key in ("GAcc", "CAcc", "JAcc", "GAcc_given_C"):
        stats = [metrics["models"][m][key] for m in models]
        series.append({"label": SERIES_LABELS[key], "values": [s["value"] for s in stats], "ci": [s["ci"] for s in stats],
                       "lower": [s["lower"] for s in stats], "upper": [s["upper"] for s in stats]})
    quadrants = [{"label": q, "values": [metrics["models"][m]["quadrants"][q]["value"] for m in models]}
                 for q in QUADRANTS]
    return {"models": models, "series": series, "quadrants": quadrants,
            "baselines": {k: v["value"] for k, v in metrics["baselines"].items()}}


def snapshots_csv(run: EvalRun) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["run", "subject", "pool", "metric", "value", "ci_low", "ci_high", "lower", "upper",
                     "support_parents", "support_probes", "undefined_reason"])
    for s in run.snapshots.order_by("subject", "metric"):
        writer.writerow([run.pk, s.subject, s.pool, s.metric, s.value, s.ci_low, s.ci_high, s.lower, s.upper,
                         s.support_parents, s.support_probes, s.undefined_reason])
    return out.getvalue()
