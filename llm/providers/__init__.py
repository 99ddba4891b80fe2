"""Provider adapters. Each turns an ``LLMRequest`` into one SDK call and normalises the answer.

Adapters make exactly one attempt: SDK retries are off (``max_retries=0``; google-genai with a
one-attempt retry policy) because retries, backoff and their records are ours (``llm.client``).
Before anything is sent, ``endpoint_for`` checks the endpoint policy (``llm.endpoint_policy``); the
SDK clients never follow redirects, which could lead to an address that check never saw.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, NamedTuple, Protocol

from ..endpoint_policy import check_endpoint
from ..errors import ErrorKind, ProviderError, kind_for_status, retry_after_seconds
from ..types import LLMRequest, ProviderConfig, ProviderReply


class Provider(Protocol):
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply: ...


class Endpoint(NamedTuple):
    base_url: str | None  # None: the SDK's own default endpoint
    api_key: str | None


def endpoint_for(config: ProviderConfig, *, key_required: bool = True) -> Endpoint:
    """Where to send and with which key. The endpoint policy (``llm.endpoint_policy``) is checked here,
    right before the key is read from the environment and before any request: a config that names a
    forbidden variable or a non-public base URL raises ``EndpointRefused`` and nothing is sent."""
    check_endpoint(base_url=config.base_url, api_key_env=config.api_key_env, policy=config.endpoint_policy)
    return Endpoint(base_url=config.base_url or None, api_key=_read_key(config, required=key_required))


def _read_key(config: ProviderConfig, *, required: bool) -> str | None:
    """Read the key from the named environment variable at call time; never stored or logged."""
    if not config.api_key_env:
        if required:
            raise ProviderError(
                f"Model config {config.name!r} names no API key variable.", kind=ErrorKind.CONFIG
            )
        return None
    value = os.environ.get(config.api_key_env, "")
    if not value and required:
        raise ProviderError(
            f"The environment variable {config.api_key_env} is not set.", kind=ErrorKind.CONFIG
        )
    return value or None


# SDK clients kept for reuse, per process: (provider, base URL, key digest, timeout) → client
KEPT_CLIENTS = 16
_kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_kept_lock = threading.Lock()


def _forget_kept_clients() -> None:  # a forked child (a prefork worker) must not share its parent's sockets
    global _kept_lock
    _kept.clear()
    _kept_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_kept_clients)


def kept_client(provider: str, endpoint: Endpoint, timeout: float, build: Callable[[], Any]) -> Any:
    """The SDK client for this endpoint, key and timeout, built once per process and then reused by every call
    and thread (the ``openai`` and ``anthropic`` clients are thread-safe). Building one costs about 20 ms of
    CPU (an httpx client and its TLS context), more than the rest of a call's own work at 50 ms latency, and a
    kept client keeps its connections alive. The key is read from the environment on every call, so a changed
    key gets a new client; at most ``KEPT_CLIENTS`` are kept, the least recently used one closed."""
    key_digest = hashlib.sha256((endpoint.api_key or "").encode()).hexdigest()
    slot = (provider, endpoint.base_url, key_digest, timeout)
    with _kept_lock:
        client = _kept.get(slot)
        if client is not None:
            _kept.move_to_end(slot)
            return client
        client = _kept[slot] = build()
        evicted = _kept.popitem(last=False)[1] if len(_kept) > KEPT_CLIENTS else None
    if evicted is not None:
        evicted.close()
    return client


@contextmanager
def stainless_sdk_errors(sdk: ModuleType) -> Iterator[None]:
    """The exceptions of the ``openai`` or ``anthropic`` SDK (the same generator, the same exception names) as
    our ``ProviderError``: kind, HTTP status and Retry-After."""
    try:
        yield
    except sdk.APITimeoutError as exc:
        raise ProviderError(f"timeout: {exc}", kind=ErrorKind.TIMEOUT) from exc
    except sdk.APIConnectionError as exc:
        raise ProviderError(f"connection error: {exc}", kind=ErrorKind.CONNECTION) from exc
    except sdk.APIStatusError as exc:
        raise ProviderError(
            f"HTTP {exc.status_code}: {exc.message}",
            kind=kind_for_status(exc.status_code, str(exc.body or exc.message)),
            status_code=exc.status_code,
            retry_after=retry_after_seconds(exc.response.headers),
        ) from exc
    except sdk.APIResponseValidationError as exc:  # pragma: no cover - strict validation is off
        raise ProviderError(f"invalid response: {exc}", kind=ErrorKind.OTHER, retryable=True) from exc


def provider_for(name: str) -> Provider:
    if name in ("openai", "openai_compatible"):
        from .openai_provider import OpenAIProvider

        return OpenAIProvider()
    if name == "anthropic":
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider()
    if name == "google":
        from .google_provider import GoogleProvider

        return GoogleProvider()
    if name == "simulated":
        from .simulated import SimulatedProvider

        return SimulatedProvider()
    if name == "scripted":
        from .scripted import ScriptedProvider

        return ScriptedProvider()
    if name == "baseline-ocr-nearest":
        from .baseline_ocr import BaselineOCRNearestProvider

        return BaselineOCRNearestProvider()
    raise ProviderError(f"Unknown provider {name!r}.", kind=ErrorKind.CONFIG)
