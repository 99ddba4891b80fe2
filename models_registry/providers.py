"""Django-aware glue for the provider layer: ModelConfig → ProviderConfig, the endpoint policy
from settings, and the shared limiter.

With ``REDIS_URL`` set, rate limits are shared by every process using that Redis (all Celery
workers); without it (the embedded default) an in-process limiter applies the same rules.
"""

from __future__ import annotations

import functools
import re
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings

from llm import LLMRequest, LLMResult, ProviderConfig, generate
from llm.endpoint_policy import DEFAULT_KEY_ENV_PATTERN, EndpointPolicy
from llm.ratelimit import LocalRateLimiter, RateLimiter, RedisRateLimiter

from .models import ModelConfig

_lock = threading.Lock()
_limiters: dict[str, RateLimiter] = {}


def provider_config_for(model_config: ModelConfig) -> ProviderConfig:
    return ProviderConfig(
        name=model_config.name,
        provider=model_config.provider,
        model=model_config.model,
        base_url=model_config.base_url,
        api_key_env=model_config.api_key_env,
        max_output_tokens=model_config.max_output_tokens,
        temperature=model_config.temperature,
        reasoning=dict(model_config.reasoning or {}),
        send_images=model_config.image_policy == ModelConfig.ImagePolicy.SEND,
        price_in_per_mtok=Decimal(model_config.price_in_per_mtok),
        price_out_per_mtok=Decimal(model_config.price_out_per_mtok),
        requests_per_minute=model_config.requests_per_minute,
        max_concurrency=model_config.max_concurrency,
        timeout_seconds=float(model_config.timeout_seconds),
        max_retries=int(model_config.max_retries),
        extra=dict(model_config.extra or {}),
        endpoint_policy=endpoint_policy(),
    )


def endpoint_policy() -> EndpointPolicy:
    """The deployment's rules for a config's key variable and base URL (read at call time, never cached,
    so a settings change applies to the next call). The reserved names are derived here and only here:
    every variable .env.example documents for the app itself, plus the policy's reserved prefixes."""
    return EndpointPolicy(
        key_env_pattern=getattr(settings, "PHYSALIGN_MODEL_KEY_ENV_PATTERN", DEFAULT_KEY_ENV_PATTERN),
        reserved_env_names=app_env_names(Path(settings.BASE_DIR) / ".env.example"),
        allow_private_urls=bool(getattr(settings, "PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS", False)),
    )


@functools.cache
def app_env_names(example: Path) -> frozenset[str]:
    """The variables ``example`` (.env.example) documents, except the key examples in its "Model
    providers" section: those are what model configs are meant to name."""
    names: set[str] = set()
    section = ""
    lines = example.read_text(encoding="utf-8").splitlines() if example.is_file() else []
    for line in lines:
        if heading := re.match(r"#\s*---\s*(.+?)\s*---", line):
            section = heading.group(1)
        elif (name := re.match(r"#?\s*([A-Z][A-Z0-9_]*)=", line)) and not section.startswith(
            "Model providers"
        ):
            names.add(name.group(1))
    return frozenset(names)


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
