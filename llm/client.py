"""The one entry point for model calls: rate limits, our retries, the attempt history and cost.

``generate(request, config)`` never raises for provider failures: it returns an ``LLMResult``
whose ``status`` says what happened (completed, refusal, truncated, failed) with every attempt
recorded. Retries: only retryable errors (``llm.errors``), at most ``config.max_retries`` (2 by
default, so 3 attempts), exponential backoff with full jitter, never shorter than ``Retry-After``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from .cost import usage_cost
from .errors import ErrorKind, ProviderError
from .providers import Provider, provider_for
from .ratelimit import Limits, NoRateLimiter, RateLimiter
from .types import Attempt, LLMRequest, LLMResult, OutputStatus, ProviderConfig, Usage

STATUS_FOR_FINISH = {
    "stop": OutputStatus.COMPLETED,
    "other": OutputStatus.COMPLETED,
    "length": OutputStatus.TRUNCATED,
    "refusal": OutputStatus.REFUSAL,
    "content_filter": OutputStatus.REFUSAL,
}


@dataclass(frozen=True)
class Backoff:
    base_seconds: float = 1.0
    factor: float = 2.0
    cap_seconds: float = 30.0
    max_retry_after: float = 300.0

    def delay(self, retry_number: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter on ``base·factor^(n-1)`` (capped); a server's ``Retry-After`` is a floor."""
        ceiling = min(self.cap_seconds, self.base_seconds * self.factor ** (retry_number - 1))
        delay = rng.uniform(ceiling / 2, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_retry_after))
        return delay


def as_sent(request: LLMRequest, config: ProviderConfig) -> LLMRequest:
    """The request as the model sees it: without its images when the config does not send images."""
    if not config.send_images and request.images:
        return replace(request, images=())
    return request


def limits_for(config: ProviderConfig) -> Limits:
    return Limits(
        requests_per_window=config.requests_per_minute,
        window_seconds=float(config.extra.get("rate_window_seconds", 60.0)),
        max_concurrency=config.max_concurrency,
        lease_seconds=max(config.timeout_seconds * 2, 30.0),
    )


def generate(
    request: LLMRequest,
    config: ProviderConfig,
    *,
    limiter: RateLimiter | None = None,
    http_client: Any = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    backoff: Backoff | None = None,
    provider: Provider | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> LLMResult:
    request = as_sent(request, config)
    limiter = limiter or NoRateLimiter()
    backoff = backoff or Backoff(base_seconds=float(config.extra.get("backoff_base_seconds", 1.0)))
    rng = rng or random.Random()
    limits = limits_for(config)
    attempts: list[Attempt] = []
    started = clock()
    try:
        provider = provider or provider_for(config.provider)
    except ProviderError as exc:
        return _failed(exc, attempts, started, clock)
    max_attempts = 1 + max(int(config.max_retries), 0)
    for number in range(1, max_attempts + 1):
        with limiter.slot(config.name, limits):
            # wall time first: a preemption between the two readings then shortens the recorded span
            # (started_at + latency) instead of stretching it past the moment the slot was released
            wall = time.time()
            t0 = clock()
            try:
                reply = provider.call(request, config, http_client=http_client, attempt=number)
            except ProviderError as exc:
                attempt = Attempt(
                    number=number,
                    started_at=wall,
                    latency_ms=_ms(clock() - t0),
                    outcome="error",
                    error_kind=exc.kind,
                    status_code=exc.status_code,
                    retryable=exc.retryable,
                    retry_after_s=exc.retry_after,
                    message=exc.message[:500],
                )
                attempts.append(attempt)
                error = exc
            else:
                attempts.append(
                    Attempt(number=number, started_at=wall, latency_ms=_ms(clock() - t0), outcome="ok")
                )
                status = STATUS_FOR_FINISH.get(reply.finish_reason, OutputStatus.COMPLETED)
                return LLMResult(
                    text=reply.text,
                    finish_reason=reply.finish_reason,
                    status=status,
                    usage=reply.usage,
                    latency_ms=_ms(clock() - started),
                    cost_usd=usage_cost(
                        reply.usage,
                        price_in_per_mtok=config.price_in_per_mtok,
                        price_out_per_mtok=config.price_out_per_mtok,
                    ),
                    raw=reply.raw,
                    attempts=attempts,
                )
        if not error.retryable or number == max_attempts:
            return _failed(error, attempts, started, clock)
        pause = backoff.delay(number, error.retry_after, rng)
        attempts[-1].slept_s = round(pause, 4)
        sleep(pause)
    raise AssertionError("unreachable")  # pragma: no cover


def _ms(seconds: float) -> int:
    return max(int(round(seconds * 1000)), 0)


def _failed(
    error: ProviderError, attempts: list[Attempt], started: float, clock: Callable[[], float]
) -> LLMResult:
    return LLMResult(
        text="",
        finish_reason="error",
        status=OutputStatus.FAILED,
        usage=Usage(),
        latency_ms=_ms(clock() - started),
        cost_usd=usage_cost(Usage(), price_in_per_mtok=Decimal(0), price_out_per_mtok=Decimal(0)),
        raw={},
        attempts=attempts,
        error=error.message,
        error_kind=error.kind or ErrorKind.OTHER,
    )
