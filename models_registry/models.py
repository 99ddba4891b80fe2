"""Model configurations (every provider call is made through one of these) and the record a provider call
leaves behind, shared by drafting, evaluation, solving and debate."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from llm.types import OutputStatus
from run_engine.rows import LeasedRow


class ModelConfig(models.Model):
    """A named model endpoint with its settings, prices and limits. API keys are never stored:
    ``api_key_env`` names the environment variable read at call time."""

    class Provider(models.TextChoices):
        OPENAI = "openai", "OpenAI"
        ANTHROPIC = "anthropic", "Anthropic"
        GOOGLE = "google", "Google GenAI"
        OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible endpoint"
        SIMULATED = "simulated", "Simulated (offline)"
        SCRIPTED = "scripted", "Scripted (tests)"
        BASELINE_OCR_NEAREST = "baseline-ocr-nearest", "Baseline: OCR + nearest region"

    class ImagePolicy(models.TextChoices):
        SEND = "send", "Send images"
        NONE = "none", "Text only"

    name = models.SlugField(max_length=100, unique=True)
    provider = models.CharField(max_length=30, choices=Provider.choices)
    model = models.CharField(max_length=200)
    base_url = models.URLField(max_length=500, blank=True)
    api_key_env = models.CharField(max_length=100, blank=True)
    max_output_tokens = models.PositiveIntegerField(null=True, blank=True)
    temperature = models.FloatField(null=True, blank=True)
    reasoning = models.JSONField(
        default=dict, blank=True
    )  # e.g. {"effort": "low"} or {"budget_tokens": 2048}
    image_policy = models.CharField(max_length=10, choices=ImagePolicy.choices, default=ImagePolicy.SEND)
    price_in_per_mtok = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_out_per_mtok = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    max_concurrency = models.PositiveIntegerField(null=True, blank=True)
    timeout_seconds = models.FloatField(default=120)
    max_retries = models.PositiveSmallIntegerField(default=2)
    extra = models.JSONField(default=dict, blank=True)  # provider-specific settings (seed, latency, faults…)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    provider__in=[
                        "openai",
                        "anthropic",
                        "google",
                        "openai_compatible",
                        "simulated",
                        "scripted",
                        "baseline-ocr-nearest",
                    ]
                ),
                name="model_provider_valid",
            ),
            models.CheckConstraint(
                condition=Q(image_policy__in=["send", "none"]), name="model_image_policy_valid"
            ),
            models.CheckConstraint(
                condition=Q(price_in_per_mtok__gte=0) & Q(price_out_per_mtok__gte=0),
                name="model_prices_non_negative",
            ),
            models.CheckConstraint(condition=Q(max_retries__lte=10), name="model_retries_bounded"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.provider}:{self.model})"


class OutputStatusChoices(models.TextChoices):
    """The statuses of a stored provider call (``llm.OutputStatus``) as model choices."""

    PENDING = OutputStatus.PENDING, "Pending"
    RUNNING = OutputStatus.RUNNING, "Running"
    COMPLETED = OutputStatus.COMPLETED, "Completed"
    UNPARSEABLE = OutputStatus.UNPARSEABLE, "Unparseable"
    REFUSAL = OutputStatus.REFUSAL, "Refusal"
    TRUNCATED = OutputStatus.TRUNCATED, "Truncated"
    INFRA_MISSING = OutputStatus.INFRA_MISSING, "Infrastructure missing"


class ProviderCallRecord(LeasedRow):
    """What a leased provider call leaves behind, shared by evaluation requests and solving responses: the
    claim (token, time, count ≤ 3), the provider attempts of the final claim, the raw output as returned,
    tokens, dollars and latency."""

    attempts = models.JSONField(default=list, blank=True)  # provider attempts of the final claim
    raw_output = models.TextField(null=True, blank=True)  # noqa: DJ001 — null = nothing served, "" = empty output
    finish_reason = models.CharField(max_length=30, blank=True)
    provider_status = models.CharField(max_length=20, blank=True)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=8, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    request_hash = models.CharField(max_length=64, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
