"""Reads for evaluation runs and results."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from models_registry.models import ModelConfig
from solving.models import SolveRun
from solving.scoring import solve_link
from solving.selectors import solve_runs_for_models
from solving.summary import solve_run_summary

from .models import EvalRequest, EvalRun

TABLE2 = ("GAcc", "CAcc", "JAcc", "GAcc_L", "GAcc_given_C", "GErr_given_C")
QUADRANTS = ("q11", "q10", "q01", "q00")
SERIES_LABELS = {"GAcc": "GAcc", "CAcc": "CAcc", "JAcc": "JAcc", "GAcc_given_C": "GAcc|C"}
PAIRED = ("base", "gt", "delta", "repair_share", "harm_share", "repair_rate", "harm_rate")
KIT_PAIRED = ("GAcc", "GAcc_gold", "delta", "CAcc", "JAcc", "GAcc_L", "GAcc_given_C")


def run_list() -> QuerySet[EvalRun]:
    """Runs, newest first, without their metrics and manifest (a list shows neither)."""
    return (
        EvalRun.objects.select_related("release")
        .prefetch_related("model_configs")
        .defer("metrics", "manifest", "probe_filter")
    )


def run_get(*, pk: int) -> EvalRun | None:
    """A run with its release and models (its metrics and manifest too), or None."""
    return EvalRun.objects.select_related("release").prefetch_related("model_configs").filter(pk=pk).first()


def run_requests(
    run: EvalRun, *, model: str = "", condition: str = "", status: str = ""
) -> QuerySet[EvalRequest]:
    """The run's requests in row order, filtered, with what the items table shows (no output, no probe JSON)."""
    rows = (
        EvalRequest.objects.filter(run_id=run.pk)
        .select_related("model", "probe", "score")
        .only(
            "pk",
            "run_id",
            "condition",
            "status",
            "claims",
            "error",
            "model__name",
            "probe__logical_probe_id",
            "probe__interface",
            "probe__parent_id",
            "score__C",
            "score__G",
            "score__J",
        )
        .order_by("pk")
    )
    if model:
        rows = rows.filter(model__name=model)
    if condition:
        rows = rows.filter(condition=condition)
    if status:
        rows = rows.filter(status=status)
    return rows


PAGE_SIZE = 50


@dataclass(frozen=True)
class RequestPage:
    """One page of a run's requests by primary key (keyset paging: no OFFSET, so a late page costs what the
    first does). ``next_after`` / ``previous_before`` are the keys of the neighbouring pages, or None."""

    rows: list[EvalRequest]
    next_after: int | None
    previous_before: int | None

    def __iter__(self) -> Iterator[EvalRequest]:
        return iter(self.rows)


def run_requests_page(
    run: EvalRun,
    *,
    after: int | None = None,
    before: int | None = None,
    size: int | None = None,
    **filters: str,
) -> RequestPage:
    """The ``size`` requests after the key ``after`` (the first page without one), or the ``size`` before the
    key ``before``, with the keys of the pages either side."""
    size = size or PAGE_SIZE
    rows = run_requests(run, **filters)
    if before is not None and after is None:  # backwards: the page just before the key
        found = list(rows.filter(pk__lt=before).order_by("-pk")[: size + 1])
        page = list(reversed(found[:size]))
        previous = page[0].pk if len(found) > size else None
        edge = page[-1].pk if page else before - 1
        following = edge if rows.filter(pk__gt=edge).exists() else None
    else:
        found = list((rows if after is None else rows.filter(pk__gt=after))[: size + 1])
        page = found[:size]
        following = page[-1].pk if len(found) > size else None
        edge = page[0].pk if page else (after or 0) + 1
        previous = edge if after is not None and rows.filter(pk__lt=edge).exists() else None
    return RequestPage(rows=page, next_after=following, previous_before=previous)


def results_tables(metrics: dict[str, Any] | None) -> dict[str, Any]:
    """Rows for the results page: Table 2 (main), Fig. 4 quadrants, paired +GT, Table 3 controls."""
    if not metrics:
        return {}
    models = metrics["models"]
    return {
        "main": [(m, [stats[k] for k in TABLE2]) for m, stats in models.items()],
        "quadrants": [(m, [stats["quadrants"][k] for k in QUADRANTS]) for m, stats in models.items()],
        "paired": [(m, [stats["paired"][k] for k in PAIRED]) for m, stats in models.items()],
        "conditions": [
            (
                m,
                [
                    stats["no_image"]["GAcc"],
                    stats["no_image"]["delta"],
                    stats["reordered"]["GAcc"],
                    stats["reordered"]["delta"],
                ],
            )
            for m, stats in models.items()
        ],
        "heuristics": [
            (
                m,
                [
                    stats["H"]["model"],
                    stats["H"]["nearest"],
                    stats["H"]["model_minus_nearest"],
                    stats["H_hard"]["model"],
                    stats["H_hard"]["random"],
                    stats["H_hard"]["model_minus_random"],
                    stats["H_hard"]["CpGm_share"],
                    stats["H_hard"]["GErr_given_C"],
                ],
            )
            for m, stats in models.items()
        ],
        "baselines": metrics["baselines"],
        "bootstrap": metrics.get("bootstrap", {}),
        # Paper tables, each row with the support (N parents / n probes) of its pool
        "h_same_support": [
            (
                m,
                [
                    stats["H"]["model"],
                    stats["H"]["nearest"],
                    stats["H"]["random"],
                    stats["H"]["model_minus_nearest"],
                ],
                _support(stats["H"]["model"]),
            )
            for m, stats in models.items()
        ],
        "h_hard": [
            (
                m,
                [stats["H_hard"]["model"], stats["H_hard"]["random"], stats["H_hard"]["model_minus_random"]],
                _support(stats["H_hard"]["model"]),
            )
            for m, stats in models.items()
        ],
        "l_h_hard": [
            (
                m,
                [stats["H_hard"]["CpGm_share"], stats["H_hard"]["GErr_given_C"]],
                _support(stats["H_hard"]["CpGm_share"]),
            )
            for m, stats in models.items()
        ],
        "paired_support": {m: _support(stats["paired"]["base"]) for m, stats in models.items()},
        # the Kit's paired report (every P probe, missing responses as bounds); absent in metrics stored
        # before it existed, and null for a model without +GT responses
        "kit_paired": [
            (m, [stats["kit_paired"][k] for k in KIT_PAIRED], _support(stats["kit_paired"]["GAcc"]))
            for m, stats in models.items()
            if stats.get("kit_paired")
        ],
        "coverage": [
            (m, _support(stats["GAcc"]), _support(stats["CAcc"]), _support(stats["paired"]["base"]))
            for m, stats in models.items()
        ],
        "baseline_rows": [
            ("Uniform chance (B)", metrics["baselines"]["random"], _support(metrics["baselines"]["random"])),
            (
                "Nearest region (H)",
                metrics["baselines"]["nearest"],
                _support(metrics["baselines"]["nearest"]),
            ),
        ],
    }


def _support(stat: dict[str, Any]) -> str:
    """``N/n``: the parents and probes of a statistic's pool."""
    return f"{stat.get('parents', 0)}/{stat.get('probes', 0)}"


def chart_data(metrics: dict[str, Any] | None) -> dict[str, Any]:
    if not metrics:
        return {}
    models = list(metrics["models"])
    series = []
    for key in ("GAcc", "CAcc", "JAcc", "GAcc_given_C"):
        stats = [metrics["models"][m][key] for m in models]
        series.append(
            {
                "label": SERIES_LABELS[key],
                "values": [s["value"] for s in stats],
                "ci": [s["ci"] for s in stats],
                "lower": [s["lower"] for s in stats],
                "upper": [s["upper"] for s in stats],
            }
        )
    quadrants = [
        {"label": q, "values": [metrics["models"][m]["quadrants"][q]["value"] for m in models]}
        for q in QUADRANTS
    ]
    return {
        "models": models,
        "series": series,
        "quadrants": quadrants,
        "baselines": {k: v["value"] for k, v in metrics["baselines"].items()},
    }


def snapshots_csv(run: EvalRun) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "run",
            "subject",
            "pool",
            "metric",
            "value",
            "ci_low",
            "ci_high",
            "lower",
            "upper",
            "support_parents",
            "support_probes",
            "undefined_reason",
        ]
    )
    for s in run.snapshots.order_by("subject", "metric"):
        writer.writerow(
            [
                run.pk,
                s.subject,
                s.pool,
                s.metric,
                s.value,
                s.ci_low,
                s.ci_high,
                s.lower,
                s.upper,
                s.support_parents,
                s.support_probes,
                s.undefined_reason,
            ]
        )
    return out.getvalue()


def l_grounding_items(run: EvalRun, model_id: int) -> list[tuple[str, int | None]]:
    """``(parent_id, G)`` of a model's raw-condition responses on the run's L probes (G None = infra-missing)."""
    rows = run.requests.filter(model_id=model_id, condition="raw").values_list(
        "pools", "probe__parent__problem_id", "score__G", "status"
    )
    return [
        (parent, None if status == "infra_missing" else g)
        for pools, parent, g, status in rows
        if "L" in pools
    ]


def _solver(solve_run: SolveRun) -> ModelConfig:
    """A single-solver run's model (``solve_run_single_has_model``; loaded by ``solve_runs_for_models``)."""
    model = solve_run.model
    assert model is not None
    return model


def solving_section(run: EvalRun, chosen_ids: list[int]) -> dict[str, Any]:
    """The results page's Solving section: Table 2's SolveAcc column and Table 17 / Figure 5 per chosen run.

    Without a choice, the latest returned solve run of each of the evaluation run's models is shown."""
    available = list(solve_runs_for_models(run.model_configs.all()))
    if chosen_ids:
        chosen = [r for r in available if r.pk in chosen_ids]
    else:
        latest: dict[int, SolveRun] = {}
        for r in available:
            latest.setdefault(_solver(r).pk, r)
        chosen = list(latest.values())
    rows: list[dict[str, Any]] = []
    for solve_run in sorted(chosen, key=lambda r: (_solver(r).name, -r.pk)):
        model = _solver(solve_run)
        summary = solve_run_summary(solve_run)
        correct = dict(solve_run.responses.values_list("parent__problem_id", "correct"))
        link = solve_link(l_grounding_items(run, model.pk), correct)
        rows.append({"model": model.name, "solve_run": solve_run, "summary": summary, "link": link})
    chart = {
        "models": [r["model"] for r in rows],
        "g_wrong": [r["link"].g_wrong for r in rows],
        "g_correct": [r["link"].g_correct for r in rows],
        "delta": [r["link"].delta for r in rows],
    }
    return {"available": available, "chosen_ids": [r.pk for r in chosen], "rows": rows, "chart": chart}


def request_probe_pairs(rows: Any) -> list[tuple[int, str]]:
    """``(parent pk, logical probe id)`` of the requests' probes (rows loaded with their probe), for
    :func:`audit.disclosure.disclose`."""
    return sorted({(r.probe.parent_id, r.probe.logical_probe_id) for r in rows})


def run_probe_pairs(run: EvalRun) -> list[tuple[int, str]]:
    """``(parent pk, logical probe id)`` of every probe the run asks about, in one query."""
    return list(
        EvalRequest.objects.filter(run=run)
        .values_list("probe__parent_id", "probe__logical_probe_id")
        .distinct()
        .order_by("probe__parent_id", "probe__logical_probe_id")
    )
