"""Evaluation runs (Kit §5): every (model, probe, condition) request row is planned up front (a fixed
denominator), executed by chunk tasks under the run engine's leases, scored once, and summarised as metrics.

One job per module: ``tables`` (options and statuses), ``planning`` (what a run asks), ``control``
(dispatch, cancel, resume through ``run_engine``), ``attachments`` (the images a request carries, cached by
content), ``request`` (the exact request of a row), ``execution`` (claiming, calling and storing a chunk),
``cache`` (reusing earlier completed responses), ``batch`` (provider batch APIs as an execution mode), ``estimate`` (what a run will cost), ``budget`` (a run's
dollar budget, checked before each claim), ``scores`` (a row's item score), ``progress`` (the counters kept on the run, and what a progress poll shows),
``item_file`` (the stored item file) and ``results`` (items, metrics, rescoring).
"""

from .budget import eval_run_budget_set
from .control import eval_run_cancel, eval_run_dispatch, eval_run_resume
from .execution import eval_chunk_process
from .item_file import item_lines
from .planning import CONDITION_SCOPE, RunPreview, condition_applies, eval_run_create, eval_run_preview
from .progress import RunProgress, run_progress, runs_progress
from .request import build_request
from .results import (
    POOL_OF,
    eval_run_finalize,
    eval_run_rescore,
    metrics_store,
    run_item_file,
    run_items,
)
from .tables import DEFAULT_OPTIONS

__all__ = [
    "DEFAULT_OPTIONS",
    "eval_run_create",
    "eval_run_preview",
    "RunPreview",
    "CONDITION_SCOPE",
    "condition_applies",
    "eval_run_dispatch",
    "eval_run_cancel",
    "eval_run_resume",
    "eval_run_budget_set",
    "eval_chunk_process",
    "build_request",
    "eval_run_finalize",
    "eval_run_rescore",
    "metrics_store",
    "run_items",
    "run_item_file",
    "item_lines",
    "run_progress",
    "runs_progress",
    "RunProgress",
    "POOL_OF",
]
