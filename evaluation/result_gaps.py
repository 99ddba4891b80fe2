"""Why a results cell shows only bounds, or a chart has no bar (issue 28 item 12): the rows behind the gap.

A statistic's point value is withheld (bounds only) when its pool holds an ``infra_missing`` row: no answer
came back, so the row is counted as 0 and as 1. Parse failures, refusals and truncated answers are not gaps
(they are scored as wrong) but they are named too, so a low value is not a mystery. Each line names its
model, the count out of the model's requests, the recorded reasons, and links to the filtered request list.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count
from django.urls import reverse
from django.utils.text import slugify

from physalign_site.count_words import counted, noun

from .models import EvalRequest, EvalRun

MISSING = EvalRequest.Status.INFRA_MISSING
# the ended statuses that are scored as wrong, not left out: what each is called in a sentence
SCORED_WRONG = {
    EvalRequest.Status.UNPARSEABLE: ("parse failure", "parse failures"),
    EvalRequest.Status.REFUSAL: ("refusal", "refusals"),
    EvalRequest.Status.TRUNCATED: ("truncated answer", "truncated answers"),
}
REASONS_SHOWN = 3  # the most frequent reasons of a line; the rest are counted
REASON_CHARS = 200
NO_REASON = "no reason recorded"
# what a row of the status means when the provider recorded no error text
STATUS_REASON = {
    EvalRequest.Status.UNPARSEABLE: "the output is not an answer the scorer can parse",
    EvalRequest.Status.REFUSAL: "the provider reported a refusal",
    EvalRequest.Status.TRUNCATED: "the output stopped at the token limit",
}


@dataclass(frozen=True)
class GapLine:
    """One model's rows of one status: ``count`` of its ``total`` requests, why, and the list behind them."""

    model: str
    status: str
    count: int
    total: int
    reasons: list[tuple[str, int]]  # (reason, rows), most frequent first, at most REASONS_SHOWN
    other_reasons: int  # rows whose reason is not among those shown
    url: str
    text: str

    @property
    def anchor(self) -> str:
        return gap_anchor(self.model)


@dataclass(frozen=True)
class ResultGaps:
    missing: list[GapLine]  # infra_missing rows per model: what leaves cells bounds-only and bars out
    scored_wrong: list[GapLine]  # parse failures, refusals, truncated answers per model (scored 0)
    bounds_models: list[str]  # models with at least one bounds-only cell in Table 2 or the quadrants
    chart_note: str  # why the main chart lacks bars ("" when every model has one)
    quadrants_note: str  # the same for the quadrant chart

    def __bool__(self) -> bool:
        return bool(self.missing or self.scored_wrong)


def gap_anchor(model: str) -> str:
    """The id of a model's explanation on the results page (a bounds-only cell links to it)."""
    return f"gaps-{slugify(model) or 'model'}"


def _first_line(error: str, status: str) -> str:
    """The reason a row gives: the first line of its recorded error, else what its status means."""
    text = (error or "").strip()
    line = text.splitlines()[0].strip() if text else ""
    if len(line) > REASON_CHARS:
        line = line[: REASON_CHARS - 1] + "…"
    return line or STATUS_REASON.get(EvalRequest.Status(status), NO_REASON)


def _items_url(run: EvalRun, model: str, status: str) -> str:
    return (
        reverse("evaluation:run_items", args=[run.pk]) + "?" + urlencode({"model": model, "status": status})
    )


def _reasons_phrase(reasons: list[tuple[str, int]], other: int, count: int) -> str:
    if len(reasons) == 1 and not other:
        return reasons[0][0]
    shown = "; ".join(f"{reason} ({n:,})" for reason, n in reasons)
    return shown + (f"; {counted(other, 'row')} for other reasons" if other else "")


def _line(run: EvalRun, model: str, status: str, total: int, by_reason: dict[str, int]) -> GapLine:
    ordered = sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ordered[:REASONS_SHOWN]
    count = sum(by_reason.values())
    other = count - sum(n for _, n in shown)
    reasons = _reasons_phrase(shown, other, count)
    if status == MISSING:
        what = f"{count:,} of {counted(total, 'request')} ended infra_missing"
    else:
        singular, plural = SCORED_WRONG[EvalRequest.Status(status)]
        what = f"{count:,} of {counted(total, 'request')} {noun(count, 'was a', 'were')} {noun(count, singular, plural)}"
    return GapLine(
        model=model,
        status=status,
        count=count,
        total=total,
        reasons=shown,
        other_reasons=other,
        url=_items_url(run, model, status),
        text=f"{what}: {reasons}",
    )


def _lines(run: EvalRun) -> tuple[list[GapLine], list[GapLine]]:
    """One grouped query: every model's rows by status and recorded error (a model's total is their sum)."""
    totals: dict[str, int] = defaultdict(int)
    grouped: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    rows = (
        EvalRequest.objects.filter(run_id=run.pk)
        .values_list("model__name", "status", "error")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for model, status, error, n in rows:
        totals[model] += n
        if status == MISSING or status in SCORED_WRONG:
            grouped[(model, status)][_first_line(error, status)] += n
    missing: list[GapLine] = []
    wrong: list[GapLine] = []
    for (model, status), by_reason in sorted(grouped.items()):
        line = _line(run, model, status, totals[model], by_reason)
        (missing if status == MISSING else wrong).append(line)
    wrong.sort(key=lambda g: (g.model, list(SCORED_WRONG).index(EvalRequest.Status(g.status))))
    return missing, wrong


def _ended_short(run: EvalRun) -> bool:
    """Whether any row ended without a usable answer (the run's own counters: no query)."""
    return bool(run.done_infra_missing + run.done_unparseable + run.done_refusal + run.done_truncated)


def _bounds_only(stat: dict[str, Any]) -> bool:
    return stat.get("value") is None and stat.get("lower") is not None


def _no_bar_note(models: list[str], missing: dict[str, GapLine], chart: str) -> str:
    if not models:
        return ""
    why = [
        f"{m} ({counted(missing[m].count, 'infra_missing request')})" if m in missing else m for m in models
    ]
    subject = noun(len(models), "model", "models")
    return (
        f"The {chart} has no bar for {', '.join(why)}: every value of "
        f"{noun(len(models), 'this', 'these')} {subject} is withheld (bounds only) because rows came back "
        "without an answer. Why, with the rows, is under “Missing responses” above."
    )


def result_gaps(run: EvalRun) -> ResultGaps:
    """The gaps of a scored run's results: per model, its missing and scored-wrong rows with their reasons,
    which models have bounds-only cells, and why a chart lacks bars. Empty for a run not scored yet."""
    metrics = run.metrics or {}
    models: dict[str, Any] = metrics.get("models", {})
    if not models:
        return ResultGaps([], [], [], "", "")
    missing, wrong = _lines(run) if _ended_short(run) else ([], [])
    by_model = {g.model: g for g in missing}
    main_keys = ("GAcc", "CAcc", "JAcc", "GAcc_given_C")
    bounds = [
        m
        for m, stats in models.items()
        if any(_bounds_only(stats[k]) for k in (*main_keys, "GAcc_L", "GErr_given_C"))
        or any(_bounds_only(q) for q in stats["quadrants"].values())
    ]
    no_main_bar = [m for m, stats in models.items() if all(stats[k]["value"] is None for k in main_keys)]
    no_quadrant = [
        m for m, stats in models.items() if all(q["value"] is None for q in stats["quadrants"].values())
    ]
    return ResultGaps(
        missing=missing,
        scored_wrong=wrong,
        bounds_models=bounds,
        chart_note=_no_bar_note(no_main_bar, by_model, "chart"),
        quadrants_note=_no_bar_note(no_quadrant, by_model, "quadrant chart"),
    )
