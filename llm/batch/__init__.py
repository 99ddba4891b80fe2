"""Provider batch APIs: many requests in one submission, answered within 24 h at about half the price.

OpenAI Batch, Anthropic Message Batches and Gemini batch mode, each through its official SDK (retries
off, the endpoint policy checked before every call, redirects never followed, the key read from the
environment at call time — the same ``endpoint_for`` and client setup as the direct path). Each item is
built by the direct path's payload builder and each answer normalised by the direct path's reply
normaliser, so a batch item and a direct call of the same request send the same body and read the same
answer. Django-free.

    batch_id = batch_submit([("r1", request1), ("r2", request2)], config)
    batch_status(batch_id, config)   # BatchStatus(state="running", total=2, succeeded=0, errored=0)
    batch_results(batch_id, config)  # {"r1": LLMResult(...), "r2": LLMResult(...)} once it ended
    batch_cancel(batch_id, config)

Custom ids: 1–64 characters of ``A-Z a-z 0-9 _ -`` (Anthropic's rule, applied to every provider), unique
within a batch. Provider failures raise ``ProviderError`` (with ``kind``); a failed *item* is an
``LLMResult`` with status ``failed`` instead (kinds include ``expired`` and ``cancelled``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..client import STATUS_FOR_FINISH, as_sent
from ..cost import discounted_cost, usage_cost
from ..errors import ErrorKind, ProviderError
from ..types import Attempt, LLMRequest, LLMResult, OutputStatus, ProviderConfig, Usage
from .base import BatchBackend, BatchErrorKind, BatchStatus, ItemOutcome

__all__ = [
    "BATCH_PROVIDERS",
    "BatchErrorKind",
    "BatchStatus",
    "batch_cancel",
    "batch_price_factor",
    "batch_results",
    "batch_status",
    "batch_submit",
    "batch_supported",
]

BATCH_PROVIDERS: frozenset[str] = frozenset({"openai", "anthropic", "google"})

# The batch discount on input and output tokens each provider documents for its batch API: OpenAI Batch
# (50% off), Anthropic Message Batches (50% of standard prices), Gemini batch mode (50% of the standard
# cost). Prices change: a config overrides it with extra["batch_price_factor"].
PRICE_FACTOR: dict[str, Decimal] = {
    "openai": Decimal("0.5"),
    "anthropic": Decimal("0.5"),
    "google": Decimal("0.5"),
}

CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def batch_supported(config: ProviderConfig) -> bool:
    """The provider has a batch API here and the config does not opt out (``extra["batch"] = False``).
    OpenAI-compatible servers are not: few speak ``/v1/batches``."""
    return config.provider in BATCH_PROVIDERS and config.extra.get("batch", True) is not False


def batch_price_factor(config: ProviderConfig) -> Decimal:
    """What a batch item costs relative to a direct call: the provider's discount (0.5 for all three),
    or ``extra["batch_price_factor"]`` (a number in (0, 1]); 1 for a provider without a batch API."""
    if config.provider not in BATCH_PROVIDERS:
        return Decimal(1)
    override = config.extra.get("batch_price_factor")
    if override is None:
        return PRICE_FACTOR[config.provider]
    try:
        factor = Decimal(str(override))
    except (InvalidOperation, ValueError) as exc:
        raise ProviderError(
            f"Model config {config.name!r}: batch_price_factor {override!r} is not a number.",
            kind=ErrorKind.CONFIG,
        ) from exc
    if not factor.is_finite() or not Decimal(0) < factor <= Decimal(1):
        raise ProviderError(
            f"Model config {config.name!r}: batch_price_factor must be in (0, 1], not {override!r}.",
            kind=ErrorKind.CONFIG,
        )
    return factor


def batch_submit(
    items: Sequence[tuple[str, LLMRequest]], config: ProviderConfig, *, http_client: Any = None
) -> str:
    """Submit ``(custom_id, request)`` pairs as one batch; returns the provider's batch id (Gemini: its
    name, ``batches/…``). Images are dropped when the config does not send images, as in ``generate``.
    Every payload is built (and checked) before anything is sent."""
    backend = _backend(config)
    if not items:
        raise ProviderError("A batch needs at least one request.", kind=ErrorKind.CONFIG)
    seen: set[str] = set()
    for custom_id, _ in items:
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            raise ProviderError(
                f"Batch custom id {custom_id!r} must be 1-64 characters of A-Z a-z 0-9 _ -.",
                kind=ErrorKind.CONFIG,
            )
        if custom_id in seen:
            raise ProviderError(f"Batch custom id {custom_id!r} appears twice.", kind=ErrorKind.CONFIG)
        seen.add(custom_id)
    sent = [(custom_id, as_sent(request, config)) for custom_id, request in items]
    return backend.submit(sent, config, http_client)


def batch_status(batch_id: str, config: ProviderConfig, *, http_client: Any = None) -> BatchStatus:
    """The batch's normalised state and item counts (Anthropic reports its counts only once it ended)."""
    return _backend(config).status(_checked_id(batch_id), config, http_client)


def batch_results(batch_id: str, config: ProviderConfig, *, http_client: Any = None) -> dict[str, LLMResult]:
    """custom_id → result for the items the provider returned (call it once the batch is no longer
    running; an expired or cancelled batch returns what it finished). Succeeded items are normalised like
    a direct answer and priced at the batch factor; errored, expired, cancelled and unreadable items come
    back ``failed`` with ``error`` and ``error_kind``. Items the provider did not return are absent."""
    factor = batch_price_factor(config)
    outcomes = _backend(config).results(_checked_id(batch_id), config, http_client)
    fetched = time.time()
    return {custom_id: _result(outcome, config, factor, fetched) for custom_id, outcome in outcomes.items()}


def batch_cancel(batch_id: str, config: ProviderConfig, *, http_client: Any = None) -> None:
    """Ask the provider to cancel; the batch then ends as ``cancelled`` (finished items stay readable)."""
    _backend(config).cancel(_checked_id(batch_id), config, http_client)


def _checked_id(batch_id: str) -> str:
    if not isinstance(batch_id, str) or not batch_id.strip():
        raise ProviderError("A batch id is required.", kind=ErrorKind.CONFIG)
    return batch_id


def _backend(config: ProviderConfig) -> BatchBackend:
    if not batch_supported(config):
        raise ProviderError(
            f"Model config {config.name!r} (provider {config.provider!r}) has no batch API here.",
            kind=ErrorKind.CONFIG,
        )
    if config.provider == "openai":
        from .openai_batch import OpenAIBatch

        return OpenAIBatch()
    if config.provider == "anthropic":
        from .anthropic_batch import AnthropicBatch

        return AnthropicBatch()
    from .google_batch import GoogleBatch

    return GoogleBatch()


def _result(outcome: ItemOutcome, config: ProviderConfig, factor: Decimal, fetched: float) -> LLMResult:
    reply = outcome.reply
    if reply is not None:
        return LLMResult(
            text=reply.text,
            finish_reason=reply.finish_reason,
            status=STATUS_FOR_FINISH.get(reply.finish_reason, OutputStatus.COMPLETED),
            usage=reply.usage,
            latency_ms=0,  # a batch reports no per-item latency
            cost_usd=discounted_cost(
                usage_cost(
                    reply.usage,
                    price_in_per_mtok=config.price_in_per_mtok,
                    price_out_per_mtok=config.price_out_per_mtok,
                ),
                factor,
            ),
            raw=outcome.raw,
            attempts=[Attempt(number=1, started_at=fetched, latency_ms=0, outcome="ok")],
        )
    error = outcome.error or ProviderError("The batch item has neither an answer nor an error.", kind="other")
    return LLMResult(
        text="",
        finish_reason="error",
        status=OutputStatus.FAILED,
        usage=Usage(),
        latency_ms=0,
        cost_usd=usage_cost(Usage(), price_in_per_mtok=Decimal(0), price_out_per_mtok=Decimal(0)),
        raw=outcome.raw,
        attempts=[
            Attempt(
                number=1,
                started_at=fetched,
                latency_ms=0,
                outcome="error",
                error_kind=error.kind,
                status_code=error.status_code,
                retryable=error.retryable,
                message=error.message[:500],
            )
        ],
        error=error.message,
        error_kind=error.kind or ErrorKind.OTHER,
    )
