"""One parent's debate: the level's front-end, the pure debate loop with model callables, and the turns it leaves."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kit.model_output import first_object
from llm import LLMRequest, LLMResult, OutputStatus, Usage, generate
from llm.capabilities import Reasoning, capabilities_for, check_reasoning
from llm.errors import ProviderError
from llm.types import ImageInput
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter

from ..debate.canonical import DEFAULT_REL_TOL, canonicalize, render
from ..debate.orchestrator import DebateConfig, SolveRequest, Transcript, run_debate
from ..debate.pruner import Memory
from ..models import DebateRun, SolveResponse
from ..runs import build_solve_request
from .create import FRONTEND_SETTING_FIELDS, PRUNER_THINKING_BUDGET
from .prompts import (
    EXTRACTOR_SYSTEM,
    PRUNER_SYSTEM,
    SELECTOR_SYSTEM,
    SOLVER_SYSTEM,
    extractor_prompt,
    pruner_prompt,
    selector_prompt,
    solver_prompt,
)


class _InfraFailure(Exception):
    """A required model call returned nothing after the provider layer's retries."""


@dataclass
class _Recorder:
    """Every model call and decision of one parent's debate, in the order they happen."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    solve_round: int = 0

    def call(
        self,
        *,
        config: ModelConfig,
        request: LLMRequest,
        stage: str,
        agent: str,
        round_number: int,
        reasoning: dict[str, Any] | None = None,
        required: bool = True,
    ) -> LLMResult:
        provider = provider_config_for(config)
        if reasoning is not None:
            provider = dataclasses.replace(provider, reasoning=reasoning)
        try:
            result = generate(request, provider, limiter=shared_limiter())
        except ProviderError as exc:  # configuration errors surface as a failed call, never an answer
            result = LLMResult(
                text="",
                finish_reason="error",
                status=OutputStatus.FAILED,
                usage=_zero_usage(),
                latency_ms=0,
                cost_usd=Decimal(0),
                raw={},
                attempts=[],
                error=str(exc),
            )
        self.calls.append(
            {
                "round": round_number,
                "stage": stage,
                "agent": agent,
                "model": config,
                "request": request.record(),
                "raw_output": result.text or "",
                "parsed": {
                    "finish_reason": result.finish_reason,
                    "attempts": len(result.attempts),
                    **({"error": result.error} if result.error else {}),
                },
                "status": result.status,
                "input_tokens": result.usage.input_tokens,
                "output_tokens": result.usage.output_tokens,
                "cost_usd": Decimal(result.cost_usd or 0),
                "latency_ms": int(result.latency_ms or 0),
            }
        )
        if required and result.status == OutputStatus.FAILED:
            raise _InfraFailure(f"{stage} call to {config.name} failed: {result.error or 'no response'}")
        return result


def _zero_usage() -> Usage:
    return Usage()


def _pruner_reasoning(config: ModelConfig) -> dict[str, Any]:
    """A reduced thinking budget in the model family's own terms; the model's setting if it has none."""
    caps = capabilities_for(config.provider, config.model)
    reduced: dict[str, dict[str, Any]] = {
        Reasoning.OPENAI_EFFORT: {"effort": "low"},
        Reasoning.ANTHROPIC_ADAPTIVE: {"effort": "low"},
        Reasoning.ANTHROPIC_BUDGET: {"budget_tokens": PRUNER_THINKING_BUDGET},
        Reasoning.GEMINI_BUDGET: {"budget_tokens": PRUNER_THINKING_BUDGET},
        Reasoning.GEMINI_LEVEL: {"budget_tokens": PRUNER_THINKING_BUDGET},
    }
    wanted = reduced.get(caps.reasoning)
    if not wanted:
        return dict(config.reasoning or {})
    try:
        return check_reasoning(caps, wanted)
    except ProviderError:
        return dict(config.reasoning or {})


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def public_problem(parent: Any) -> tuple[str, tuple[ImageInput, ...]]:
    """The original problem as a solver may see it (text and images), without any answer format section.

    Reuses the single-solver request builder, so the debate and single solvers read the same problem.
    """
    request = build_solve_request(parent)
    text = request.user
    marker = text.find("[Output format]")
    if marker >= 0:
        text = text[:marker]
    return text.strip(), tuple(request.images)


def _option_letters(parent: Any) -> str | None:
    letters = "".join(
        str(o.get("id", "")).strip().upper() for o in (parent.options or []) if isinstance(o, dict)
    )
    return letters if letters.isalpha() and letters else None


def _plain_statement(text: str) -> str:
    """The problem as printed on a Level-4 page: statement, question and options without section headers
    or the image list."""
    text = re.sub(r"\[Images\]\n.*?(?=\n\n\[|\Z)", "", text, flags=re.S)
    return re.sub(r"^\[(?:Problem|Question|Options)\]\n", "", text, flags=re.M).strip()


def _debate_config(debate: DebateRun, parent: Any) -> DebateConfig:
    s = debate.settings or {}
    return DebateConfig(
        max_resolve_rounds=int(s.get("max_resolve_rounds", 2)),
        strict_pruning=bool(s.get("strict_pruning", True)),
        pruning=bool(s.get("pruning", True)),
        value_voting=bool(s.get("value_voting", True)),
        rel_tol=float(s.get("rel_tol", DEFAULT_REL_TOL)),
        default_solver=s.get("default_solver") or None,
        option_letters=_option_letters(parent),
    )


def _frontend(
    debate: DebateRun, text: str, images: tuple[ImageInput, ...], options: tuple, recorder: _Recorder
):
    """Run the level's front-end (Debate Table 1). Returns (problem text, images, svg, step turns)."""
    from ..debate import frontend as fe  # deferred: it loads scipy and sympy, which only a debate needs

    s = debate.settings or {}
    switches = fe.FrontendSwitches(**{k: s[k] for k in FRONTEND_SETTING_FIELDS if k in s})
    level = debate.level
    if level == 1:  # text-only: no front-end, no images
        return text, (), None, []
    if level == 5:  # photographs: a single solver reads the problem and its images as they are (§3.3.3)
        return text, images, None, []
    if level == 4 and images:  # our problems keep text and diagram apart: build the image-only input first
        composed = fe.compose_image_only(_plain_statement(text), images[0])
        problem = fe.ProblemInput(text="", images=(composed,), options=options)
    else:
        problem = fe.ProblemInput(text=text, images=images, options=options)
    call = None
    if debate.frontend is not None:
        config = debate.frontend

        def call(stage: str, request: LLMRequest) -> LLMResult:
            return recorder.call(
                config=config, request=request, stage=stage, agent="front-end", round_number=0, required=False
            )

    result = fe.run_frontend(problem, level=level, call=call, switches=switches)
    steps = [
        {
            "stage": "frontend",
            "agent": step.stage,
            "parsed": _json_safe({"step": step.stage, "detail": step.detail}),
        }
        for step in result.steps
    ]
    return result.problem_text, tuple(result.images), result.svg, steps


def debate_response_execute(*, row: SolveResponse) -> dict[str, Any]:
    """Solve one parent with the run's debate settings. Returns the response fields and the transcript turns.

    Keys: status (completed | refusal | truncated | infra_missing), raw_output (the chosen solution text or
    None), final_answer (the rendered final answer), calls, input_tokens, output_tokens, cost_usd, latency_ms,
    error, turns (``DebateTurn`` field values in ``seq`` order). A failed required call (a solver, the pruner)
    gives ``infra_missing`` with the error and the calls made so far: never a fabricated answer.
    """
    run = row.run
    debate = DebateRun.objects.select_related("pruner", "selector", "extractor", "frontend").get(
        solve_run=run
    )
    parent = row.parent
    recorder = _Recorder()
    configs = {c.name: c for c in ModelConfig.objects.filter(name__in=debate.solver_names)}
    missing = [n for n in debate.solver_names if n not in configs]
    if missing:
        return _result(
            recorder, [], None, status="infra_missing", error=f"Solver configurations missing: {missing}"
        )
    text, images = public_problem(parent)
    options = tuple(
        (str(o.get("id", "")), str(o.get("text", ""))) for o in (parent.options or []) if isinstance(o, dict)
    )
    front_steps: list[dict[str, Any]] = []
    try:
        problem_text, problem_images, svg, front_steps = _frontend(debate, text, images, options, recorder)
    except Exception as exc:  # noqa: BLE001 — a front-end crash must not lose the row; recorded as missing
        return _result(
            recorder,
            front_steps,
            None,
            status="infra_missing",
            error=f"front-end failed: {exc.__class__.__name__}: {exc}",
        )
    config = _debate_config(debate, parent)
    finals: dict[str, LLMResult] = {}

    def solver_for(name: str):
        model = configs[name]

        def solve(request: SolveRequest) -> str:
            recorder.solve_round = request.round
            prompt = solver_prompt(problem_text, round_number=request.round, peers=request.peers, svg=svg)
            result = recorder.call(
                config=model,
                request=LLMRequest(system=SOLVER_SYSTEM, user=prompt, images=problem_images),
                stage="solve",
                agent=name,
                round_number=request.round,
            )
            finals[name] = result
            return result.text or ""

        return solve

    def prune(memory: Memory) -> str:
        model = debate.pruner
        assert model is not None  # prune is passed to run_debate only with a pruner
        prompt = pruner_prompt(problem_text, memory, svg=svg)
        result = recorder.call(
            config=model,
            request=LLMRequest(system=PRUNER_SYSTEM, user=prompt, images=problem_images),
            stage="prune",
            agent=memory.solver,
            round_number=recorder.solve_round + 1,
            reasoning=_pruner_reasoning(model),
        )
        return _json_field(result.text, "label")

    def select(memories: tuple[Memory, ...]) -> str | None:
        assert debate.selector is not None  # select is passed to run_debate only with a selector
        prompt = selector_prompt(problem_text, memories, svg=svg)
        result = recorder.call(
            config=debate.selector,
            request=LLMRequest(system=SELECTOR_SYSTEM, user=prompt, images=problem_images),
            stage="select",
            agent="selector",
            round_number=recorder.solve_round,
            required=False,
        )
        if result.status == OutputStatus.FAILED:
            return None  # an unavailable selector abstains: the default solver decides (Table 2)
        choice = _json_field(result.text, "choice")
        return None if re.search(r"abstain|none", choice, re.I) else choice

    def normalize(reasoning: str) -> str:
        assert debate.extractor is not None  # normalize is passed to run_debate only with an extractor
        result = recorder.call(
            config=debate.extractor,
            request=LLMRequest(system=EXTRACTOR_SYSTEM, user=extractor_prompt(reasoning)),
            stage="extract",
            agent="extractor",
            round_number=recorder.solve_round,
            required=False,
        )
        return result.text or ""

    solvers = {name: solver_for(name) for name in debate.solver_names}
    try:
        transcript = run_debate(
            solvers,
            pruner=prune if debate.pruner else None,
            selector=select if debate.selector else None,
            normalizer=normalize if debate.extractor else None,
            config=config,
        )
    except _InfraFailure as exc:
        return _result(recorder, front_steps, None, status="infra_missing", error=str(exc))
    chosen = finals.get(transcript.final_solver or "")
    status = "completed"
    if not transcript.final_answer and chosen is not None and chosen.status in ("refusal", "truncated"):
        status = chosen.status
    return _result(
        recorder,
        front_steps,
        transcript,
        status=status,
        error="",
        raw_output=chosen.text if chosen is not None else None,
    )


def _json_field(text: str, key: str) -> str:
    """The ``key`` of a JSON reply, or the text itself (the pure parsers read free text too)."""
    value = first_object(text)
    if value is not None and key in value:
        return str(value[key])
    return text or ""


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


def _result(
    recorder: _Recorder,
    front_steps: list[dict[str, Any]],
    transcript: Transcript | None,
    *,
    status: str,
    error: str,
    raw_output: str | None = None,
) -> dict[str, Any]:
    """Assemble the turns (calls in order, decisions as zero-cost turns) and the response totals."""
    keyed: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for index, call in enumerate(recorder.calls):
        stage = call["stage"]
        order = 0 if call["round"] == 0 else _STAGE_ORDER.get(stage, 3)
        keyed.append(((call["round"], order, index), call))
    base = len(recorder.calls)
    for index, step in enumerate(front_steps):
        keyed.append(((0, 1, base + index), _decision(0, "frontend", step["agent"], step["parsed"])))
    if transcript is not None:
        _annotate_solve_turns(recorder, transcript)
        for decision in _decisions(transcript):
            keyed.append(
                ((decision["round"], _STAGE_ORDER[decision["stage"]], 10_000 + len(keyed)), decision)
            )
    keyed.sort(key=lambda item: item[0])
    turns = []
    for seq, (_, turn) in enumerate(keyed, start=1):
        turns.append({"seq": seq, **turn})
    calls = len(recorder.calls)
    input_tokens = sum(c["input_tokens"] for c in recorder.calls)
    output_tokens = sum(c["output_tokens"] for c in recorder.calls)
    cost = sum((c["cost_usd"] for c in recorder.calls), Decimal(0))
    latency = sum(c["latency_ms"] for c in recorder.calls)
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


def _annotate_solve_turns(recorder: _Recorder, transcript: Transcript) -> None:
    """Attach the normalized answer and its canonical form to each solver call."""
    solve_calls = [c for c in recorder.calls if c["stage"] == "solve"]
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
    prune_calls = [c for c in recorder.calls if c["stage"] == "prune"]
    for call, verdict in zip(prune_calls, transcript.prunes, strict=False):
        call["parsed"] = {**call["parsed"], "label": str(verdict.label), "kept": verdict.kept}
    select_calls = [c for c in recorder.calls if c["stage"] == "select"]
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
