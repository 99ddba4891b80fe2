"""Solve runs (App. B.4; the debate solver, Debate §3): one ``SolveRun`` whose ``kind`` is ``single`` (one model
answers each parent) or ``debate`` (three solvers, the canonicalizer, pruner and selector; its settings in
``DebateRun``). Both kinds plan one ``SolveResponse`` per parent up front (the fixed denominator), run on the
one run engine (leased claims, at most two infrastructure retries, never written twice), and are scored and
graded the same way; they differ only in how a row's outcome is obtained.

One concern per module, the two kinds side by side:

- ``prompts``: the single solver's prompt (the original problem only) and every debate stage's prompt;
- ``create``: planning and the manifest (shared), ``solve_run_create``, the debate settings and
  ``debate_run_create``;
- ``control``: the run engine tables, dispatch, cancel, resume, finalize;
- ``execute``: claim a row, obtain its outcome (one model call, or ``debate_execute``), write it under the
  claim; ``debate_turns`` assembles a debate's transcript turns;
- ``reads``: run statistics, comparisons and transcripts.
"""

from .control import (
    DEFAULT_OPTIONS,
    TERMINAL,
    solve_run_cancel,
    solve_run_dispatch,
    solve_run_finalize,
    solve_run_resume,
)
from .create import (
    DEBATE_SETTING_FIELDS,
    FRONTEND_SETTING_FIELDS,
    LEVELS,
    PRUNER_THINKING_BUDGET,
    SETTING_FIELDS,
    debate_run_create,
    debate_settings_clean,
    solve_run_create,
)
from .execute import solve_chunk_process, solve_response_execute
from .prompts import (
    PROMPT_TEMPLATE_SHA256,
    PROMPT_VERSION,
    build_solve_request,
    public_problem,
    script_key,
    solve_prompt_text,
)
from .reads import RunStats, TranscriptRound, comparable_runs, run_stats, settings_label, transcript_rounds

__all__ = [
    "DEBATE_SETTING_FIELDS",
    "DEFAULT_OPTIONS",
    "FRONTEND_SETTING_FIELDS",
    "LEVELS",
    "PROMPT_TEMPLATE_SHA256",
    "PROMPT_VERSION",
    "PRUNER_THINKING_BUDGET",
    "SETTING_FIELDS",
    "TERMINAL",
    "RunStats",
    "TranscriptRound",
    "build_solve_request",
    "comparable_runs",
    "debate_run_create",
    "debate_settings_clean",
    "public_problem",
    "run_stats",
    "script_key",
    "settings_label",
    "solve_chunk_process",
    "solve_prompt_text",
    "solve_response_execute",
    "solve_run_cancel",
    "solve_run_create",
    "solve_run_dispatch",
    "solve_run_finalize",
    "solve_run_resume",
    "transcript_rounds",
]
