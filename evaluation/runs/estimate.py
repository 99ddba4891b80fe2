"""What a run will cost, before and while it runs: ``llm.estimate``'s approximation applied to a run's requests.

The launch preview estimates every planned request (its real system and user text for the condition, and its
images' pixel sizes from the attachment metadata); the chunk executor estimates each built request before it
claims it when the run carries a budget (``budget``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from llm import LLMRequest, ProviderConfig, Usage
from llm.batch import batch_price_factor, batch_supported
from llm.cost import discounted_cost, usage_cost
from llm.estimate import CallEstimate, call_estimate, request_estimate
from probes.attachments import AttachmentIndex, AttachmentMissing
from probes.models import Probe


@dataclass(frozen=True)
class ModelEstimate:
    """A model's share of a run: its requests, their estimated input tokens, output caps and dollars."""

    model: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal


def _messages(probe: Probe, condition: str) -> tuple[str, str]:
    """The condition's system and user text (``reordered`` permutes the raw user text's candidate lines, so
    its characters are the raw text's)."""
    messages = probe.gold_messages if condition == "gold" else probe.raw_messages
    return messages["system"], messages["user"]


def plan_estimates(
    configs: Iterable[tuple[str, ProviderConfig]], pairs: list[tuple[str, Probe]], *, batch: bool = False
) -> list[ModelEstimate]:
    """The estimate of each model over the (condition, probe) pairs a run asks every model (probes loaded with
    their messages, ``parent_id`` and ``attachment_ids``); with ``batch``, at the batch price of the models
    whose provider has a batch API (``price_factor``)."""
    index = AttachmentIndex(list({p.pk: p for _, p in pairs}.values())) if pairs else None
    sizes: dict[int, list[tuple[int, int] | None]] = {}
    for _, probe in pairs:
        if probe.pk not in sizes and index is not None:
            try:
                sizes[probe.pk] = [(a.width, a.height) for a in index.of(probe)]
            except AttachmentMissing:  # its rows end infra_missing without a call
                sizes[probe.pk] = []
    result = []
    for name, config in configs:
        calls: list[CallEstimate] = [
            call_estimate(config, _messages(probe, c), [] if c == "no_image" else sizes.get(probe.pk, []))
            for c, probe in pairs
        ]
        tokens_in, tokens_out = sum(e.input_tokens for e in calls), sum(e.output_tokens for e in calls)
        cost = usage_cost(
            Usage(input_tokens=tokens_in, output_tokens=tokens_out),
            price_in_per_mtok=config.price_in_per_mtok,
            price_out_per_mtok=config.price_out_per_mtok,
        )  # priced once over the model's tokens, not rounded per request
        if batch:
            cost = discounted_cost(cost, price_factor(config, batch=True))
        result.append(ModelEstimate(name, len(calls), tokens_in, tokens_out, cost))
    return result


def price_factor(config: ProviderConfig, *, batch: bool) -> Decimal:
    """What a request of this model costs relative to a direct call: the batch discount in a batch-mode run
    when the provider has a batch API, else 1."""
    return batch_price_factor(config) if batch and batch_supported(config) else Decimal(1)


def row_estimate(request: LLMRequest, config: ProviderConfig, *, batch: bool = False) -> Decimal:
    """The estimated dollars of one built request (the budget's in-flight reservation); ``batch``: sent in a
    provider batch (``price_factor``)."""
    cost = request_estimate(request, config).cost_usd
    return discounted_cost(cost, price_factor(config, batch=True)) if batch else cost
