"""The JSON schemas of a model configuration's stored settings, shared by every API that renders them (the
model configurations' own, and a draft's request record)."""

from __future__ import annotations

from typing import Any

from physalign_site.api import JSON_MAP

# ``reasoning``: the keys ``llm.capabilities.check_reasoning`` knows; which of them a model takes depends on
# its family (the service checks), a null value meaning the provider's default.
REASONING_KEYS: dict[str, tuple[type, dict[str, Any]]] = {
    "effort": (str, {"type": "string", "description": "OpenAI / Anthropic adaptive: e.g. low, medium, high"}),
    "budget_tokens": (int, {"type": "integer", "description": "Anthropic thinking budget (≥ 1024), Gemini"}),
    "level": (str, {"type": "string", "description": "Gemini 3 thinking level"}),
    "include_thoughts": (bool, {"type": "boolean", "description": "Gemini: return thought summaries"}),
}
REASONING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Reasoning settings, checked against the model family ({} for the provider's default).",
    "properties": {key: {**schema, "nullable": True} for key, (_, schema) in REASONING_KEYS.items()},
    "additionalProperties": False,
}
NUMBER = {"type": "number"}
EXTRA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Provider-specific settings as stored ({} for none); the keys the providers read are "
    "listed, a provider may read others.",
    "properties": {
        "seed": {"type": "integer", "description": "simulated: the seed"},
        "latency_ms": {
            "description": "simulated: a latency, or [low, high] to draw from",
            "oneOf": [NUMBER, {"type": "array", "items": NUMBER, "minItems": 2, "maxItems": 2}],
        },
        "faults": {
            "type": "object",
            "description": "simulated: probability per fault (429, 500, timeout, malformed, refusal, truncation)",
            "additionalProperties": NUMBER,
        },
        "fault_sequence": {
            "type": "array",
            "description": 'simulated: the fault of each attempt, e.g. ["429", "429"]',
            "items": {"type": "string", "nullable": True},
        },
        "retry_after": {**NUMBER, "description": "simulated: seconds sent with a 429"},
        "profile": {
            "type": "object",
            "description": "simulated: a skill profile, probabilities in [0, 1]",
            "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "responses": {
            "type": "array",
            "description": "scripted: canned outputs by request (match or fingerprint → outputs)",
            "items": JSON_MAP,
        },
        "default": {
            "description": "scripted: the output for any other request",
            "oneOf": [{"type": "string"}, JSON_MAP],
        },
        "rate_window_seconds": NUMBER,
        "backoff_base_seconds": NUMBER,
        "batch": {"type": "boolean", "description": "false: never through the provider's batch API"},
        "batch_max_items": {"type": "integer"},
        "batch_max_bytes": {"type": "integer"},
        "batch_price_factor": {**NUMBER, "description": "the batch discount, in (0, 1]"},
    },
    "additionalProperties": {},
}
