"""One parent's debate (Debate §3): the level's front-end, the pure debate loop (``solving.debate.orchestrator``)
with model callables that record every call, and the turns it leaves (``debate_turns``). Nothing here writes a
``SolveResponse``: ``execute`` writes the returned outcome under its claim guard and scores the answer.

Each prompt opens with a ``[Stage]`` line directly followed by ``[Problem]`` and the problem text, so a scripted
model can key its reply on ``prompts.script_key`` (the demo and the tests do).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from annotation.models import ParentProblem
from kit.model_output import first_object
from llm import LLMRequest, LLMResult, OutputStatus, Usage, generate
from llm.capabilities import Reasoning, capabilities_for, check_reasoning
from llm.errors import ProviderError
from llm.types import ImageInput
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter

from ..debate.canonical import DEFAULT_REL_TOL
from ..debate.orchestrator import DebateConfig, SolveRequest, run_debate
from ..debate.pruner import Memory
from ..models import DebateRun, SolveResponse
from .create import FRONTEND_SETTING_FIELDS, PRUNER_THINKING_BUDGET
from .debate_turns import debate_outcome
from .prompts import (
    EXTRACTOR_SYSTEM,
    PRUNER_SYSTEM,
    SELECTOR_SYSTEM,
    SOLVER_SYSTEM,
    extractor_prompt,
    pruner_prompt,
    public_problem,
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


def _option_letters(parent: ParentProblem) -> str | None:
    letters = "".join(
        str(o.get("id", "")).strip().upper() for o in (parent.options or []) if isinstance(o, dict)
    )
    return letters if letters.isalpha() and letters else None


def _plain_statement(text: str) -> str:
    """The problem as printed on a Level-4 page: statement, question and options without section headers
    or the image list."""
    text = re.sub(r"\[Images\]\n.*?(?=\n\n\[|\Z)", "", text, flags=re.S)
    return re.sub(r"^\[(?:Problem|Question|Options)\]\n", "", text, flags=re.M).strip()


def _debate_config(debate: DebateRun, parent: ParentProblem) -> DebateConfig:
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


@dataclass(frozen=True)
class _Problem:
    """The problem as the solvers read it after the front-end: text, images and the extracted SVG."""

    text: str
    images: tuple[ImageInput, ...]
    svg: str | None


@dataclass
class _Stages:
    """The model callables ``run_debate`` takes (solvers, pruner, selector, extractor), each recording its call;
    ``finals`` keeps each solver's last result (the chosen solution's text and status)."""

    debate: DebateRun
    configs: dict[str, ModelConfig]
    problem: _Problem
    recorder: _Recorder
    finals: dict[str, LLMResult] = field(default_factory=dict)

    def _request(self, system: str, prompt: str) -> LLMRequest:
        return LLMRequest(system=system, user=prompt, images=self.problem.images)

    def solvers(self) -> dict[str, Callable[[SolveRequest], str]]:
        return {name: self._solver(name) for name in self.debate.solver_names}

    def _solver(self, name: str) -> Callable[[SolveRequest], str]:
        model = self.configs[name]

        def solve(request: SolveRequest) -> str:
            self.recorder.solve_round = request.round
            prompt = solver_prompt(
                self.problem.text, round_number=request.round, peers=request.peers, svg=self.problem.svg
            )
            result = self.recorder.call(
                config=model,
                request=self._request(SOLVER_SYSTEM, prompt),
                stage="solve",
                agent=name,
                round_number=request.round,
            )
            self.finals[name] = result
            return result.text or ""

        return solve

    def prune(self, memory: Memory) -> str:
        model = self.debate.pruner
        assert model is not None  # prune is passed to run_debate only with a pruner
        result = self.recorder.call(
            config=model,
            request=self._request(
                PRUNER_SYSTEM, pruner_prompt(self.problem.text, memory, svg=self.problem.svg)
            ),
            stage="prune",
            agent=memory.solver,
            round_number=self.recorder.solve_round + 1,
            reasoning=_pruner_reasoning(model),
        )
        return _json_field(result.text, "label")

    def select(self, memories: tuple[Memory, ...]) -> str | None:
        assert self.debate.selector is not None  # select is passed to run_debate only with a selector
        prompt = selector_prompt(self.problem.text, memories, svg=self.problem.svg)
        result = self.recorder.call(
            config=self.debate.selector,
            request=self._request(SELECTOR_SYSTEM, prompt),
            stage="select",
            agent="selector",
            round_number=self.recorder.solve_round,
            required=False,
        )
        if result.status == OutputStatus.FAILED:
            return None  # an unavailable selector abstains: the default solver decides (Table 2)
        choice = _json_field(result.text, "choice")
        return None if re.search(r"abstain|none", choice, re.I) else choice

    def normalize(self, reasoning: str) -> str:
        assert self.debate.extractor is not None  # normalize is passed to run_debate only with an extractor
        result = self.recorder.call(
            config=self.debate.extractor,
            request=LLMRequest(system=EXTRACTOR_SYSTEM, user=extractor_prompt(reasoning)),
            stage="extract",
            agent="extractor",
            round_number=self.recorder.solve_round,
            required=False,
        )
        return result.text or ""


def _parent_options(parent: ParentProblem) -> tuple[tuple[str, str], ...]:
    return tuple(
        (str(o.get("id", "")), str(o.get("text", ""))) for o in (parent.options or []) if isinstance(o, dict)
    )


def debate_response_execute(*, row: SolveResponse) -> dict[str, Any]:
    """Solve one parent with the run's debate settings. Returns the response fields and the transcript turns.

    Keys: status (completed | refusal | truncated | infra_missing), raw_output (the chosen solution text or
    None), final_answer (the rendered final answer), calls, input_tokens, output_tokens, cost_usd, latency_ms,
    error, turns (``DebateTurn`` field values in ``seq`` order). A failed required call (a solver, the pruner)
    gives ``infra_missing`` with the error and the calls made so far: never a fabricated answer.
    """
    debate = DebateRun.objects.select_related("pruner", "selector", "extractor", "frontend").get(
        solve_run=row.run
    )
    parent = row.parent
    recorder = _Recorder()
    configs = {c.name: c for c in ModelConfig.objects.filter(name__in=debate.solver_names)}
    missing = [n for n in debate.solver_names if n not in configs]
    if missing:
        return debate_outcome(
            recorder.calls,
            [],
            None,
            status="infra_missing",
            error=f"Solver configurations missing: {missing}",
        )
    text, images = public_problem(parent)
    try:
        problem_text, problem_images, svg, front_steps = _frontend(
            debate, text, images, _parent_options(parent), recorder
        )
    except Exception as exc:  # noqa: BLE001 — a front-end crash must not lose the row; recorded as missing
        return debate_outcome(
            recorder.calls,
            [],
            None,
            status="infra_missing",
            error=f"front-end failed: {exc.__class__.__name__}: {exc}",
        )
    stages = _Stages(debate, configs, _Problem(problem_text, problem_images, svg), recorder)
    try:
        transcript = run_debate(
            stages.solvers(),
            pruner=stages.prune if debate.pruner else None,
            selector=stages.select if debate.selector else None,
            normalizer=stages.normalize if debate.extractor else None,
            config=_debate_config(debate, parent),
        )
    except _InfraFailure as exc:
        return debate_outcome(recorder.calls, front_steps, None, status="infra_missing", error=str(exc))
    chosen = stages.finals.get(transcript.final_solver or "")
    status = "completed"
    if not transcript.final_answer and chosen is not None and chosen.status in ("refusal", "truncated"):
        status = chosen.status
    return debate_outcome(
        recorder.calls,
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
