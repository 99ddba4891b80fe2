"""The model provider layer: one request type, one result type, every provider behind ``generate``.

No Django here. Provider batch APIs (submit, poll, fetch, cancel) are ``llm.batch``. Django-aware glue
(ModelConfig → ProviderConfig, the shared rate limiter) lives in ``models_registry.providers``.
"""

from . import batch
from .batch import BatchStatus
from .client import Backoff, generate
from .errors import ErrorKind, ProviderError
from .types import ROW_TERMINAL, ImageInput, LLMRequest, LLMResult, OutputStatus, ProviderConfig, Usage

__all__ = [
    "Backoff",
    "BatchStatus",
    "ErrorKind",
    "ImageInput",
    "LLMRequest",
    "LLMResult",
    "ProviderConfig",
    "ProviderError",
    "OutputStatus",
    "ROW_TERMINAL",
    "Usage",
    "batch",
    "generate",
]
