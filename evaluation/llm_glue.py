"""Django-aware glue for the provider layer: ModelConfig → ProviderConfig and the shared limiter.

With ``REDIS_URL`` set, rate limits are shared by every process using that Redis (all Celery
workers); without it (the embedded default) an in-process limiter applies the same rules.
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

from django.conf import settings

from llm import LLMRequest, LLMResult, ProviderConfig, generate
from llm.ratelimit import LocalRateLimiter, RateLimiter, RedisRateLimiter

from .models import ModelConfig

_lock = threading.Lock()
_limiters: dict[str, RateLimiter] = {}


def provider_config_for(model_config: ModelConfig) -> ProviderConfig:
    return ProviderConfig(
        name=model_config.name, provider=model_config.provider, model=model_config.model,
        base_url=model_config.base_url, api_key_env=model_config.api_key_env,
        max_output_tokens=model_config.max_output_tokens, temperature=model_config.temperature,
        reasoning=dict(model_config.reasoning or {}),
        send_images=model_config.image_policy == ModelConfig.ImagePolicy.SEND,
        price_in_per_mtok=Decimal(model_config.price_in_per_mtok),
        price_out_per_mtok=Decimal(model_config.price_out_per_mtok),
        requests_per_minute=model_config.requests_per_minute, max_concurrency=model_config.max_concurrency,
        timeout_seconds=float(model_config.timeout_seconds), max_retries=int(model_config.max_retries),
        extra=dict(model_config.extra or {}),
    )


def shared_limiter() -> RateLimiter:
    url = getattr(settings, "REDIS_URL", "") or ""
    with _lock:
        limiter = _limiters.get(url)
        if limiter is None:
            if url:
                import redis

                limiter = RedisRateLimiter(redis.Redis.from_url(url))
            else:
                limiter = LocalRateLimiter()
            _limiters[url] = limiter
        return limiter


def model_generate(*, model_config: ModelConfig, request: LLMRequest, **kwargs: Any) -> LLMResult:
    kwargs.setdefault("limiter", shared_limiter())
    return generate(request, provider_config_for(model_config), **kwargs)
