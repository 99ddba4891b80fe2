"""A documented approximation of what a call will cost before it is made (pure, no Django, no network).

Input tokens: the request's text (system + user) at ``CHARS_PER_TOKEN`` characters a token, rounded up, plus
each image by its provider's published rule for its pixel size:

* ``anthropic``: the image is scaled down to fit ``1568`` px on its long edge, then ``ceil(w × h / 750)``.
* ``google``: ``258`` tokens when both sides are at most ``384`` px, else ``258`` per ``768 × 768`` tile.
* ``openai``, ``openai_compatible`` and every other provider (detail "high"): scaled to fit ``2048 × 2048``,
  then its short side to at most ``768`` px; ``85 + 170`` per ``512 × 512`` tile.

An image whose size cannot be read counts as a 1024 × 1024 image. Images are not counted when the config does
not send them. Output tokens: the output cap sent (the config's ``max_output_tokens``, else the model family's
default, else ``DEFAULT_OUTPUT_CAP``) — an upper bound for a call that ends normally; reasoning tokens beyond
it are not estimated. Dollars: ``llm.cost.usage_cost`` of those tokens at the config's prices.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from .capabilities import capabilities_for
from .cost import usage_cost
from .types import LLMRequest, ProviderConfig, Usage

CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_CAP = 4096
UNKNOWN_SIZE = (1024, 1024)


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def image_tokens(provider: str, width: int, height: int) -> int:
    """One image's input tokens by its provider's rule (module docstring)."""
    width, height = max(int(width), 1), max(int(height), 1)
    if provider == "anthropic":
        scale = min(1.0, 1568 / max(width, height))
        return math.ceil(round(width * scale) * round(height * scale) / 750)
    if provider == "google":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF or JPEG header; None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    if data[:2] == b"\xff\xd8":
        at = 2
        while at + 9 < len(data) and data[at] == 0xFF:
            marker, length = data[at + 1], struct.unpack(">H", data[at + 2 : at + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                height, width = struct.unpack(">HH", data[at + 5 : at + 9])
                return int(width), int(height)
            at += 2 + length
    return None


def output_cap(config: ProviderConfig) -> int:
    """The output tokens a call may bill at most (what the adapter sends as its cap)."""
    default = capabilities_for(config.provider, config.model).default_max_output_tokens
    return int(config.max_output_tokens or default or DEFAULT_OUTPUT_CAP)


@dataclass(frozen=True)
class CallEstimate:
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal


def call_estimate(
    config: ProviderConfig, texts: Iterable[str], image_sizes: Iterable[tuple[int, int] | None]
) -> CallEstimate:
    """The estimate of one call with these texts and images (sizes; None: unknown)."""
    tokens = sum(text_tokens(t) for t in texts)
    if config.send_images:
        tokens += sum(image_tokens(config.provider, *(size or UNKNOWN_SIZE)) for size in image_sizes)
    cap = output_cap(config)
    cost = usage_cost(
        Usage(input_tokens=tokens, output_tokens=cap),
        price_in_per_mtok=config.price_in_per_mtok,
        price_out_per_mtok=config.price_out_per_mtok,
    )
    return CallEstimate(tokens, cap, cost)


def request_estimate(request: LLMRequest, config: ProviderConfig) -> CallEstimate:
    """``call_estimate`` of a built request (image sizes read from the bytes' headers)."""
    return call_estimate(config, (request.system, request.user), (image_size(i.data) for i in request.images))
