"""Writes for model configurations. Reasoning settings are checked against the capability table; the
key variable and base URL against the endpoint policy (``llm.endpoint_policy``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from audit.services import event_record
from llm.capabilities import capabilities_for, check_reasoning
from llm.endpoint_policy import EndpointRefused, check_endpoint
from llm.errors import ProviderError
from models_registry.providers import endpoint_policy
from physalign_site.errors import ApplicationError

from .models import ModelConfig

EDITABLE_FIELDS = (
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "max_output_tokens",
    "temperature",
    "reasoning",
    "image_policy",
    "price_in_per_mtok",
    "price_out_per_mtok",
    "requests_per_minute",
    "max_concurrency",
    "timeout_seconds",
    "max_retries",
    "extra",
    "is_active",
)
JSON_OBJECT_FIELDS = ("reasoning", "extra")
# Inclusive (lowest, highest) per numeric setting, None leaving a side open. A null value (no limit,
# the provider's default) always passes; 0 rpm or concurrency means no limit, as in the limiter.
NUMBER_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "price_in_per_mtok": (0, None),
    "price_out_per_mtok": (0, None),
    "requests_per_minute": (0, None),
    "max_concurrency": (0, None),
    "max_output_tokens": (1, None),
    "temperature": (0, 2),
    "timeout_seconds": (0.1, None),
    "max_retries": (0, 10),
}


def model_config_check(config: ModelConfig) -> None:
    """Every rule a saved configuration obeys. The key-variable and base-URL rules are the provider
    layer's own (``llm.endpoint_policy``), which checks them again before every call."""
    if config.provider not in ModelConfig.Provider.values:
        raise ApplicationError(
            f"Unknown provider {config.provider!r}.",
            code="provider_invalid",
            extra={"choices": list(ModelConfig.Provider.values)},
        )
    if config.provider == ModelConfig.Provider.OPENAI_COMPATIBLE and not config.base_url:
        raise ApplicationError("An OpenAI-compatible model needs a base URL.", code="base_url_required")
    for field in JSON_OBJECT_FIELDS:
        if not isinstance(getattr(config, field), dict):
            raise ApplicationError(
                f"{field} must be a JSON object (an empty object for none).",
                code=f"{field}_invalid",
                extra={"field": field},
            )
    for field, (lowest, highest) in NUMBER_BOUNDS.items():
        value = getattr(config, field)
        if value is not None and not _within(value, lowest, highest):
            bounds = f"at least {lowest}" if highest is None else f"between {lowest} and {highest}"
            raise ApplicationError(
                f"{field} must be {bounds}.", code="value_out_of_range", extra={"field": field}
            )
    try:
        check_endpoint(base_url=config.base_url, api_key_env=config.api_key_env, policy=endpoint_policy())
    except EndpointRefused as exc:
        raise ApplicationError(exc.message, code=exc.code, extra={"field": exc.field}) from exc
    try:
        check_reasoning(capabilities_for(config.provider, config.model), config.reasoning)
    except ProviderError as exc:
        raise ApplicationError(exc.message, code="reasoning_invalid") from exc
    try:
        config.full_clean(exclude=list(JSON_OBJECT_FIELDS), validate_unique=False)
    except ValidationError as exc:
        raise ApplicationError(
            "The model configuration is invalid.", code="validation_error", extra={"fields": exc.message_dict}
        ) from exc


def _within(value: Any, lowest: float | None, highest: float | None) -> bool:
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return False
    return (
        number.is_finite()
        and (lowest is None or number >= Decimal(str(lowest)))
        and (highest is None or number <= Decimal(str(highest)))
    )


@transaction.atomic
def model_config_create(*, name: str, actor: Any = None, **fields: Any) -> ModelConfig:
    """Add a model configuration after every rule of ``model_config_check``; refused configs write nothing."""
    _refuse_unknown(fields)
    config = ModelConfig(name=name, **fields)
    if ModelConfig.objects.filter(name=name).exists():
        raise ApplicationError(f"A model named {name!r} exists already.", code="name_taken")
    model_config_check(config)
    try:
        with transaction.atomic():
            config.save()
    except IntegrityError as exc:  # a concurrent create won the name
        raise ApplicationError(f"A model named {name!r} exists already.", code="name_taken") from exc
    event_record(actor=actor, verb="model_config.create", obj=config, before=None, after=_state(config))
    return config


@transaction.atomic
def model_config_update(*, config: ModelConfig, actor: Any = None, **fields: Any) -> ModelConfig:
    """Change a configuration; the result must pass ``_check`` as a whole, else nothing is saved."""
    _refuse_unknown(fields)
    before = _state(config)
    for key, value in fields.items():
        setattr(config, key, value)
    model_config_check(config)
    config.save()
    event_record(actor=actor, verb="model_config.update", obj=config, before=before, after=_state(config))
    return config


def _refuse_unknown(fields: dict[str, Any]) -> None:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown fields {sorted(unknown)}.", code="fields_invalid")


def _state(config: ModelConfig) -> dict[str, Any]:
    return {
        "name": config.name,
        "provider": config.provider,
        "model": config.model,
        "base_url": config.base_url,
        "api_key_env": config.api_key_env,
        "reasoning": config.reasoning,
        "price_in_per_mtok": str(config.price_in_per_mtok),
        "price_out_per_mtok": str(config.price_out_per_mtok),
        "requests_per_minute": config.requests_per_minute,
        "max_concurrency": config.max_concurrency,
        "is_active": config.is_active,
    }
