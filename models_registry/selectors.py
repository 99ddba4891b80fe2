"""Reads of model configurations for the pages, the API and other apps."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import ModelConfig


def model_config_list(*, active_only: bool = False) -> QuerySet[ModelConfig]:
    """Every configuration by name; only the active ones (those a run or a draft may use) when asked."""
    configs = ModelConfig.objects.order_by("name")
    return configs.filter(is_active=True) if active_only else configs


def model_config_get(*, name: str) -> ModelConfig | None:
    """The configuration named ``name``, or None."""
    return ModelConfig.objects.filter(name=name).first()
