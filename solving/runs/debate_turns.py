"""The transcript a debate leaves: every model call and every decision (votes, masks, the selection) as
``DebateTurn`` field values in ``seq`` order, and the response totals they add up to."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..debate.canonical import canonicalize, render
from ..debate.orchestrator import Transcript

_STAGE_ORDER = {
    "frontend": 0,
    "prune": 1,
    "mask": 2,
    "solve": 3,
    "extract": 3,
    "vote": 4,
    "select": 5,
    "selection": 6,
}


def debate_outcome(
    records: list[dict[str, Any]],
    front_steps: list[dict[str, Any]],
    transcript: Transcript | None,
    *,
    status: str,
    error: str,
    raw_output: str | None = None,
) -> dict[str, Any]:
    """Assemble the turns (``records``: the model calls in order; decisions as zero-cost turns) and the
    response totals: the ``debate_response_execute`` result."""
    keyed: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for index, call in enumerate(records):
        stage = call["stage"]
        order = 0 if call["round"] == 0 else _STAGE_ORDER.get(stage, 3)
        keyed.append(((call["round"], order, index), call))
    base = len(records)
    for index, step in enumerate(front_steps):
        keyed.append(((0, 1, base + index), _decision(0, "frontend", step["agent"], step["parsed"])))
    if transcript is not None:
        _annotate_solve_turns(records, transcript)
        for decision in _decisions(transcript):
            keyed.append(
                ((decision["round"], _STAGE_ORDER[decision["stage"]], 10_000 + len(keyed)), decision)
            )
    keyed.sort(key=lambda item: item[0])
    turns = []
    for seq, (_, turn) in enumerate(keyed, start=1):
        turns.append({"seq": seq, **turn})
    calls = len(records)
    input_tokens = sum(c["input_tokens"] for c in records)
    output_tokens = sum(c["output_tokens"] for c in records)
    cost = sum((c["cost_usd"] for c in records), Decimal(0))
    latency = sum(c["latency_ms"] for c in records)
    final = ""
    if transcript is not None and status != "infra_missing":
        final = transcript.final_rendered
    return {
        "status": status,
        "raw_output": raw_output if status != "infra_missing" else None,
        "final_answer": final,
        "calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost,
        "latency_ms": latency,
        "error": error,
        "turns": turns,
    }


def _decision(round_number: int, stage: str, agent: str, parsed: dict[str, Any]) -> dict[str, Any]:
    return {
        "round": round_number,
        "stage": stage,
        "agent": agent,
        "model": None,
        "request": {},
        "raw_output": "",
        "parsed": parsed,
        "status": "recorded",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": Decimal(0),
        "latency_ms": 0,
    }


def _annotate_solve_turns(calls: list[dict[str, Any]], transcript: Transcript) -> None:
    """Attach the normalized answer and its canonical form to each solver call."""
    solve_calls = [c for c in calls if c["stage"] == "solve"]
    for call, turn in zip(solve_calls, transcript.turns, strict=False):
        canonical = canonicalize(turn.answer)
        call["parsed"] = {
            **call["parsed"],
            "answer": turn.answer,
            "answer_source": turn.answer_source,
            "peers": list(turn.peers),
            "canonical_kind": canonical.kind,
            "canonical": render(canonical) if turn.answer else "",
        }
    prune_calls = [c for c in calls if c["stage"] == "prune"]
    for call, verdict in zip(prune_calls, transcript.prunes, strict=False):
        call["parsed"] = {**call["parsed"], "label": str(verdict.label), "kept": verdict.kept}
    select_calls = [c for c in calls if c["stage"] == "select"]
    if select_calls and transcript.selection is not None:
        select_calls[0]["parsed"] = {**select_calls[0]["parsed"], "chosen": transcript.selection.chosen}


def _decisions(transcript: Transcript) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names = transcript.solvers
    for round_vote in transcript.votes:
        v = round_vote.vote
        groups = [[names[i] for i in cluster] for cluster in v.clusters]
        out.append(
            _decision(
                round_vote.round,
                "vote",
                "canonicalizer",
                {
                    "answers": dict(zip(names, round_vote.answers, strict=True)),
                    "groups": groups,
                    "has_majority": v.has_majority,
                    "winner": names[v.winner] if v.winner is not None else None,
                    "rendered": v.rendered or "",
                },
            )
        )
    by_round: dict[int, list] = {}
    for verdict in transcript.prunes:
        by_round.setdefault(verdict.round, []).append(verdict)
    for round_number, verdicts in sorted(by_round.items()):
        kept = [v.solver for v in verdicts if v.kept]
        out.append(
            _decision(
                round_number,
                "mask",
                "pruner",
                {
                    "labels": {v.solver: str(v.label) for v in verdicts},
                    "kept": kept,
                    "masked": [v.solver for v in verdicts if not v.kept],
                    "all_masked": not kept,
                },
            )
        )
    if transcript.decided_by != "consensus" or transcript.selection is not None:
        out.append(
            _decision(
                transcript.rounds,
                "selection",
                "orchestrator",
                {
                    "decided_by": transcript.decided_by,
                    "final_solver": transcript.final_solver,
                    "chosen": transcript.selection.chosen if transcript.selection else None,
                    "final_answer": transcript.final_answer,
                    "rendered": transcript.final_rendered,
                },
            )
        )
    else:
        out.append(
            _decision(
                transcript.rounds,
                "selection",
                "orchestrator",
                {
                    "decided_by": "consensus",
                    "final_solver": transcript.final_solver,
                    "final_answer": transcript.final_answer,
                    "rendered": transcript.final_rendered,
                },
            )
        )
    return out
