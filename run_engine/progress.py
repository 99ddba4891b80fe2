"""What a run's progress shows, for every run kind: rows done of the fixed total, tokens, dollars, rate and ETA."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone


@dataclass(frozen=True)
class RunTotals:
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


def rate_and_eta(run: Any, done: int) -> tuple[float | None, float | None]:
    """Rows per second since the run started (until it finished), and the seconds the rest would take."""
    if not (run.started_at and done):
        return None, None
    end = run.finished_at or timezone.now()
    rate = done / max((end - run.started_at).total_seconds(), 1e-3)
    return rate, ((run.total - done) / rate if rate else None)
