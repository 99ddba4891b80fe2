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

One job per module: ``create`` (settings and a new run), ``prompts`` (every stage's prompt),
``execute`` (one parent's debate) and ``reads`` (statistics, comparisons and transcripts).
"""

from .create import (
    DEBATE_SETTING_FIELDS,
    FRONTEND_SETTING_FIELDS,
    LEVELS,
    PRUNER_THINKING_BUDGET,
    SETTING_FIELDS,
    debate_run_create,
    debate_settings_clean,
)
from .execute import debate_response_execute, public_problem
from .prompts import (
    EXTRACTOR_SYSTEM,
    PRUNER_SYSTEM,
    SELECTOR_SYSTEM,
    SOLVER_SYSTEM,
    extractor_prompt,
    pruner_prompt,
    script_key,
    selector_prompt,
    solver_prompt,
)
from .reads import (
    RunStats,
    TranscriptRound,
    comparable_runs,
    debate_run_list,
    run_stats,
    run_stats_payload,
    settings_label,
    transcript_payload,
    transcript_rounds,
)

__all__ = [
    "PRUNER_THINKING_BUDGET",
    "DEBATE_SETTING_FIELDS",
    "FRONTEND_SETTING_FIELDS",
    "SETTING_FIELDS",
    "LEVELS",
    "SOLVER_SYSTEM",
    "PRUNER_SYSTEM",
    "SELECTOR_SYSTEM",
    "EXTRACTOR_SYSTEM",
    "script_key",
    "solver_prompt",
    "pruner_prompt",
    "selector_prompt",
    "extractor_prompt",
    "debate_settings_clean",
    "debate_run_create",
    "public_problem",
    "debate_response_execute",
    "RunStats",
    "settings_label",
    "run_stats",
    "debate_run_list",
    "comparable_runs",
    "TranscriptRound",
    "transcript_rounds",
    "transcript_payload",
    "run_stats_payload",
]
