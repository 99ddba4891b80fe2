"""The response cache (opt-in per run, ``options["reuse_responses"]``): a row whose request — what the model
sees (``LLMRequest.fingerprint()``: system, user, image digests in order, stored as ``request_hash``) and the
model settings as sent (``settings_digest``, stored as ``settings_hash``) — equals that of a row of an earlier
run whose call ended in a completed answer takes that answer instead of calling the model again.

Only a completed provider call is ever reused (``provider_status == "completed"``; the row's scored status
``completed`` or ``unparseable``, the latter being the model's own complete output that our parser rejects):
errors, refusals, truncated and infra-missing rows are asked again. The reuse costs nothing (``cost_usd`` 0;
the source keeps its cost) and records its source in ``cached_from``; the row is scored by the same code.
"""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from llm import LLMRequest, OutputStatus, ProviderConfig

from ..models import EvalRequest

# the settings a provider adapter turns into the call (not prices, rate limits, timeouts or retry counts)
SENT_SETTINGS = (
    "provider",
    "model",
    "base_url",
    "max_output_tokens",
    "temperature",
    "reasoning",
    "send_images",
)

REUSABLE_STATUSES = (OutputStatus.COMPLETED, OutputStatus.UNPARSEABLE)


def settings_digest(config: ProviderConfig) -> str:
    """SHA-256 of the model settings as sent: the provider, model, endpoint and generation settings, plus the
    config's ``extra`` (provider-specific request options)."""
    record = config.settings_record()
    payload = {name: record[name] for name in SENT_SETTINGS} | {"extra": record.get("extra", {})}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def cached_sources(run_id: int, keys: list[tuple[str, str]]) -> dict[tuple[str, str], EvalRequest]:
    """For each (request_hash, settings_hash) the earliest reusable row of another run (an original call
    before a reuse of it); keys without one are absent. One indexed query."""
    if not keys:
        return {}
    hashes = sorted({h for h, _ in keys})
    wanted = set(keys)
    candidates = (
        EvalRequest.objects.filter(
            request_hash__in=hashes,
            settings_hash__in=sorted({s for _, s in keys}),
            provider_status=OutputStatus.COMPLETED,
            status__in=REUSABLE_STATUSES,
            raw_output__isnull=False,
        )
        .exclude(run_id=run_id)
        .only(
            "pk",
            "request_hash",
            "settings_hash",
            "raw_output",
            "finish_reason",
            "provider_status",
            "input_tokens",
            "output_tokens",
            "cached_from_id",
        )
        .order_by("pk")
    )
    found: dict[tuple[str, str], EvalRequest] = {}
    for row in candidates:
        key = (row.request_hash, row.settings_hash)
        if key in wanted and (key not in found or (found[key].cached_from_id and not row.cached_from_id)):
            found[key] = row
    return found


def response_reuse(row: EvalRequest, request: LLMRequest, source: EvalRequest) -> EvalRequest:
    """Give ``row`` the source's response (raw output, tokens, finish reason) without a call: no attempts,
    cost 0, ``cached_from`` the original call (a reuse of a reuse points to the original)."""
    row.attempts, row.finish_reason, row.provider_status = [], source.finish_reason, source.provider_status
    row.input_tokens, row.output_tokens = source.input_tokens, source.output_tokens
    row.cost_usd, row.latency_ms, row.error = Decimal(0), 0, ""
    row.request_hash = request.fingerprint()
    row.cached_from_id = source.cached_from_id or source.pk
    row.status, row.raw_output = EvalRequest.Status.COMPLETED, source.raw_output
    return row


def reuse_enabled(options: dict[str, Any]) -> bool:
    return bool(options.get("reuse_responses"))
