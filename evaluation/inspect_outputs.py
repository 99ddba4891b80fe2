"""What an inspect_ai model output is to the scorer. Pure: no Django, no inspect import.

The inspect task's scorer (``physalign_studio.inspect_task``) and the log import (``evaluation.runs.inspect_log``)
both read an inspect output through ``inspect_response``, so a run in inspect and the same log stored in the app
give one status per item: inspect's stop reason is mapped to the app's normalised finish reason, and that to an
output status by the provider layer's own rule (``llm.client.STATUS_FOR_FINISH``). A sample with no model output
at all (it errored, or the model returned no choice) is ``infra_missing``: nothing was served, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm.client import STATUS_FOR_FINISH
from llm.types import OutputStatus

from .scoring import ModelResponse

# inspect's StopReason (inspect_ai.model.StopReason) → the provider layer's normalised finish reason
FINISH_FOR_STOP = {
    "stop": "stop",
    "max_tokens": "length",
    "model_length": "length",
    "content_filter": "content_filter",
    "tool_calls": "other",
    "unknown": "other",
}


@dataclass(frozen=True)
class InspectOutput:
    """An inspect sample's output as the app stores it: the raw text (None: nothing served), the normalised
    finish reason and the output status."""

    text: str | None
    finish_reason: str
    status: str

    @property
    def response(self) -> ModelResponse:
        return ModelResponse(self.text, self.status)


def inspect_response(*, served: bool, completion: str | None, stop_reason: str | None) -> InspectOutput:
    """``served``: the sample has a model output (at least one choice, no sample error)."""
    if not served or completion is None:
        return InspectOutput(text=None, finish_reason="", status=OutputStatus.INFRA_MISSING)
    finish = FINISH_FOR_STOP.get(stop_reason or "unknown", "other")
    return InspectOutput(text=completion, finish_reason=finish, status=STATUS_FOR_FINISH[finish])
