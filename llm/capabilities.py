"""What each model family accepts, as data. Providers build their payloads from this table.

Known facts encoded here: OpenAI reasoning models (o-series, gpt-5) reject ``max_tokens`` and any
non-default temperature and take ``reasoning_effort``; Anthropic has two thinking forms — a token
budget (``thinking: {type: enabled, budget_tokens}``) up to the 4.5 models, adaptive thinking plus
``output_config.effort`` from 4.6 on — and thinking forbids a custom temperature; Gemini 2.5 takes
``thinking_budget`` and Gemini 3 ``thinking_level``, and the two cannot be combined. Unknown models
get safe defaults: the provider's plain token cap, no reasoning controls, temperature allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import ErrorKind, ProviderError


class Reasoning:
    NONE = "none"
    OPENAI_EFFORT = "openai_effort"  # reasoning_effort: minimal|low|medium|high
    ANTHROPIC_BUDGET = "anthropic_budget"  # thinking={type: enabled, budget_tokens>=1024}
    ANTHROPIC_ADAPTIVE = "anthropic_adaptive"  # thinking={type: adaptive}, output_config={effort}
    GEMINI_BUDGET = "gemini_budget"  # thinking_config.thinking_budget (int, -1 = dynamic)
    GEMINI_LEVEL = "gemini_level"  # thinking_config.thinking_level (low|high…)


@dataclass(frozen=True)
class Capabilities:
    family: str
    token_cap_param: str  # max_tokens | max_completion_tokens | max_output_tokens
    reasoning: str = Reasoning.NONE
    temperature: bool = True  # False: only the default temperature is accepted
    temperature_with_reasoning: bool = True
    images: bool = True
    max_images: int | None = None
    max_image_bytes: int | None = None
    default_max_output_tokens: int | None = None  # sent when the config has none (Anthropic requires one)
    efforts: tuple[str, ...] = ()


# (provider, model-name regex, capabilities) — first match wins.
TABLE: tuple[tuple[str, str, Capabilities], ...] = (
    (
        "openai",
        r"^(o\d|gpt-5)",
        Capabilities(
            "openai-reasoning",
            "max_completion_tokens",
            Reasoning.OPENAI_EFFORT,
            temperature=False,
            temperature_with_reasoning=False,
            max_images=500,
            max_image_bytes=50 * 2**20,
            efforts=("minimal", "low", "medium", "high"),
        ),
    ),
    (
        "openai",
        r"^(gpt-4o|gpt-4\.1|chatgpt-4o)",
        Capabilities("openai-gpt4", "max_tokens", max_images=500, max_image_bytes=50 * 2**20),
    ),
    (
        "anthropic",
        r"^claude-(opus|sonnet|haiku)-4-[6-9]|^claude-(opus|sonnet|haiku)-[5-9]",
        Capabilities(
            "anthropic-adaptive",
            "max_tokens",
            Reasoning.ANTHROPIC_ADAPTIVE,
            temperature_with_reasoning=False,
            max_images=100,
            max_image_bytes=5 * 2**20,
            default_max_output_tokens=8192,
            efforts=("low", "medium", "high", "xhigh", "max"),
        ),
    ),
    (
        "anthropic",
        r"^claude-(3-7|(opus|sonnet|haiku)-4)",
        Capabilities(
            "anthropic-budget",
            "max_tokens",
            Reasoning.ANTHROPIC_BUDGET,
            temperature_with_reasoning=False,
            max_images=100,
            max_image_bytes=5 * 2**20,
            default_max_output_tokens=8192,
        ),
    ),
    (
        "anthropic",
        r"^claude-3",
        Capabilities(
            "anthropic-3",
            "max_tokens",
            max_images=100,
            max_image_bytes=5 * 2**20,
            default_max_output_tokens=4096,
        ),
    ),
    (
        "google",
        r"^gemini-3",
        Capabilities(
            "gemini-3",
            "max_output_tokens",
            Reasoning.GEMINI_LEVEL,
            max_images=3000,
            max_image_bytes=20 * 2**20,
            efforts=("minimal", "low", "medium", "high"),
        ),
    ),
    (
        "google",
        r"^gemini-2\.5",
        Capabilities(
            "gemini-2.5",
            "max_output_tokens",
            Reasoning.GEMINI_BUDGET,
            max_images=3000,
            max_image_bytes=20 * 2**20,
        ),
    ),
)

DEFAULTS: dict[str, Capabilities] = {
    "openai": Capabilities("openai-unknown", "max_completion_tokens"),
    "openai_compatible": Capabilities("openai-compatible", "max_tokens"),
    "anthropic": Capabilities("anthropic-unknown", "max_tokens", default_max_output_tokens=4096),
    "google": Capabilities("gemini-unknown", "max_output_tokens"),
}
OFFLINE = Capabilities("offline", "max_output_tokens")


def capabilities_for(provider: str, model: str) -> Capabilities:
    # An OpenAI-compatible server hosting an OpenAI-named model still speaks the reasoning rules.
    lookup = "openai" if provider == "openai_compatible" else provider
    for table_provider, pattern, caps in TABLE:
        if table_provider == lookup and re.search(pattern, model):
            return caps
    return DEFAULTS.get(provider, OFFLINE)


def _config_error(message: str) -> ProviderError:
    return ProviderError(message, kind=ErrorKind.CONFIG, retryable=False)


def check_reasoning(caps: Capabilities, reasoning: dict[str, Any]) -> dict[str, Any]:
    """Validate a config's ``reasoning`` against the family. Returns the normalised settings.

    Accepted keys: ``effort`` (OpenAI / Anthropic adaptive), ``budget_tokens`` (Anthropic budget,
    Gemini 2.5 as thinking_budget), ``level`` (Gemini 3). ``{}`` means provider default.
    """
    reasoning = {k: v for k, v in (reasoning or {}).items() if v not in (None, "")}
    if not reasoning:
        return {}
    if caps.reasoning == Reasoning.NONE:
        raise _config_error(f"The model family {caps.family} has no reasoning controls; clear 'reasoning'.")
    if caps.reasoning == Reasoning.GEMINI_LEVEL and "budget_tokens" in reasoning and "level" in reasoning:
        raise _config_error("Gemini thinking_budget and thinking_level cannot be combined; choose one.")
    if caps.reasoning in (Reasoning.GEMINI_BUDGET, Reasoning.GEMINI_LEVEL) and "effort" in reasoning:
        reasoning.setdefault("level", reasoning.pop("effort"))
    allowed = {
        Reasoning.OPENAI_EFFORT: {"effort"},
        Reasoning.ANTHROPIC_BUDGET: {"budget_tokens"},
        Reasoning.ANTHROPIC_ADAPTIVE: {"effort"},
        Reasoning.GEMINI_BUDGET: {"budget_tokens", "include_thoughts"},
        Reasoning.GEMINI_LEVEL: {"level", "budget_tokens", "include_thoughts"},
    }[caps.reasoning]
    unknown = set(reasoning) - allowed
    if unknown:
        raise _config_error(
            f"{caps.family} does not accept reasoning keys {sorted(unknown)}; use {sorted(allowed)}."
        )
    if "effort" in reasoning and caps.efforts and reasoning["effort"] not in caps.efforts:
        raise _config_error(f"{caps.family} effort must be one of {list(caps.efforts)}.")
    if caps.reasoning == Reasoning.ANTHROPIC_BUDGET and int(reasoning["budget_tokens"]) < 1024:
        raise _config_error("Anthropic thinking budget_tokens must be at least 1024.")
    return reasoning


def token_cap(caps: Capabilities, max_output_tokens: int | None) -> dict[str, int]:
    value = max_output_tokens or caps.default_max_output_tokens
    return {caps.token_cap_param: value} if value else {}


def temperature_allowed(caps: Capabilities, reasoning: dict[str, Any]) -> bool:
    if not caps.temperature:
        return False
    return caps.temperature_with_reasoning or not reasoning


def check_images(caps: Capabilities, count: int, sizes: list[int]) -> None:
    if count and not caps.images:
        raise _config_error(f"{caps.family} does not accept images.")
    if caps.max_images is not None and count > caps.max_images:
        raise _config_error(
            f"{caps.family} accepts at most {caps.max_images} images; the request has {count}."
        )
    if caps.max_image_bytes is not None and any(size > caps.max_image_bytes for size in sizes):
        raise _config_error(f"An image exceeds {caps.family}'s limit of {caps.max_image_bytes} bytes.")
