"""Reading a solve run's results, both kinds side by side: run statistics (accuracy and cost, with a debate's
early stops: Debate Tables 3–5), the comparison of runs over the same parents, and a debate's transcript."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count

from ..debate.canonical import DEFAULT_REL_TOL
from ..models import DebateRun, DebateTurn, SolveResponse, SolveRun
from ..selectors import solve_run_list
from ..summary import solve_run_summary


@dataclass(frozen=True)
class RunStats:
    """One row of the comparison (Debate Tables 3–5): accuracy and cost of a solve run."""

    run: SolveRun
    label: str
    level: int | None
    settings_label: str
    total: int
    done: int
    by_status: dict[str, int]
    solve_acc: Any  # solving.scoring.SolveAccStat (value, lower, upper, parents, missing)
    binary_acc: Any
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    early_stopped: int | None  # debate responses settled by consensus in round 1; None for single runs
    rounds_used: dict[int, int]
    max_calls: int | None  # debate calls had no problem stopped early (front-end and extractor calls aside)

    @property
    def calls_saved(self) -> int | None:
        return self.max_calls - self.calls if self.max_calls is not None and self.done == self.total else None

    @property
    def avg_calls(self) -> float | None:
        return self.calls / self.done if self.done else None

    @property
    def cost_per_problem(self) -> Decimal | None:
        return (self.cost_usd / self.done).quantize(Decimal("0.00000001")) if self.done else None

    @property
    def early_share(self) -> float | None:
        return self.early_stopped / self.done if self.early_stopped is not None and self.done else None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def debate(self) -> DebateRun | None:
        return getattr(self.run, "debate", None) if self.run.kind == SolveRun.Kind.DEBATE else None

    @property
    def settings(self) -> dict[str, Any]:
        """The debate's ablation switches as stored ({} for a single solver)."""
        return self.debate.settings if self.debate else {}

    @property
    def solvers(self) -> list[str | None]:
        if self.debate:
            return list(self.debate.solver_names)
        return [self.run.model.name if self.run.model else None]

    @property
    def pruner_name(self) -> str | None:
        return self.debate.pruner.name if self.debate and self.debate.pruner else None

    @property
    def selector_name(self) -> str | None:
        return self.debate.selector.name if self.debate and self.debate.selector else None

    @property
    def warnings(self) -> list[str]:
        return list((self.run.manifest or {}).get("debate_warnings", []))


def settings_label(debate: DebateRun | None) -> str:
    """A short human description of a debate's ablation switches (defaults omitted)."""
    if debate is None:
        return "single pass"
    s = debate.settings or {}
    parts = []
    if not s.get("pruning", True):
        parts.append("no pruning")
    elif not s.get("strict_pruning", True):
        parts.append("lenient pruning")
    if not s.get("value_voting", True):
        parts.append("string voting")
    if s.get("max_resolve_rounds", 2) != 2:
        parts.append(f"{s['max_resolve_rounds']} re-solve rounds")
    if "rel_tol" in s and s["rel_tol"] != DEFAULT_REL_TOL:
        parts.append(f"tol {s['rel_tol']:g}")
    off = [k for k in ("cropper", "sharpen", "visual_extractor", "reconstructor") if s.get(k) is False]
    if debate.level in (2, 3, 4) and off:
        parts.append("front-end off: " + ", ".join(off))
    if s.get("ocr") == "tesseract":
        parts.append("tesseract OCR")
    return "; ".join(parts) or "full pipeline"


def run_stats(run: SolveRun) -> RunStats:
    """Accuracy (SolveAcc = mean credit, binary accuracy), calls, tokens, dollars and early stops of a run."""
    summary = solve_run_summary(run)
    debate = getattr(run, "debate", None) if run.kind == SolveRun.Kind.DEBATE else None
    early = None
    rounds_used: dict[int, int] = {}
    if debate is not None:
        decisions = (
            DebateTurn.objects.filter(response__run=run, stage="selection")
            .values("round")
            .annotate(n=Count("id"))
            .order_by()
        )
        rounds_used = {d["round"]: d["n"] for d in decisions}
        early = DebateTurn.objects.filter(
            response__run=run, stage="selection", round=1, parsed__decided_by="consensus"
        ).count()
    if debate is not None:
        label = " + ".join(debate.solver_names) + f" · L{debate.level}"
    else:
        label = run.model.name if run.model else "—"
    return RunStats(
        run=run,
        label=label,
        level=debate.level if debate else None,
        settings_label=settings_label(debate),
        total=summary.total,
        done=summary.done,
        by_status=summary.by_status,
        solve_acc=summary.solve_acc,
        binary_acc=summary.accuracy,
        calls=summary.calls,
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        cost_usd=Decimal(summary.cost_usd),
        early_stopped=early,
        rounds_used=rounds_used,
        max_calls=_max_calls(debate, summary.total) if debate else None,
    )


def _max_calls(debate: DebateRun, parents: int) -> int:
    """Solver, pruner and selector calls of a debate that never stops early (the early-stop saving's base)."""
    if debate.level == 5:
        return parents
    s = debate.settings or {}
    solvers, rounds = len(debate.solver_names), int(s.get("max_resolve_rounds", 2))
    pruning = bool(s.get("pruning", True)) and debate.pruner_id is not None
    per_problem = (
        solvers * (1 + rounds) + (solvers * rounds if pruning else 0) + (1 if debate.selector_id else 0)
    )
    return parents * per_problem


def comparable_runs(run_ids: list[int] | None = None) -> tuple[list[RunStats], bool]:
    """Rows for the comparison page and whether they all cover the same parents.

    Without ids: the newest debate run and every solve run over the same parent set (newest first, ≤ 12).
    """
    if run_ids:
        runs = list(SolveRun.objects.filter(pk__in=run_ids).select_related("model", "debate").order_by("pk"))
    else:
        latest = solve_run_list(kind=SolveRun.Kind.DEBATE).first()
        if latest is None:
            return [], True
        wanted = sorted(latest.parent_ids)
        runs = [
            r
            for r in SolveRun.objects.select_related("model", "debate").order_by("-created_at")[:200]
            if sorted(r.parent_ids) == wanted
        ][:12]
        runs.sort(key=lambda r: (r.kind != SolveRun.Kind.SINGLE, r.pk))
    same = len({tuple(sorted(r.parent_ids)) for r in runs}) <= 1
    return [run_stats(r) for r in runs], same


@dataclass(frozen=True)
class TranscriptRound:
    number: int
    turns: list[DebateTurn]


def transcript_rounds(response: SolveResponse) -> list[TranscriptRound]:
    """The response's turns grouped by round (0 = front-end), in ``seq`` order."""
    rounds: dict[int, list[DebateTurn]] = {}
    for turn in response.turns.select_related("model").order_by("seq"):
        rounds.setdefault(turn.round, []).append(turn)
    return [TranscriptRound(number, turns) for number, turns in sorted(rounds.items())]
