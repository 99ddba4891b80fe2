"""A solving run's summary: SolveAcc with its 95% parent-cluster CI, or its bounds while grading is pending
(App. B.4, D.3)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum

from run_engine.progress import RunTotals, rate_and_eta

from .models import SolveResponse, SolveRun
from .scoring import (
    SolveAccStat,
    solve_acc,
)


@dataclass(frozen=True)
class SolveRunSummary(RunTotals):
    by_grading: dict[str, int]
    solve_acc: SolveAccStat  # credit s_i, equal-parent mean
    accuracy: SolveAccStat  # binary final-answer correctness
    calls: int

    @property
    def awaiting_grading(self) -> int:
        return self.by_grading.get(SolveResponse.Grading.PENDING, 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "done": self.done,
            "by_status": self.by_status,
            "by_grading": self.by_grading,
            "solve_acc": self.solve_acc.as_dict(),
            "accuracy": self.accuracy.as_dict(),
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": str(self.cost_usd),
            "rate_per_s": self.rate_per_s,
            "eta_s": self.eta_s,
        }


def solve_run_summary(run: SolveRun) -> SolveRunSummary:
    """Progress, SolveAcc (with App. B.3 bounds), binary accuracy, calls, tokens and cost of a run."""
    rows = list(run.responses.values_list("parent__problem_id", "credit", "correct"))
    by_status = dict(run.responses.values_list("status").annotate(n=Count("pk")).order_by())
    by_grading = dict(run.responses.values_list("grading").annotate(n=Count("pk")).order_by())
    done = sum(by_status.get(s, 0) for s in SolveResponse.TERMINAL)
    agg = run.responses.aggregate(
        c=Sum("calls"), i=Sum("input_tokens"), o=Sum("output_tokens"), d=Sum("cost_usd")
    )
    rate, eta = rate_and_eta(run, done)
    return SolveRunSummary(
        total=run.total,
        done=done,
        by_status=by_status,
        by_grading=by_grading,
        solve_acc=solve_acc({p: c for p, c, _ in rows}, seed=run.seed),
        accuracy=solve_acc({p: (None if ok is None else float(ok)) for p, _, ok in rows}, seed=run.seed),
        calls=agg["c"] or 0,
        input_tokens=agg["i"] or 0,
        output_tokens=agg["o"] or 0,
        cost_usd=agg["d"] or Decimal(0),
        rate_per_s=rate,
        eta_s=eta,
    )
