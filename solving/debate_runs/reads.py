"""Debate results: run statistics (Debate Tables 3–5), comparisons, transcripts and their API payloads."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..debate.canonical import DEFAULT_REL_TOL
from ..models import DebateRun, DebateTurn, SolveResponse, SolveRun
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
    from django.db.models import Count

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


def debate_run_list() -> Any:
    return (
        SolveRun.objects.filter(kind=SolveRun.Kind.DEBATE)
        .select_related("debate", "release")
        .order_by("-created_at")
    )


def comparable_runs(run_ids: list[int] | None = None) -> tuple[list[RunStats], bool]:
    """Rows for the comparison page and whether they all cover the same parents.

    Without ids: the newest debate run and every solve run over the same parent set (newest first, ≤ 12).
    """
    if run_ids:
        runs = list(SolveRun.objects.filter(pk__in=run_ids).select_related("model", "debate").order_by("pk"))
    else:
        latest = debate_run_list().first()
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


def transcript_payload(response: SolveResponse, *, include_reference: bool) -> dict[str, Any]:
    """The transcript as JSON (the API). ``include_reference`` adds the private reference answer (admins)."""
    data: dict[str, Any] = {
        "response": response.pk,
        "run": response.run_id,
        "parent": response.parent.problem_id,
        "status": response.status,
        "final_answer": response.final_answer,
        "correct": response.correct,
        "credit": response.credit,
        "calls": response.calls,
        "input_tokens": response.input_tokens,
        "output_tokens": response.output_tokens,
        "cost_usd": str(response.cost_usd),
        "turns": [
            {
                "seq": t.seq,
                "round": t.round,
                "stage": t.stage,
                "agent": t.agent,
                "model": t.model.name if t.model else None,
                "raw_output": t.raw_output,
                "parsed": t.parsed,
                "status": t.status,
                "input_tokens": t.input_tokens,
                "output_tokens": t.output_tokens,
                "cost_usd": str(t.cost_usd),
                "latency_ms": t.latency_ms,
            }
            for t in response.turns.select_related("model").order_by("seq")
        ],
    }
    if include_reference:
        data["reference_answer"] = response.parent.answer
    return data


def run_stats_payload(stats: RunStats) -> dict[str, Any]:
    run = stats.run
    debate = getattr(run, "debate", None) if run.kind == SolveRun.Kind.DEBATE else None
    return {
        "id": run.pk,
        "name": run.name,
        "kind": run.kind,
        "status": run.status,
        "label": stats.label,
        "level": stats.level,
        "settings": debate.settings if debate else {},
        "settings_label": stats.settings_label,
        "solvers": debate.solver_names if debate else [run.model.name if run.model else None],
        "pruner": debate.pruner.name if debate and debate.pruner else None,
        "selector": debate.selector.name if debate and debate.selector else None,
        "total": stats.total,
        "done": stats.done,
        "by_status": stats.by_status,
        "solve_acc": stats.solve_acc.as_dict(),
        "binary_acc": stats.binary_acc.as_dict(),
        "calls": stats.calls,
        "avg_calls": stats.avg_calls,
        "input_tokens": stats.input_tokens,
        "output_tokens": stats.output_tokens,
        "cost_usd": str(stats.cost_usd),
        "cost_per_problem": str(stats.cost_per_problem or 0),
        "early_stopped": stats.early_stopped,
        "early_share": stats.early_share,
        "warnings": (run.manifest or {}).get("debate_warnings", []),
    }
