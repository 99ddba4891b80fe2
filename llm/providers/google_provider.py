"""Google GenAI (Gemini) through the official ``google-genai`` SDK. Its own retries stay off: an
explicit one-attempt ``HttpRetryOptions`` also disables the SDK's implicit connection retries.
Parts: the text, then each image in order; the system text as ``system_instruction``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from ..capabilities import Reasoning, capabilities_for, check_images, check_reasoning, temperature_allowed
from ..errors import ErrorKind, ProviderError, kind_for_status, retry_after_seconds
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage
from . import endpoint_for

REFUSAL_REASONS = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}


def build_config(request: LLMRequest, config: ProviderConfig) -> gtypes.GenerateContentConfig:
    caps = capabilities_for("google", config.model)
    reasoning = check_reasoning(caps, config.reasoning)
    check_images(caps, len(request.images), [len(i.data) for i in request.images])
    kwargs: dict[str, Any] = {}
    if request.system:
        kwargs["system_instruction"] = request.system
    if config.max_output_tokens:
        kwargs["max_output_tokens"] = config.max_output_tokens
    if config.temperature is not None and temperature_allowed(caps, reasoning):
        kwargs["temperature"] = config.temperature
    if reasoning:
        thinking: dict[str, Any] = {}
        if "budget_tokens" in reasoning:
            thinking["thinking_budget"] = int(reasoning["budget_tokens"])
        if "level" in reasoning and caps.reasoning == Reasoning.GEMINI_LEVEL:
            thinking["thinking_level"] = str(reasoning["level"]).upper()
        if "include_thoughts" in reasoning:
            thinking["include_thoughts"] = bool(reasoning["include_thoughts"])
        kwargs["thinking_config"] = gtypes.ThinkingConfig(**thinking)
    return gtypes.GenerateContentConfig(**kwargs)


def client_for(config: ProviderConfig, http_client: Any = None) -> genai.Client:
    """An SDK client for ``config`` after the endpoint policy check: a one-attempt retry policy and,
    unless the caller brings its own HTTP client, one that never follows a redirect (it could lead to
    an address the endpoint check never saw)."""
    endpoint = endpoint_for(config)
    options: dict[str, Any] = {
        "retry_options": gtypes.HttpRetryOptions(attempts=1),
        "timeout": int(config.timeout_seconds * 1000),
    }
    if endpoint.base_url:
        options["base_url"] = endpoint.base_url
    if http_client is not None:
        options["httpx_client"] = http_client
    else:  # never follow a redirect: it could lead to an address the endpoint check never saw
        options["client_args"] = {"follow_redirects": False}
    return genai.Client(api_key=endpoint.api_key, http_options=gtypes.HttpOptions(**options))


@contextmanager
def sdk_errors() -> Iterator[None]:
    """The SDK's and the HTTP layer's exceptions as our ``ProviderError`` (kind, status, Retry-After)."""
    try:
        yield
    except genai_errors.APIError as exc:
        headers = getattr(getattr(exc, "response", None), "headers", None)
        message = f"HTTP {exc.code} {exc.status or ''}: {exc.message or ''}".strip()
        raise ProviderError(
            message,
            kind=kind_for_status(int(exc.code or 0), message),
            status_code=int(exc.code or 0) or None,
            retry_after=retry_after_seconds(headers),
        ) from exc
    except httpx2.TimeoutException as exc:
        raise ProviderError(f"timeout: {exc}", kind=ErrorKind.TIMEOUT) from exc
    except httpx2.TransportError as exc:
        raise ProviderError(f"connection error: {exc}", kind=ErrorKind.CONNECTION) from exc


def contents_for(request: LLMRequest) -> list[gtypes.Content]:
    """The user turn: the text, then each image in order."""
    parts = [gtypes.Part.from_text(text=request.user)]
    parts += [gtypes.Part.from_bytes(data=image.data, mime_type=image.media_type) for image in request.images]
    return [gtypes.Content(role="user", parts=parts)]


def reply_from_response(response: gtypes.GenerateContentResponse) -> ProviderReply:
    """A response (a direct reply or one inlined batch response) normalised; thought parts are not the answer."""
    raw = response.model_dump(mode="json", exclude_none=True)
    candidate = response.candidates[0] if response.candidates else None
    block = getattr(getattr(response, "prompt_feedback", None), "block_reason", None)
    reason = str(getattr(candidate, "finish_reason", None) or "").rsplit(".", 1)[-1].upper()
    if block or reason in REFUSAL_REASONS:
        finish = "refusal"
    elif reason == "MAX_TOKENS":
        finish = "length"
    elif reason in ("STOP", ""):
        finish = "stop"
    else:
        finish = "other"
    text = ""
    if candidate is not None and candidate.content is not None and candidate.content.parts:
        text = "".join(p.text for p in candidate.content.parts if p.text and not getattr(p, "thought", False))
    meta = response.usage_metadata
    usage = (
        Usage(
            input_tokens=int(getattr(meta, "prompt_token_count", 0) or 0),
            output_tokens=int(getattr(meta, "candidates_token_count", 0) or 0),
            reasoning_tokens=int(getattr(meta, "thoughts_token_count", 0) or 0),
        )
        if meta
        else Usage()
    )
    return ProviderReply(text=text, finish_reason=finish, usage=usage, raw=raw)


class GoogleProvider:
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        client = client_for(config, http_client)
        generate_config = build_config(request, config)
        with sdk_errors():
            response = client.models.generate_content(
                model=config.model, contents=contents_for(request), config=generate_config
            )
        return reply_from_response(response)
