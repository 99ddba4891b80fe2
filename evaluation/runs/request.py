"""The exact request of a row: its condition's public messages and images."""

from __future__ import annotations

from llm import ImageInput, LLMRequest

from ..conditions import reorder_candidates
from ..models import EvalRequest
from .attachments import probe_images


def build_request(row: EvalRequest, seed: int, images: tuple[ImageInput, ...] | None = None) -> LLMRequest:
    """The exact request of a row: a fresh context with the probe's public messages for the condition
    (``images``: the probe's attachments when the caller already loaded them)."""
    probe = row.probe
    messages = probe.gold_messages if row.condition == "gold" else probe.raw_messages
    user = messages["user"]
    if row.condition == "reordered":
        user = reorder_candidates(user, seed=seed, probe_id=probe.logical_probe_id)
    if row.condition == "no_image":
        images = ()
    elif images is None:
        images = probe_images(probe)
    return LLMRequest(
        system=messages["system"],
        user=user,
        images=images,
        request_id=f"{row.run_id}:{row.model_id}:{probe.logical_probe_id}:{row.condition}",
    )
