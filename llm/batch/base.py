"""What every provider's batch module returns (shared by ``llm.batch`` and its provider modules)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ErrorKind, ProviderError
from ..types import LLMRequest, ProviderConfig, ProviderReply


class BatchErrorKind:
    """Error kinds of batch items beyond ``llm.errors.ErrorKind``: the item was never run."""

    EXPIRED = "expired"  # the batch's completion window closed first
    CANCELLED = "cancelled"  # the batch was cancelled first


@dataclass(frozen=True)
class BatchStatus:
    state: str  # "running" | "ended" | "failed" | "expired" | "cancelled"  (normalised)
    total: int  # items the provider reports (0 if unknown)
    succeeded: int
    errored: int  # errored + expired + cancelled items as reported
    error: str = ""  # provider's message when the whole batch failed


STATES = ("running", "ended", "failed", "expired", "cancelled")


@dataclass
class ItemOutcome:
    """One item of a batch's results: a normalised reply, or the error that item ended with."""

    raw: dict[str, Any]
    reply: ProviderReply | None = None
    error: ProviderError | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    """What one batch submission may hold, as the provider documents it (``None``: no count limit)."""

    max_items: int | None
    max_bytes: int


def check_limits(config: ProviderConfig, limits: Limits, *, items: int, size: int) -> None:
    """Refuse a batch over the provider's limits before it is sent (``ProviderError``, kind ``config``: the
    caller submits fewer items or calls directly). ``extra["batch_max_items"]`` / ``["batch_max_bytes"]``
    replace them (a provider may change its limits)."""
    max_items = config.extra.get("batch_max_items", limits.max_items)
    max_bytes = int(config.extra.get("batch_max_bytes", limits.max_bytes))
    if max_items is not None and items > int(max_items):
        raise ProviderError(
            f"A batch of {items} requests is over the limit of {int(max_items)} for {config.provider}.",
            kind=ErrorKind.CONFIG,
        )
    if size > max_bytes:
        raise ProviderError(
            f"A batch of {size} bytes is over the limit of {max_bytes} bytes for {config.provider}; "
            "submit fewer requests.",
            kind=ErrorKind.CONFIG,
        )


def malformed(raw: dict[str, Any], detail: str) -> ItemOutcome:
    """A result line we cannot read: a failed item (the direct path may still answer it), never a crash."""
    return ItemOutcome(
        raw=raw,
        error=ProviderError(f"malformed batch result: {detail}"[:500], kind=ErrorKind.OTHER, retryable=True),
    )


SALVAGE_ID = re.compile(rb'"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"')


def salvage_custom_id(line: bytes) -> str | None:
    """The custom id of a result line that is not valid JSON, when it can still be read off the text."""
    found = SALVAGE_ID.search(line)
    return found.group(1).decode("ascii") if found else None


class BatchBackend(Protocol):
    def submit(
        self, items: Sequence[tuple[str, LLMRequest]], config: ProviderConfig, http_client: Any
    ) -> str: ...

    def status(self, batch_id: str, config: ProviderConfig, http_client: Any) -> BatchStatus: ...

    def results(self, batch_id: str, config: ProviderConfig, http_client: Any) -> dict[str, ItemOutcome]: ...

    def cancel(self, batch_id: str, config: ProviderConfig, http_client: Any) -> None: ...
