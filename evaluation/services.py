"""Writes for model configurations. Reasoning settings are checked against the capability table."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from annotation.events import event_record
from llm.capabilities import capabilities_for, check_reasoning
from llm.errors import ProviderError
from physalign_site.errors import ApplicationError

from .models import ModelConfig

EDITABLE_FIELDS = (
    "provider", "model", "base_url", "api_key_env", "max_output_tokens", "temperature", "reasoning",
    "image_policy", "price_in_per_mtok", "price_out_per_mtok", "requests_per_minute", "max_concurrency",
    "timeout_seconds", "max_retries", "extra", "is_active",
)


def _check(config: ModelConfig) -> None:
    if config.provider not in ModelConfig.Provider.values:
        raise ApplicationError(f"Unknown provider {config.provider!r}.", code="provider_invalid",
                               extra={"choices": list(ModelConfig.Provider.values)})
    if config.provider == ModelConfig.Provider.OPENAI_COMPATIBLE and not config.base_url:
        raise ApplicationError("An OpenAI-compatible model needs a base URL.", code="base_url_required")
    if config.api_key_env and not config.api_key_env.replace("_", "").isalnum():
        raise ApplicationError("api_key_env must be an environment variable name, not a key.",
                               code="api_key_env_invalid")
    try:
        check_reasoning(capabilities_for(config.provider, config.model), config.reasoning or {})
    except ProviderError as exc:
        raise ApplicationError(exc.message, code="reasoning_invalid") from exc


@transaction.atomic
def model_config_create(*, name: str, actor: Any = None, **fields: Any) -> ModelConfig:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown fields {sorted(unknown)}.", code="fields_invalid")
    config = ModelConfig(name=name, **fields)
    _check(config)
    try:
        with transaction.atomic():
            config.full_clean(exclude=["reasoning", "extra"])
            config.save()
    except IntegrityError as exc:
        raise ApplicationError(f"A model named {name!r} exists already.", code="name_taken") from exc
    except Exception as exc:
        if exc.__class__.__name__ == "ValidationError":
            raise ApplicationError("The model configuration is invalid.", code="validation_error",
                                   extra={"fields": getattr(exc, "message_dict", {})}) from exc
        raise
    event_record(actor=actor, verb="model_config.create", obj=config, before=None, after=_state(config))
    return config


@transaction.atomic
def model_config_update(*, config: ModelConfig, actor: Any = None, **fields: Any) -> ModelConfig:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown fields {sorted(unknown)}.", code="fields_invalid")
    before = _state(config)
    for key, value in fields.items():
        setattr(config, key, value)
    _check(config)
    config.save()
    event_record(actor=actor, verb="model_config.update", obj=config, before=before, after=_state(config))
    return config


def _state(config: ModelConfig) -> dict[str, Any]:
    return {"name": config.name, "provider": config.provider, "model": config.model,
            "base_url": config.base_url, "api_key_env": config.api_key_env, "reasoning": config.reasoning,
            "price_in_per_mtok": str(config.price_in_per_mtok), "price_out_per_mtok": str(config.price_out_per_mtok),
            "requests_per_minute": config.requests_per_minute, "max_concurrency": config.max_concurrency,
            "is_active": config.is_active}
