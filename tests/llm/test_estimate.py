"""The cost estimate's rules (``llm.estimate``): text at 4 characters a token, each provider's image rule."""

from __future__ import annotations

import io
import math
from decimal import Decimal

import pytest
from PIL import Image

from llm import ImageInput, LLMRequest, ProviderConfig
from llm.estimate import (
    DEFAULT_OUTPUT_CAP,
    image_size,
    image_tokens,
    output_cap,
    request_estimate,
    text_tokens,
)


def _encoded(fmt: str, size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, "white").save(out, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF"])
def test_image_sizes_are_read_from_the_header(fmt):
    assert image_size(_encoded(fmt, (640, 333))) == (640, 333)


def test_unreadable_images_have_no_size():
    assert image_size(b"not an image") is None
    assert image_size(b"\xff\xd8\xff") is None


def test_provider_image_rules():
    assert image_tokens("openai", 1024, 1024) == 765  # OpenAI's documented example: 4 tiles
    assert image_tokens("openai", 2048, 4096) == 1105  # → 1024 × 2048 → 768 × 1536: 6 tiles
    assert image_tokens("openai_compatible", 100, 100) == 255
    assert image_tokens("anthropic", 1000, 1000) == 1334  # ceil(1e6 / 750)
    assert image_tokens("anthropic", 3136, 1568) == math.ceil(1568 * 784 / 750)  # long edge to 1568
    assert image_tokens("google", 384, 384) == 258
    assert image_tokens("google", 1000, 500) == 258 * 2


def test_a_request_estimate_by_hand():
    config = ProviderConfig(
        name="x",
        provider="anthropic",
        model="claude-x",
        max_output_tokens=1000,
        price_in_per_mtok=Decimal(3),
        price_out_per_mtok=Decimal(15),
    )
    request = LLMRequest(system="s" * 10, user="u" * 401, images=(ImageInput(_encoded("PNG", (750, 100))),))
    estimate = request_estimate(request, config)
    assert text_tokens("s" * 10) == 3 and text_tokens("u" * 401) == 101
    assert estimate.input_tokens == 3 + 101 + 100 and estimate.output_tokens == 1000
    assert estimate.cost_usd == Decimal("0.015612")  # (204 × 3 + 1000 × 15) / 1e6
    unsent = request_estimate(request, ProviderConfig(**{**config.__dict__, "send_images": False}))
    assert unsent.input_tokens == 104
    unknown = request_estimate(
        LLMRequest(system="", user="", images=(ImageInput(b"?"),)),
        ProviderConfig(name="y", provider="google", model="g"),
    )
    assert unknown.input_tokens == 258 * 4  # an unreadable image counts as 1024 × 1024
    assert output_cap(ProviderConfig(name="z", provider="scripted", model="s")) == DEFAULT_OUTPUT_CAP
