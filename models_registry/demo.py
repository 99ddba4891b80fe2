"""The demo's offline model configurations: drafting, evaluation, solving and debate work with no API keys.

Besides the drafter (``simulated``) and the OCR baseline, the demo has four simulated models with
different skill profiles (``llm.providers.simulated.SkillProfile``), drawn by a seeded generator from
four archetypes, so evaluation dashboards and solving runs show real differences:

- ``sim-careful``: reads and grounds well, barely needs the +GT packet, rarely breaks format;
- ``sim-packet-reliant``: good with the +GT packet, much worse from the image alone;
- ``sim-first-option``: prefers the first listed candidate / option A about half of the time;
- ``sim-sloppy``: weak, and about a quarter of its outputs do not parse.

The first three are also the demo's three debate solvers (``DEMO_SOLVERS``). Each model's perception
comes from the request only (the simulated provider never sees a key, answer or target).
"""

from __future__ import annotations

import random
from typing import Any

from .models import ModelConfig

PROFILE_SEED = 2027

# Archetype → the range each profile field is drawn from (uniform, rounded to 2 decimals).
ARCHETYPES: tuple[tuple[str, dict[str, tuple[float, float]]], ...] = (
    (
        "sim-careful",
        {
            "reading": (0.92, 0.98),
            "grounding": (0.88, 0.95),
            "image_reliance": (0.05, 0.15),
            "position_bias": (0.0, 0.03),
            "format_failure": (0.0, 0.02),
            "solving": (0.85, 0.95),
        },
    ),
    (
        "sim-packet-reliant",
        {
            "reading": (0.8, 0.9),
            "grounding": (0.8, 0.9),
            "image_reliance": (0.5, 0.7),
            "position_bias": (0.02, 0.08),
            "format_failure": (0.01, 0.04),
            "solving": (0.6, 0.75),
        },
    ),
    (
        "sim-first-option",
        {
            "reading": (0.65, 0.8),
            "grounding": (0.6, 0.75),
            "image_reliance": (0.2, 0.35),
            "position_bias": (0.45, 0.55),
            "format_failure": (0.02, 0.05),
            "solving": (0.45, 0.6),
        },
    ),
    (
        "sim-sloppy",
        {
            "reading": (0.4, 0.55),
            "grounding": (0.4, 0.55),
            "image_reliance": (0.2, 0.4),
            "position_bias": (0.05, 0.15),
            "format_failure": (0.22, 0.28),
            "solving": (0.3, 0.45),
        },
    ),
)
DEMO_SOLVERS = ("sim-careful", "sim-packet-reliant", "sim-first-option")


def demo_skill_profiles(seed: int = PROFILE_SEED) -> dict[str, dict[str, float]]:
    """Each archetype's profile: one seeded draw per field inside the archetype's ranges. Same seed →
    same profiles."""
    rng = random.Random(seed)
    profiles: dict[str, dict[str, float]] = {}
    for name, ranges in ARCHETYPES:
        profiles[name] = {field: round(rng.uniform(low, high), 2) for field, (low, high) in ranges.items()}
    return profiles


def demo_models(seed: int = PROFILE_SEED) -> list[dict[str, Any]]:
    """The demo's model configurations (fields of ``ModelConfig``)."""
    models: list[dict[str, Any]] = [
        {
            "name": "simulated",
            "provider": ModelConfig.Provider.SIMULATED,
            "model": "simulated-drafter-1",
            "extra": {"seed": 2027, "latency_ms": [50, 150], "faults": {"429": 0.05, "malformed": 0.03}},
            "requests_per_minute": 600,
            "max_concurrency": 4,
        },
        {
            "name": "baseline-ocr-nearest",
            "provider": ModelConfig.Provider.BASELINE_OCR_NEAREST,
            "model": "tesseract-nearest-region",
            "max_retries": 0,
        },
    ]
    for index, (name, profile) in enumerate(demo_skill_profiles(seed).items()):
        models.append(
            {
                "name": name,
                "provider": ModelConfig.Provider.SIMULATED,
                "model": f"{name}-1",
                "extra": {"seed": seed + index + 1, "latency_ms": [10, 40], "profile": profile},
                "requests_per_minute": 6000,
                "max_concurrency": 8,
            }
        )
    return models


DEMO_MODELS = tuple(demo_models())


def demo_models_ensure() -> list[str]:
    """Create the demo model configs if missing; existing ones (maybe edited by an admin) are kept."""
    for fields in DEMO_MODELS:
        fields = dict(fields)
        ModelConfig.objects.get_or_create(name=fields.pop("name"), defaults=fields)
    return [fields["name"] for fields in DEMO_MODELS]
