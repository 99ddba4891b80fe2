"""What every part of a run shares: its default options and its rows' final statuses."""

from __future__ import annotations

from ..models import EvalRequest

# A chunk task claims its rows a few at a time (not all up front), so a chunk can be large, and it should be:
# every hand-over from one chunk task to the next leaves a worker's call threads idle for about one call
# (the last calls of a chunk end one by one; the next task loads, claims and starts its first calls), which
# at 100 rows × 50 ms calls cost about a tenth of the throughput (bench/eval_throughput.py). 500 rows at 8
# threads are ~60 rounds of calls: 30 min at 30 s calls, within the broker's one-hour visibility timeout.
DEFAULT_OPTIONS = {"chunk_size": 500, "claim_lease_seconds": 300, "resamples": 2000}


TERMINAL = EvalRequest.TERMINAL
# what storing a scored row writes to its ItemScore
SCORE_FIELDS = ["status", "C", "G", "J", "object_valid", "field_valid", "canonical", "scored_at"]
