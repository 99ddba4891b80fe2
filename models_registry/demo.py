"""The demo's offline model configurations: drafting and evaluation work with no API keys."""

from __future__ import annotations

from .models import ModelConfig

DEMO_MODELS = (
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
)


def demo_models_ensure() -> list[str]:
    """Create the demo model configs if missing; existing ones (maybe edited by an admin) are kept."""
    for fields in DEMO_MODELS:
        fields = dict(fields)
        ModelConfig.objects.get_or_create(name=fields.pop("name"), defaults=fields)
    return [fields["name"] for fields in DEMO_MODELS]
