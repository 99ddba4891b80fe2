"""Capability table, error classification, Retry-After, cost, and the offline providers."""

from __future__ import annotations

import io
import json
import random
from decimal import Decimal

import pytest
from PIL import Image, ImageDraw, ImageFont

from llm import ErrorKind, ImageInput, LLMRequest, OutputStatus, ProviderConfig, Usage, generate
from llm.capabilities import Reasoning, capabilities_for, check_reasoning
from llm.client import Backoff
from llm.cost import usage_cost
from llm.errors import ProviderError, classify, retry_after_seconds


@pytest.mark.parametrize(
    ("provider", "model", "cap", "reasoning"),
    [
        ("openai", "o3-mini", "max_completion_tokens", Reasoning.OPENAI_EFFORT),
        ("openai", "gpt-5", "max_completion_tokens", Reasoning.OPENAI_EFFORT),
        ("openai", "gpt-4o", "max_tokens", Reasoning.NONE),
        ("openai", "some-new-model", "max_completion_tokens", Reasoning.NONE),
        ("openai_compatible", "llava-13b", "max_tokens", Reasoning.NONE),
        ("anthropic", "claude-sonnet-4-5", "max_tokens", Reasoning.ANTHROPIC_BUDGET),
        ("anthropic", "claude-opus-4-6", "max_tokens", Reasoning.ANTHROPIC_ADAPTIVE),
        ("google", "gemini-2.5-pro", "max_output_tokens", Reasoning.GEMINI_BUDGET),
        ("google", "gemini-3-flash", "max_output_tokens", Reasoning.GEMINI_LEVEL),
    ],
)
def test_capability_table(provider, model, cap, reasoning):
    caps = capabilities_for(provider, model)
    assert (caps.token_cap_param, caps.reasoning) == (cap, reasoning)


def test_unknown_family_rejects_reasoning_and_gemini_forms_do_not_combine():
    with pytest.raises(ProviderError):
        check_reasoning(capabilities_for("openai", "gpt-4o"), {"effort": "low"})
    with pytest.raises(ProviderError, match="cannot be combined"):
        check_reasoning(capabilities_for("google", "gemini-3-pro"), {"budget_tokens": 1, "level": "low"})
    with pytest.raises(ProviderError, match="at least 1024"):
        check_reasoning(capabilities_for("anthropic", "claude-sonnet-4"), {"budget_tokens": 100})


@pytest.mark.parametrize(
    ("kind", "status", "message", "retryable"),
    [
        (ErrorKind.CONNECTION, None, "", True),
        (ErrorKind.TIMEOUT, None, "", True),
        (ErrorKind.OTHER, 408, "", True),
        (ErrorKind.OTHER, 409, "", True),
        (ErrorKind.OTHER, 429, "", True),
        (ErrorKind.OTHER, 500, "", True),
        (ErrorKind.OTHER, 529, "", True),
        (ErrorKind.OTHER, None, "Overloaded", True),
        (ErrorKind.OTHER, 400, "", False),
        (ErrorKind.OTHER, 401, "", False),
        (ErrorKind.OTHER, 403, "", False),
        (ErrorKind.OTHER, 404, "", False),
        (ErrorKind.OTHER, 422, "", False),
        (ErrorKind.CONTENT_FILTER, 400, "", False),
    ],
)
def test_classification(kind, status, message, retryable):
    assert classify(kind=kind, status_code=status, message=message) is retryable


def test_retry_after_forms_and_backoff_floor():
    assert retry_after_seconds({"Retry-After": "12"}) == 12.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    rng = random.Random(1)
    delays = [Backoff().delay(n, None, rng) for n in (1, 2, 3)]
    assert 0.5 <= delays[0] <= 1 and 1 <= delays[1] <= 2 and 2 <= delays[2] <= 4
    assert Backoff().delay(1, 20.0, rng) == 20.0


def test_cost_bills_reasoning_as_output():
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000, reasoning_tokens=500_000)
    assert usage_cost(usage, price_in_per_mtok=Decimal("3"), price_out_per_mtok=Decimal("15")) == Decimal(
        "18.000000"
    )


SIM = ProviderConfig(name="sim", provider="simulated", model="sim", extra={"seed": 7})
PROBE_USER = (
    '[Candidates]\nE1: img_0 {}\nE2: img_0 {}\nE3: img_0 {}\n[Output format]\n{"owner": "<candidate ID>"}'
)


def test_simulated_is_deterministic_and_seedable():
    request = LLMRequest(system="", user=PROBE_USER)
    first, second = generate(request, SIM), generate(request, SIM)
    assert first.text == second.text and json.loads(first.text)["owner"] in {"E1", "E2", "E3"}
    outputs = {
        generate(request, ProviderConfig(name="s", provider="simulated", model="s", extra={"seed": s})).text
        for s in range(12)
    }
    assert len(outputs) > 1


@pytest.mark.parametrize(
    ("fault", "status", "attempts"),
    [
        ("malformed", OutputStatus.COMPLETED, 1),
        ("refusal", OutputStatus.REFUSAL, 1),
        ("truncation", OutputStatus.TRUNCATED, 1),
        ("400", OutputStatus.FAILED, 1),
        ("timeout", OutputStatus.FAILED, 3),
        ("503", OutputStatus.FAILED, 3),
    ],
)
def test_simulated_faults(fault, status, attempts):
    config = ProviderConfig(name="f", provider="simulated", model="s", extra={"fault_sequence": [fault] * 3})
    result = generate(LLMRequest(system="", user=PROBE_USER), config, sleep=lambda s: None)
    assert result.status == status and len(result.attempts) == attempts
    if fault == "malformed":
        with pytest.raises(ValueError):
            json.loads(result.text)


def test_simulated_fault_rates_are_seeded():
    config = ProviderConfig(
        name="r", provider="simulated", model="s", max_retries=0, extra={"seed": 3, "faults": {"429": 0.3}}
    )
    results = [generate(LLMRequest(system="", user=f"q{n}"), config) for n in range(200)]
    failures = sum(r.status == OutputStatus.FAILED for r in results)
    assert 40 <= failures <= 80
    assert failures == sum(
        generate(LLMRequest(system="", user=f"q{n}"), config).status == OutputStatus.FAILED
        for n in range(200)
    )


def test_scripted_outputs_by_match_and_attempt():
    config = ProviderConfig(
        name="sc",
        provider="scripted",
        model="s",
        extra={
            "responses": [{"match": "alpha", "outputs": [{"error": 429, "retry_after": 0}, "ok-alpha"]}],
            "default": {"text": "{", "finish_reason": "length"},
        },
    )
    result = generate(LLMRequest(system="", user="alpha?"), config, sleep=lambda s: None)
    assert result.text == "ok-alpha" and len(result.attempts) == 2
    assert generate(LLMRequest(system="", user="beta"), config).status == OutputStatus.TRUNCATED


def _diagram() -> bytes:
    img = Image.new("RGB", (400, 300), "white")
    draw = ImageDraw.Draw(img)
    draw.text((40, 40), "m", fill="black", font=ImageFont.load_default(size=40))
    draw.rectangle((200, 150, 260, 200), outline="black")
    buffer = io.BytesIO()
    img.save(buffer, "PNG")
    return buffer.getvalue()


BASELINE_USER = """[Original statement]
A block of mass m.
[Original answer options]
[]
[Images and locator views]
img_0: original source image
[Text locator views]
[Evidence locations]
R1: img_0 {"bbox_1000": [75, 110, 200, 330], "type": "bbox"}
[Given reference entities]
[Candidates]
E1: img_0 {"bbox_1000": [500, 500, 650, 666], "type": "bbox"}
E2: img_0 {"bbox_1000": [100, 300, 300, 400], "type": "bbox"}
[Local question]
Transcribe the visible text specified at R1 exactly. Which candidate physical entity directly owns the quantity specified at R1?
[Selection rule]
Return exactly one candidate ID.
[Local reading information]
None.
[Output format]
{"read": "<transcription>", "owner": "<candidate ID>"}"""


def test_baseline_ocr_nearest_reads_anchor_and_picks_nearest_candidate():
    config = ProviderConfig(name="b", provider="baseline-ocr-nearest", model="tesseract")
    result = generate(
        LLMRequest(system="ignored", user=BASELINE_USER, images=(ImageInput(_diagram()),)), config
    )
    assert result.status == OutputStatus.COMPLETED, result.error
    assert json.loads(result.text) == {"read": "m", "owner": "E2"}
    assert result.raw["rule"] == "nearest_region"


def test_baseline_without_visual_anchor_answers_first_candidate():
    user = BASELINE_USER.replace(
        'R1: img_0 {"bbox_1000": [75, 110, 200, 330], "type": "bbox"}',
        "R1 (stem): A block of [R1]mass m[/R1].",
    ).replace('{"read": "<transcription>", "owner": "<candidate ID>"}', '{"owner": "<candidate ID>"}')
    config = ProviderConfig(name="b", provider="baseline-ocr-nearest", model="tesseract")
    result = generate(LLMRequest(system="", user=user, images=(ImageInput(_diagram()),)), config)
    assert json.loads(result.text) == {"owner": "E1"} and result.raw["rule"] == "not_applicable"
