"""Debate runs (Debate §3, Tables 1–5): create, execute one parent's debate, and read the results.

A debate run is a ``SolveRun`` of kind ``debate`` plus its ``DebateRun`` settings. The solving executor
(``solving.runs``) claims each planned ``SolveResponse`` and calls :func:`debate_response_execute`,
which runs the level's front-end and the pure debate loop (``solving.debate.orchestrator``) with model
callables, and returns the response fields and the transcript turns; the executor writes them under its
claim guard and scores the answer. Nothing here writes a ``SolveResponse``.

Prompts never contain the parent's answer or solution: the public problem comes from
``build_solve_request`` (the original problem only). Each prompt opens with a ``[Stage]`` line directly
followed by ``[Problem]`` and the problem text, so a scripted model can key its reply on
:func:`script_key` (the demo and the tests do).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction

from kit.model_output import first_object
from llm import LLMRequest, LLMResult, OutputStatus, generate
from llm.capabilities import Reasoning, capabilities_for, check_reasoning
from llm.errors import ProviderError
from llm.types import ImageInput
from models_registry.models import ModelConfig
from models_registry.providers import provider_config_for, shared_limiter
from physalign_site.errors import ApplicationError

from .debate.canonical import DEFAULT_REL_TOL, canonicalize, render
from .debate.orchestrator import DebateConfig, SolveRequest, Transcript, run_debate
from .debate.pruner import Memory
from .models import DebateRun, DebateTurn, SolveResponse, SolveRun

PRUNER_THINKING_BUDGET = 2048  # Debate §3.3.2: the pruner runs at a reduced thinking budget
DEBATE_SETTING_FIELDS = ("max_resolve_rounds", "strict_pruning", "pruning", "value_voting", "rel_tol",
                         "default_solver")
FRONTEND_SETTING_FIELDS = ("cropper", "sharpen", "ocr", "visual_extractor", "reconstructor",
                           "verify_iterations", "svg_char_cap")
SETTING_FIELDS = DEBATE_SETTING_FIELDS + FRONTEND_SETTING_FIELDS
LEVELS = {1: "Text-only", 2: "Structure", 3: "Variable", 4: "Image-only", 5: "Photography (single solver)"}

SOLVER_SYSTEM = (
    "You are an expert physics problem solver. Solve the problem carefully from the information given. "
    "Use only the values, labels and relations stated in the problem (and its figure, if any); do not invent "
    "missing data."
)
PRUNER_SYSTEM = (
    "You are a strict physics grader. You judge whether one candidate solution is fully correct, paying "
    "particular attention to misreadings of the figure (wrong topology, swapped labels, misread values)."
)
SELECTOR_SYSTEM = (
    "You are a physics expert choosing the most reliable of several candidate solutions to one problem."
)
EXTRACTOR_SYSTEM = "You extract the final answer from a physics solution. Do not solve the problem again."

_ANSWER_RULES = (
    "[Rules]\n"
    "- Reason step by step inside <reasoning>…</reasoning>, then give only the final answer inside "
    "<answer>…</answer>.\n"
    "- Multiple choice: the answer is the option letter(s) only, e.g. <answer>B</answer> or <answer>AC</answer>; "
    "never the option's value.\n"
    "- Otherwise: the final value with its SI unit (e.g. <answer>4.9 m/s^2</answer>); for several parts, "
    "label them: <answer>a. …; b. …</answer>.\n"
)
_SOLVER_FORMAT = "[Output format]\n<reasoning><text></reasoning>\n<answer><text></answer>"


# ------------------------------------------------------------------------------------------------ prompts


def script_key(stage: str, problem_text: str) -> str:
    """The contiguous head of every prompt: ``[Stage] …`` then the problem. Scripted models match on it.

    The problem text is ``build_solve_request``'s (its ``[Problem]``/``[Question]``/``[Options]`` sections)
    or the front-end's reconstruction. ``stage`` is ``"solve round 1"``, ``"re-solve round 2"`` …, ``"verify: <candidate answer>"`` or
    ``"select"``.
    """
    text = problem_text if problem_text.startswith("[Problem]") else f"[Problem]\n{problem_text}"
    return f"[Stage] {stage}\n{text}"


def _figure_block(svg: str | None) -> str:
    return f"\n[Figure as SVG]\n{svg}\n" if svg else ""


def solver_prompt(problem_text: str, *, round_number: int, peers: tuple[Memory, ...], svg: str | None) -> str:
    """Round 1 (Debate C.6) and re-solving (C.7, only the surviving peer memories)."""
    if round_number == 1:
        head = script_key("solve round 1", problem_text)
        context = ""
    else:
        head = script_key(f"re-solve round {round_number}", problem_text)
        if peers:
            shown = "\n\n".join(
                f"Solution {i} (answer: {peer.answer or 'none'}):\n{peer.reasoning.strip()}"
                for i, peer in enumerate(peers, start=1)
            )
            context = (
                "\n[Peer solutions]\nThese earlier solutions were checked by a verifier and kept as possibly "
                "reliable. They may still contain mistakes: re-derive the result yourself and use them only "
                f"as hints.\n\n{shown}\n"
            )
        else:
            context = ("\n[Peer solutions]\nEvery earlier solution was judged unreliable; solve the problem "
                       "again from scratch.\n")
    return f"{head}\n{_figure_block(svg)}{context}\n{_ANSWER_RULES}\n{_SOLVER_FORMAT}"


def pruner_prompt(problem_text: str, memory: Memory, *, svg: str | None) -> str:
    """The pruning prompt (Debate C.8): one verdict per candidate memory."""
    head = script_key(f"verify: {memory.answer or 'none'}", problem_text)
    return (
        f"{head}\n{_figure_block(svg)}\n[Candidate solution]\n{memory.reasoning.strip()}\n\n"
        f"[Candidate final answer]\n{memory.answer or '(none)'}\n\n"
        "[Question]\nIs this candidate solution fully correct? Answer yes, no, or not sure.\n\n"
        '[Output format]\n{"label": "<one of: yes | no | not sure>"}'
    )


def selector_prompt(problem_text: str, memories: tuple[Memory, ...], *, svg: str | None) -> str:
    """The final selection step (Debate Table 2): pick the most reliable final-round candidate."""
    shown = "\n\n".join(
        f"Candidate {i} (answer: {memory.answer or 'none'}):\n{memory.reasoning.strip()}"
        for i, memory in enumerate(memories, start=1)
    )
    choices = " | ".join(str(i) for i in range(1, len(memories) + 1))
    return (
        f"{script_key('select', problem_text)}\n{_figure_block(svg)}\n[Candidates]\n{shown}\n\n"
        "[Question]\nWhich candidate is most reliable? Reply with its number, or abstain if none is.\n\n"
        f'[Output format]\n{{"choice": "<one of: {choices} | abstain>"}}'
    )


def extractor_prompt(reasoning: str) -> str:
    """Per-agent normalization fallback (Debate §3.3.1 i): the light model reads only the reasoning."""
    return (
        "[Stage] extract\n[Solution]\n" + reasoning.strip() + "\n\n[Question]\nWhat is the final answer of this "
        "solution? Give only the option letter(s), or the value with its unit.\n\n"
        "[Output format]\n<answer><text></answer>"
    )


# ------------------------------------------------------------------------------------------------ create


def _config(name: str | None, role: str) -> ModelConfig | None:
    if not name:
        return None
    config = ModelConfig.objects.filter(name=name).first()
    if config is None:
        raise ApplicationError(f"Unknown model configuration {name!r} ({role}).", code="model_unknown",
                               extra={"role": role, "name": name})
    if not config.is_active:
        raise ApplicationError(f"The model configuration {name!r} ({role}) is not active.", code="model_inactive",
                               extra={"role": role, "name": name})
    return config


def debate_settings_clean(settings: dict[str, Any] | None, *, solver_names: list[str]) -> dict[str, Any]:
    """Check the ablation switches; unknown keys or bad values are refused with a clear message."""
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise ApplicationError(f"Unknown debate settings {unknown}; allowed: {list(SETTING_FIELDS)}.",
                               code="settings_invalid", extra={"unknown": unknown})
    for key in ("strict_pruning", "pruning", "value_voting", "cropper", "sharpen", "visual_extractor",
                "reconstructor"):
        if key in settings and not isinstance(settings[key], bool):
            raise ApplicationError(f"Setting {key!r} must be true or false.", code="settings_invalid")
    bounds = {"max_resolve_rounds": (0, 2), "verify_iterations": (0, 10), "svg_char_cap": (500, 100_000)}
    for key, (low, high) in bounds.items():
        if key in settings:
            value = settings[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ApplicationError(f"Setting {key!r} must be an integer from {low} to {high}.",
                                       code="settings_invalid")
    if "rel_tol" in settings:
        value = settings["rel_tol"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < float(value) <= 0.5:
            raise ApplicationError("Setting 'rel_tol' must be a number in (0, 0.5].", code="settings_invalid")
        settings["rel_tol"] = float(value)
    if "ocr" in settings and settings["ocr"] not in ("model", "tesseract"):
        raise ApplicationError("Setting 'ocr' must be 'model' or 'tesseract'.", code="settings_invalid")
    if settings.get("default_solver") and settings["default_solver"] not in solver_names:
        raise ApplicationError("The default solver must be one of the solvers.", code="settings_invalid")
    return settings


@transaction.atomic
def debate_run_create(
    *,
    solver_names: list[str],
    pruner: str | None = None,
    selector: str | None = None,
    extractor: str | None = None,
    frontend: str | None = None,
    level: int = 1,
    settings: dict[str, Any] | None = None,
    release: Any = None,
    parent_ids: list[str] | None = None,
    name: str = "",
    actor: Any = None,
    enqueue: bool = True,
) -> SolveRun:
    """Plan a debate run over the parents (one ``SolveResponse`` each) and dispatch it after commit.

    Levels 1–4 need three distinct solvers (ideally from different providers: same-provider solvers are
    allowed with a warning in ``run.manifest['debate_warnings']``); Level 5 exactly one. The pruner
    defaults to the second solver (Debate §3.3.2 reuses Solver 2), when pruning is on.
    """
    from .runs import solve_run_create

    solver_names = [str(n).strip() for n in (solver_names or []) if str(n).strip()]
    if level not in LEVELS:
        raise ApplicationError("The level must be 1, 2, 3, 4 or 5.", code="level_invalid")
    if level == 5 and len(solver_names) != 1:
        raise ApplicationError("Level 5 uses exactly one solver (Debate §3.3.3).", code="solvers_invalid")
    if level < 5 and len(solver_names) != 3:
        raise ApplicationError("Levels 1–4 use exactly three solvers.", code="solvers_invalid")
    if len(set(solver_names)) != len(solver_names):
        raise ApplicationError("The solvers must be three different model configurations.", code="solvers_invalid")
    clean = debate_settings_clean(settings, solver_names=solver_names)
    solvers = [_config(n, f"solver {i}") for i, n in enumerate(solver_names, start=1)]
    warnings: list[str] = []
    providers = [s.provider for s in solvers]
    if len(solvers) > 1 and len(set(providers)) < len(providers):
        warnings.append("Some solvers share a provider; heterogeneous solvers decorrelate errors (Debate §3.3).")
    pruning_needed = level < 5 and clean.get("pruning", True) and clean.get("max_resolve_rounds", 2) > 0
    if pruning_needed and not pruner:
        pruner = solver_names[1]
    pruner_config = _config(pruner, "pruner") if level < 5 else None
    selector_config = _config(selector, "selector") if level < 5 else None
    if level < 5 and selector_config is None:
        warnings.append("No selector: without a majority after the last round the default solver's answer is final.")
    extractor_config = _config(extractor, "extractor")
    frontend_config = _config(frontend, "front-end")
    run = solve_run_create(kind=SolveRun.Kind.DEBATE, model=None, release=release, parent_ids=parent_ids,
                           name=name, options={"debate": True}, actor=actor, enqueue=False)
    DebateRun.objects.create(solve_run=run, solver_names=solver_names, pruner=pruner_config,
                             selector=selector_config, extractor=extractor_config, frontend=frontend_config,
                             level=level, settings=clean)
    manifest = dict(run.manifest or {})
    manifest["debate_warnings"] = warnings
    run.manifest = manifest
    run.save(update_fields=["manifest"])
    if enqueue:
        _dispatch_on_commit(run.pk)
    return run


def _dispatch_on_commit(run_id: int) -> None:
    """Queue the run's chunks once the run and its debate settings are committed (as solving runs do)."""
    from .runs import solve_run_dispatch

    transaction.on_commit(lambda: solve_run_dispatch(run_id=run_id))


# ------------------------------------------------------------------------------------------------ execute


class _InfraFailure(Exception):
    """A required model call returned nothing after the provider layer's retries."""


@dataclass
class _Recorder:
    """Every model call and decision of one parent's debate, in the order they happen."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    solve_round: int = 0

    def call(self, *, config: ModelConfig, request: LLMRequest, stage: str, agent: str, round_number: int,
             reasoning: dict[str, Any] | None = None, required: bool = True) -> LLMResult:
        provider = provider_config_for(config)
        if reasoning is not None:
            provider = dataclasses.replace(provider, reasoning=reasoning)
        try:
            result = generate(request, provider, limiter=shared_limiter())
        except ProviderError as exc:  # configuration errors surface as a failed call, never an answer
            result = LLMResult(text="", finish_reason="error", status=OutputStatus.FAILED, usage=_zero_usage(),
                               latency_ms=0, cost_usd=Decimal(0), raw={}, attempts=[], error=str(exc))
        self.calls.append({
            "round": round_number, "stage": stage, "agent": agent, "model": config,
            "request": request.record(), "raw_output": result.text or "",
            "parsed": {"finish_reason": result.finish_reason, "attempts": len(result.attempts),
                       **({"error": result.error} if result.error else {})},
            "status": result.status, "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens, "cost_usd": Decimal(result.cost_usd or 0),
            "latency_ms": int(result.latency_ms or 0),
        })
        if required and result.status == OutputStatus.FAILED:
            raise _InfraFailure(f"{stage} call to {config.name} failed: {result.error or 'no response'}")
        return result


def _zero_usage():
    from llm import Usage

    return Usage()


def _pruner_reasoning(config: ModelConfig) -> dict[str, Any]:
    """A reduced thinking budget in the model family's own terms; the model's setting if it has none."""
    caps = capabilities_for(config.provider, config.model)
    wanted = {
        Reasoning.OPENAI_EFFORT: {"effort": "low"},
        Reasoning.ANTHROPIC_ADAPTIVE: {"effort": "low"},
        Reasoning.ANTHROPIC_BUDGET: {"budget_tokens": PRUNER_THINKING_BUDGET},
        Reasoning.GEMINI_BUDGET: {"budget_tokens": PRUNER_THINKING_BUDGET},
        Reasoning.GEMINI_LEVEL: {"budget_tokens": PRUNER_THINKING_BUDGET},
    }.get(caps.reasoning)
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
    from .runs import build_solve_request

    request = build_solve_request(parent)
    text = request.user
    marker = text.find("[Output format]")
    if marker >= 0:
        text = text[:marker]
    return text.strip(), tuple(request.images)


def _option_letters(parent: Any) -> str | None:
    letters = "".join(str(o.get("id", "")).strip().upper() for o in (parent.options or []) if isinstance(o, dict))
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


def _frontend(debate: DebateRun, text: str, images: tuple[ImageInput, ...], options: tuple, recorder: _Recorder):
    """Run the level's front-end (Debate Table 1). Returns (problem text, images, svg, step turns)."""
    from .debate import frontend as fe

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
            return recorder.call(config=config, request=request, stage=stage, agent="front-end", round_number=0,
                                 required=False)

    result = fe.run_frontend(problem, level=level, call=call, switches=switches)
    steps = [{"stage": "frontend", "agent": step.stage, "parsed": _json_safe({"step": step.stage,
                                                                               "detail": step.detail})}
             for step in result.steps]
    return result.problem_text, tuple(result.images), result.svg, steps


def debate_response_execute(*, row: SolveResponse) -> dict[str, Any]:
    """Solve one parent with the run's debate settings. Returns the response fields and the transcript turns.

    Keys: status (completed | refusal | truncated | infra_missing), raw_output (the chosen solution text or
    None), final_answer (the rendered final answer), calls, input_tokens, output_tokens, cost_usd, latency_ms,
    error, turns (``DebateTurn`` field values in ``seq`` order). A failed required call (a solver, the pruner)
    gives ``infra_missing`` with the error and the calls made so far: never a fabricated answer.
    """
    run = row.run
    debate = DebateRun.objects.select_related("pruner", "selector", "extractor", "frontend").get(solve_run=run)
    parent = row.parent
    recorder = _Recorder()
    configs = {c.name: c for c in ModelConfig.objects.filter(name__in=debate.solver_names)}
    missing = [n for n in debate.solver_names if n not in configs]
    if missing:
        return _result(recorder, [], None, status="infra_missing", error=f"Solver configurations missing: {missing}")
    text, images = public_problem(parent)
    options = tuple((str(o.get("id", "")), str(o.get("text", ""))) for o in (parent.options or [])
                    if isinstance(o, dict))
    front_steps: list[dict[str, Any]] = []
    try:
        problem_text, problem_images, svg, front_steps = _frontend(debate, text, images, options, recorder)
    except Exception as exc:  # noqa: BLE001 — a front-end crash must not lose the row; recorded as missing
        return _result(recorder, front_steps, None, status="infra_missing",
                       error=f"front-end failed: {exc.__class__.__name__}: {exc}")
    config = _debate_config(debate, parent)
    finals: dict[str, LLMResult] = {}

    def solver_for(name: str):
        model = configs[name]

        def solve(request: SolveRequest) -> str:
            recorder.solve_round = request.round
            prompt = solver_prompt(problem_text, round_number=request.round, peers=request.peers, svg=svg)
            result = recorder.call(config=model, request=LLMRequest(system=SOLVER_SYSTEM, user=prompt,
                                                                    images=problem_images),
                                   stage="solve", agent=name, round_number=request.round)
            finals[name] = result
            return result.text or ""

        return solve

    def prune(memory: Memory) -> str:
        model = debate.pruner
        prompt = pruner_prompt(problem_text, memory, svg=svg)
        result = recorder.call(config=model, request=LLMRequest(system=PRUNER_SYSTEM, user=prompt,
                                                                images=problem_images),
                               stage="prune", agent=memory.solver, round_number=recorder.solve_round + 1,
                               reasoning=_pruner_reasoning(model))
        return _json_field(result.text, "label")

    def select(memories: tuple[Memory, ...]) -> str | None:
        prompt = selector_prompt(problem_text, memories, svg=svg)
        result = recorder.call(config=debate.selector, request=LLMRequest(system=SELECTOR_SYSTEM, user=prompt,
                                                                          images=problem_images),
                               stage="select", agent="selector", round_number=recorder.solve_round,
                               required=False)
        if result.status == OutputStatus.FAILED:
            return None  # an unavailable selector abstains: the default solver decides (Table 2)
        choice = _json_field(result.text, "choice")
        return None if re.search(r"abstain|none", choice, re.I) else choice

    def normalize(reasoning: str) -> str:
        result = recorder.call(config=debate.extractor, request=LLMRequest(system=EXTRACTOR_SYSTEM,
                                                                           user=extractor_prompt(reasoning)),
                               stage="extract", agent="extractor", round_number=recorder.solve_round,
                               required=False)
        return result.text or ""

    solvers = {name: solver_for(name) for name in debate.solver_names}
    try:
        transcript = run_debate(solvers, pruner=prune if debate.pruner else None,
                                selector=select if debate.selector else None,
                                normalizer=normalize if debate.extractor else None, config=config)
    except _InfraFailure as exc:
        return _result(recorder, front_steps, None, status="infra_missing", error=str(exc))
    chosen = finals.get(transcript.final_solver or "")
    status = "completed"
    if not transcript.final_answer and chosen is not None and chosen.status in ("refusal", "truncated"):
        status = chosen.status
    return _result(recorder, front_steps, transcript, status=status, error="",
                   raw_output=chosen.text if chosen is not None else None)


def _json_field(text: str, key: str) -> str:
    """The ``key`` of a JSON reply, or the text itself (the pure parsers read free text too)."""
    value = first_object(text)
    if value is not None and key in value:
        return str(value[key])
    return text or ""


_STAGE_ORDER = {"frontend": 0, "prune": 1, "mask": 2, "solve": 3, "extract": 3, "vote": 4, "select": 5,
                "selection": 6}


def _result(recorder: _Recorder, front_steps: list[dict[str, Any]], transcript: Transcript | None, *,
            status: str, error: str, raw_output: str | None = None) -> dict[str, Any]:
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
            keyed.append(((decision["round"], _STAGE_ORDER[decision["stage"]], 10_000 + len(keyed)), decision))
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
    return {"status": status, "raw_output": raw_output if status != "infra_missing" else None,
            "final_answer": final, "calls": calls, "input_tokens": input_tokens, "output_tokens": output_tokens,
            "cost_usd": cost, "latency_ms": latency, "error": error, "turns": turns}


def _decision(round_number: int, stage: str, agent: str, parsed: dict[str, Any]) -> dict[str, Any]:
    return {"round": round_number, "stage": stage, "agent": agent, "model": None, "request": {}, "raw_output": "",
            "parsed": parsed, "status": "recorded", "input_tokens": 0, "output_tokens": 0,
            "cost_usd": Decimal(0), "latency_ms": 0}


def _annotate_solve_turns(recorder: _Recorder, transcript: Transcript) -> None:
    """Attach the normalized answer and its canonical form to each solver call."""
    solve_calls = [c for c in recorder.calls if c["stage"] == "solve"]
    for call, turn in zip(solve_calls, transcript.turns, strict=False):
        canonical = canonicalize(turn.answer)
        call["parsed"] = {**call["parsed"], "answer": turn.answer, "answer_source": turn.answer_source,
                          "peers": list(turn.peers), "canonical_kind": canonical.kind,
                          "canonical": render(canonical) if turn.answer else ""}
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
        out.append(_decision(round_vote.round, "vote", "canonicalizer", {
            "answers": dict(zip(names, round_vote.answers, strict=True)), "groups": groups,
            "has_majority": v.has_majority, "winner": names[v.winner] if v.winner is not None else None,
            "rendered": v.rendered or "",
        }))
    by_round: dict[int, list] = {}
    for verdict in transcript.prunes:
        by_round.setdefault(verdict.round, []).append(verdict)
    for round_number, verdicts in sorted(by_round.items()):
        kept = [v.solver for v in verdicts if v.kept]
        out.append(_decision(round_number, "mask", "pruner", {
            "labels": {v.solver: str(v.label) for v in verdicts}, "kept": kept,
            "masked": [v.solver for v in verdicts if not v.kept], "all_masked": not kept,
        }))
    if transcript.decided_by != "consensus" or transcript.selection is not None:
        out.append(_decision(transcript.rounds, "selection", "orchestrator", {
            "decided_by": transcript.decided_by, "final_solver": transcript.final_solver,
            "chosen": transcript.selection.chosen if transcript.selection else None,
            "final_answer": transcript.final_answer, "rendered": transcript.final_rendered,
        }))
    else:
        out.append(_decision(transcript.rounds, "selection", "orchestrator", {
            "decided_by": "consensus", "final_solver": transcript.final_solver,
            "final_answer": transcript.final_answer, "rendered": transcript.final_rendered,
        }))
    return out


# ------------------------------------------------------------------------------------------------ reads


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

    from .runs import solve_run_summary

    summary = solve_run_summary(run)
    debate = getattr(run, "debate", None) if run.kind == SolveRun.Kind.DEBATE else None
    early = None
    rounds_used: dict[int, int] = {}
    if debate is not None:
        decisions = (DebateTurn.objects.filter(response__run=run, stage="selection")
                     .values("round").annotate(n=Count("id")).order_by())
        rounds_used = {d["round"]: d["n"] for d in decisions}
        early = DebateTurn.objects.filter(response__run=run, stage="selection", round=1,
                                          parsed__decided_by="consensus").count()
    if debate is not None:
        label = " + ".join(debate.solver_names) + f" · L{debate.level}"
    else:
        label = run.model.name if run.model else "—"
    return RunStats(
        run=run, label=label, level=debate.level if debate else None, settings_label=settings_label(debate),
        total=summary.total, done=summary.done, by_status=summary.by_status, solve_acc=summary.solve_acc,
        binary_acc=summary.accuracy, calls=summary.calls, input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens, cost_usd=Decimal(summary.cost_usd), early_stopped=early,
        rounds_used=rounds_used, max_calls=_max_calls(debate, summary.total) if debate else None,
    )


def _max_calls(debate: DebateRun, parents: int) -> int:
    """Solver, pruner and selector calls of a debate that never stops early (the early-stop saving's base)."""
    if debate.level == 5:
        return parents
    s = debate.settings or {}
    solvers, rounds = len(debate.solver_names), int(s.get("max_resolve_rounds", 2))
    pruning = bool(s.get("pruning", True)) and debate.pruner_id is not None
    per_problem = solvers * (1 + rounds) + (solvers * rounds if pruning else 0) + (1 if debate.selector_id else 0)
    return parents * per_problem


def debate_run_list() -> Any:
    return (SolveRun.objects.filter(kind=SolveRun.Kind.DEBATE).select_related("debate", "release")
            .order_by("-created_at"))


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
        runs = [r for r in SolveRun.objects.select_related("model", "debate").order_by("-created_at")[:200]
                if sorted(r.parent_ids) == wanted][:12]
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
        "response": response.pk, "run": response.run_id, "parent": response.parent.problem_id,
        "status": response.status, "final_answer": response.final_answer, "correct": response.correct,
        "credit": response.credit, "calls": response.calls, "input_tokens": response.input_tokens,
        "output_tokens": response.output_tokens, "cost_usd": str(response.cost_usd),
        "turns": [{"seq": t.seq, "round": t.round, "stage": t.stage, "agent": t.agent,
                   "model": t.model.name if t.model else None, "raw_output": t.raw_output, "parsed": t.parsed,
                   "status": t.status, "input_tokens": t.input_tokens, "output_tokens": t.output_tokens,
                   "cost_usd": str(t.cost_usd), "latency_ms": t.latency_ms}
                  for t in response.turns.select_related("model").order_by("seq")],
    }
    if include_reference:
        data["reference_answer"] = response.parent.answer
    return data


def run_stats_payload(stats: RunStats) -> dict[str, Any]:
    run = stats.run
    debate = getattr(run, "debate", None) if run.kind == SolveRun.Kind.DEBATE else None
    return {
        "id": run.pk, "name": run.name, "kind": run.kind, "status": run.status, "label": stats.label,
        "level": stats.level, "settings": debate.settings if debate else {}, "settings_label": stats.settings_label,
        "solvers": debate.solver_names if debate else [run.model.name if run.model else None],
        "pruner": debate.pruner.name if debate and debate.pruner else None,
        "selector": debate.selector.name if debate and debate.selector else None,
        "total": stats.total, "done": stats.done, "by_status": stats.by_status,
        "solve_acc": stats.solve_acc.as_dict(), "binary_acc": stats.binary_acc.as_dict(), "calls": stats.calls,
        "avg_calls": stats.avg_calls, "input_tokens": stats.input_tokens, "output_tokens": stats.output_tokens,
        "cost_usd": str(stats.cost_usd), "cost_per_problem": str(stats.cost_per_problem or 0),
        "early_stopped": stats.early_stopped, "early_share": stats.early_share,
        "warnings": (run.manifest or {}).get("debate_warnings", []),
    }
