"""The launch-time check of what model configs need on this machine (``llm.preflight``), as one refusal.

Run launches call ``models_preflight`` before they create anything, so a run whose model cannot be called
(the OCR baseline without tesseract, a provider model without its key or base URL) is refused with the
reason, never discovered in the results as a column of ``infra_missing`` rows.
"""

from __future__ import annotations

from collections.abc import Iterable

from llm.preflight import MissingTool, preflight
from physalign_site.errors import ApplicationError

from .models import ModelConfig
from .providers import provider_config_for

PREFLIGHT_CODE = "model_unavailable"


def models_missing(configs: Iterable[ModelConfig]) -> list[MissingTool]:
    """Everything the configs need and this machine lacks, in the configs' order."""
    return [missing for config in configs for missing in preflight(provider_config_for(config))]


def models_preflight(configs: Iterable[ModelConfig]) -> None:
    """Refuse (``model_unavailable``, HTTP 400) when a config needs a tool, key or URL this machine lacks."""
    missing = models_missing(configs)
    if missing:
        raise ApplicationError(
            " ".join(m.message for m in missing) + " Nothing was launched.",
            code=PREFLIGHT_CODE,
            extra={
                "missing": [
                    {"model": m.model, "tool": m.tool, "code": m.code, "message": m.message} for m in missing
                ]
            },
        )
