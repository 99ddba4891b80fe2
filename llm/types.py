"""The one request and one result type every provider speaks (pure dataclasses, no Django).

A request is what a model may see: system text, user text and ordered images (bytes + media
type). Nothing else (paths, hashes, keys, private fields) ever reaches a provider (Kit §3.7, §8).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any

from .endpoint_policy import EndpointPolicy


@dataclass(frozen=True)
class ImageInput:
    data: bytes
    media_type: str = "image/png"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(frozen=True)
class LLMRequest:
    system: str
    user: str
    images: tuple[ImageInput, ...] = ()
    request_id: str = ""

    def fingerprint(self) -> str:
        """SHA-256 of what the model sees (texts + image digests in order): a stable request key. Computed
        once per request (the fields are frozen; a provider, the attempt loop and the caller all ask)."""
        known = self.__dict__.get("_fingerprint")
        if known is None:
            payload = {"system": self.system, "user": self.user, "images": [i.sha256 for i in self.images]}
            known = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()
            object.__setattr__(self, "_fingerprint", known)
        return known

    def record(self) -> dict[str, Any]:
        """An auditable copy of the request without the image bytes."""
        return {
            "request_id": self.request_id,
            "system": self.system,
            "user": self.user,
            "images": [
                {"sha256": i.sha256, "media_type": i.media_type, "bytes": len(i.data)} for i in self.images
            ],
            "fingerprint": self.fingerprint(),
        }


@dataclass(frozen=True)
class ProviderConfig:
    """Everything a provider needs to make a call. Built from ``evaluation.ModelConfig``."""

    name: str
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    max_output_tokens: int | None = None
    temperature: float | None = None
    reasoning: dict[str, Any] = field(default_factory=dict)
    send_images: bool = True
    price_in_per_mtok: Decimal = Decimal(0)
    price_out_per_mtok: Decimal = Decimal(0)
    requests_per_minute: int | None = None
    max_concurrency: int | None = None
    timeout_seconds: float = 120.0
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)
    # the deployment's rules for api_key_env and base_url, checked before every call (safe by default)
    endpoint_policy: EndpointPolicy = field(default_factory=EndpointPolicy, repr=False)

    def settings_record(self) -> dict[str, Any]:
        """The settings part of a request record (never the API key itself, only its variable name;
        not the deployment's endpoint policy, which is no model setting)."""
        data = asdict(self)
        del data["endpoint_policy"]
        data["price_in_per_mtok"] = str(self.price_in_per_mtok)
        data["price_out_per_mtok"] = str(self.price_out_per_mtok)
        return data


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class ProviderReply:
    """What one successful provider call returned (before our bookkeeping)."""

    text: str
    finish_reason: str  # normalised: stop | length | content_filter | refusal | other
    usage: Usage
    raw: dict[str, Any]


@dataclass
class Attempt:
    number: int
    started_at: float
    latency_ms: int
    outcome: str  # ok | error
    error_kind: str = ""
    status_code: int | None = None
    retryable: bool = False
    retry_after_s: float | None = None
    slept_s: float = 0.0
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OutputStatus(StrEnum):
    """What became of one model output: the one list of statuses every layer uses. A provider call ends
    completed, refusal, truncated or failed (no answer: infrastructure or a non-retryable request error); a
    stored row (evaluation request, solving response) is pending or running until it ends completed,
    unparseable (evaluation only: the output does not parse), refusal, truncated or infra_missing (no answer;
    the fixed denominator keeps it)."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    UNPARSEABLE = "unparseable"
    REFUSAL = "refusal"
    TRUNCATED = "truncated"
    INFRA_MISSING = "infra_missing"
    FAILED = "failed"


# A stored row with one of these has its answer (or its final lack of one): never claimed or written again.
ROW_TERMINAL: tuple[OutputStatus, ...] = (
    OutputStatus.COMPLETED,
    OutputStatus.UNPARSEABLE,
    OutputStatus.REFUSAL,
    OutputStatus.TRUNCATED,
    OutputStatus.INFRA_MISSING,
)


@dataclass
class LLMResult:
    text: str
    finish_reason: str
    status: str
    usage: Usage
    latency_ms: int
    cost_usd: Decimal
    raw: dict[str, Any]
    attempts: list[Attempt]
    error: str = ""
    error_kind: str = ""

    @property
    def ok(self) -> bool:
        return self.status != OutputStatus.FAILED

    def attempts_record(self) -> list[dict[str, Any]]:
        return [a.as_dict() for a in self.attempts]
