"""OpenAI and any OpenAI-compatible server (by ``base_url``), through the official SDK's Chat
Completions API, which both speak. Images go as ``image_url`` data URLs after the text, in order."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from ..capabilities import capabilities_for, check_images, check_reasoning, temperature_allowed, token_cap
from ..errors import ErrorKind, ProviderError
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage
from . import endpoint_for, kept_client, stainless_sdk_errors

FINISH = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "other",
    "function_call": "other",
}


def build_payload(request: LLMRequest, config: ProviderConfig) -> dict[str, Any]:
    caps = capabilities_for(config.provider, config.model)
    reasoning = check_reasoning(caps, config.reasoning)
    check_images(caps, len(request.images), [len(i.data) for i in request.images])
    content: list[dict[str, Any]] = [{"type": "text", "text": request.user}]
    for image in request.images:
        url = f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"
        content.append({"type": "image_url", "image_url": {"url": url}})
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.append({"role": "user", "content": content})
    payload: dict[str, Any] = {
        "model": config.model,
        "messages": messages,
        **token_cap(caps, config.max_output_tokens),
    }
    if config.temperature is not None and temperature_allowed(caps, reasoning):
        payload["temperature"] = config.temperature
    if "effort" in reasoning:
        payload["reasoning_effort"] = reasoning["effort"]
    if "seed" in config.extra:
        payload["seed"] = config.extra["seed"]
    return payload


@contextmanager
def open_client(config: ProviderConfig, http_client: Any = None) -> Iterator[openai.OpenAI]:
    """An SDK client for ``config`` after the endpoint policy check (on every call): SDK retries off and, unless
    the caller brings its own HTTP client, one that never follows a redirect (it could lead to an address the
    endpoint check never saw), kept for the next call to the same endpoint (``kept_client``)."""
    compatible = config.provider == "openai_compatible"
    endpoint = endpoint_for(config, key_required=not compatible)
    key = endpoint.api_key or "not-needed"  # local servers often need none

    def build(http: Any) -> openai.OpenAI:
        return openai.OpenAI(
            api_key=key,
            base_url=endpoint.base_url,
            max_retries=0,
            timeout=config.timeout_seconds,
            http_client=http,
        )

    if http_client is not None:
        yield build(http_client)
        return
    yield kept_client(
        "openai",
        endpoint,
        config.timeout_seconds,
        lambda: build(openai.DefaultHttpxClient(follow_redirects=False)),
    )


def sdk_errors() -> AbstractContextManager[None]:
    """The SDK's exceptions as our ``ProviderError`` (kind, status, Retry-After)."""
    return stainless_sdk_errors(openai)


def reply_from_completion(completion: ChatCompletion) -> ProviderReply:
    """A chat completion (a direct reply or one line of a batch's output) normalised."""
    if not completion.choices:
        raise ProviderError("The response has no choices.", kind=ErrorKind.SERVER, retryable=True)
    choice = completion.choices[0]
    message = choice.message
    finish = FINISH.get(choice.finish_reason or "", "other") if choice.finish_reason else "stop"
    if getattr(message, "refusal", None):
        finish = "refusal"
    text = message.content or (message.refusal if finish == "refusal" else "") or ""
    usage = Usage()
    if completion.usage is not None:
        details = getattr(completion.usage, "completion_tokens_details", None)
        reasoning = int(getattr(details, "reasoning_tokens", 0) or 0) if details is not None else 0
        usage = Usage(
            input_tokens=completion.usage.prompt_tokens or 0,
            output_tokens=max((completion.usage.completion_tokens or 0) - reasoning, 0),
            reasoning_tokens=reasoning,
        )
    return ProviderReply(text=text, finish_reason=finish, usage=usage, raw=completion.model_dump(mode="json"))


class OpenAIProvider:
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        with open_client(config, http_client) as client:
            payload = build_payload(request, config)
            with sdk_errors():
                completion = client.chat.completions.create(**payload)
        return reply_from_completion(completion)
