"""Anthropic Messages API through the official SDK. Images go as base64 blocks before the text
(Anthropic's recommendation), in order. Thinking uses the family's form (budget or adaptive)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import anthropic
from anthropic.types import Message, TextBlock

from ..capabilities import (
    Reasoning,
    capabilities_for,
    check_images,
    check_reasoning,
    temperature_allowed,
    token_cap,
)
from ..types import LLMRequest, ProviderConfig, ProviderReply, Usage
from . import endpoint_for, kept_client, stainless_sdk_errors

FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "refusal": "refusal",
    "model_context_window_exceeded": "length",
    "pause_turn": "other",
    "tool_use": "other",
}


def build_payload(request: LLMRequest, config: ProviderConfig) -> dict[str, Any]:
    caps = capabilities_for("anthropic", config.model)
    reasoning = check_reasoning(caps, config.reasoning)
    check_images(caps, len(request.images), [len(i.data) for i in request.images])
    content: list[dict[str, Any]] = [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": image.media_type,
                "data": base64.b64encode(image.data).decode("ascii"),
            },
        }
        for image in request.images
    ]
    content.append({"type": "text", "text": request.user})
    payload: dict[str, Any] = {
        "model": config.model,
        "messages": [{"role": "user", "content": content}],
        **token_cap(caps, config.max_output_tokens),
    }
    if request.system:
        payload["system"] = request.system
    if caps.reasoning == Reasoning.ANTHROPIC_BUDGET and reasoning:
        payload["thinking"] = {"type": "enabled", "budget_tokens": int(reasoning["budget_tokens"])}
    elif caps.reasoning == Reasoning.ANTHROPIC_ADAPTIVE and reasoning:
        payload["thinking"] = {"type": "adaptive"}
        payload["output_config"] = {"effort": reasoning["effort"]}
    if config.temperature is not None and temperature_allowed(caps, reasoning):
        payload["temperature"] = config.temperature
    return payload


@contextmanager
def open_client(config: ProviderConfig, http_client: Any = None) -> Iterator[anthropic.Anthropic]:
    """An SDK client for ``config`` after the endpoint policy check (on every call): SDK retries off and, unless
    the caller brings its own HTTP client, one that never follows a redirect (it could lead to an address the
    endpoint check never saw), kept for the next call to the same endpoint (``kept_client``)."""
    endpoint = endpoint_for(config)

    def build(http: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            max_retries=0,
            timeout=config.timeout_seconds,
            http_client=http,
        )

    if http_client is not None:
        yield build(http_client)
        return
    yield kept_client(
        "anthropic",
        endpoint,
        config.timeout_seconds,
        lambda: build(anthropic.DefaultHttpxClient(follow_redirects=False)),
    )


def sdk_errors() -> AbstractContextManager[None]:
    """The SDK's exceptions as our ``ProviderError`` (kind, status, Retry-After)."""
    return stainless_sdk_errors(anthropic)


def reply_from_message(message: Message) -> ProviderReply:
    """A message (a direct reply or one succeeded batch result) normalised; thinking blocks are not the answer."""
    text = "".join(block.text for block in message.content if isinstance(block, TextBlock))
    finish = FINISH.get(message.stop_reason or "", "other")
    usage = Usage(
        input_tokens=message.usage.input_tokens or 0, output_tokens=message.usage.output_tokens or 0
    )
    return ProviderReply(text=text, finish_reason=finish, usage=usage, raw=message.model_dump(mode="json"))


class AnthropicProvider:
    def call(
        self, request: LLMRequest, config: ProviderConfig, *, http_client: Any = None, attempt: int = 1
    ) -> ProviderReply:
        with open_client(config, http_client) as client:
            payload = build_payload(request, config)
            with sdk_errors():
                message = client.messages.create(**payload)
        return reply_from_message(message)
