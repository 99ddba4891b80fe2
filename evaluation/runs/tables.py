"""What every part of a run shares: its default options and its rows' final statuses."""

from __future__ import annotations

from ..models import EvalRequest

# a chunk task claims its rows a few at a time (not all up front), so a chunk can be large
DEFAULT_OPTIONS = {"chunk_size": 100, "claim_lease_seconds": 300, "resamples": 2000}


TERMINAL = EvalRequest.TERMINAL
# what storing a scored row writes to its ItemScore
SCORE_FIELDS = ["status", "C", "G", "J", "object_valid", "field_valid", "canonical", "scored_at"]
