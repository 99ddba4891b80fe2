"""Every write for probes, one job per module: ``prompt_sets`` (the prompt template sets), ``compile_runs``
(creating, planning, dispatching and in-process compiling of runs), ``compile_chunks`` (one chunk under the
run engine's lease, and the finishing step), ``probe_writes`` (saving a compile's probes, keys, views and
issues), ``reviews`` (the review app's hand-off), ``membership`` (dedup groups and splits) and ``release_zips``
(a release's public zip).
"""

from .compile_chunks import (
    CHUNK_LEASE_SECONDS,
    CHUNK_ROWS,
    COMPILE_CHUNK_SIZE,
    ChunkTakenOver,
    compile_chunk_execute,
    compile_chunks_process,
    compile_run_finish,
)
from .compile_runs import (
    COMPILE_RUNS,
    ProgressCallback,
    compile_run_create,
    compile_run_dispatch,
    compile_run_execute,
    compile_run_plan,
)
from .membership import membership_refresh
from .probe_writes import probes_persist
from .prompt_sets import prompt_set_active, prompt_set_import
from .release_zips import release_zip_open, release_zip_queue, release_zip_ready
from .reviews import probe_record_review

__all__ = [
    "CHUNK_LEASE_SECONDS",
    "CHUNK_ROWS",
    "COMPILE_CHUNK_SIZE",
    "COMPILE_RUNS",
    "ChunkTakenOver",
    "ProgressCallback",
    "compile_chunk_execute",
    "compile_chunks_process",
    "compile_run_create",
    "compile_run_dispatch",
    "compile_run_execute",
    "compile_run_finish",
    "compile_run_plan",
    "membership_refresh",
    "probe_record_review",
    "probes_persist",
    "prompt_set_active",
    "prompt_set_import",
    "release_zip_open",
    "release_zip_queue",
    "release_zip_ready",
]
