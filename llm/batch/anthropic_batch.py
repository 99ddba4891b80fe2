"""Anthropic Message Batches through the official SDK: ``messages.batches.create`` with each request's
``params`` exactly the direct path's ``build_payload``; results (JSONL, in no particular order, from the
batch's ``results_url``) matched by ``custom_id``, a succeeded item's message read by the direct path's ``reply_from_message``.

Anthropic has no failed state for a whole batch (a bad batch is refused at creation: ``ProviderError``),
and reports item counts only once processing ended. The results URL the API names must be on the same
origin as the endpoint the policy approved; the key is never sent elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pydantic
from anthropic.types.messages import MessageBatchIndividualResponse

from ..errors import ErrorKind, ProviderError
from ..providers.anthropic_provider import build_payload, open_client, reply_from_message, sdk_errors
from ..types import LLMRequest, ProviderConfig
from .base import BatchErrorKind, BatchStatus, ItemOutcome, Limits, check_limits, malformed, salvage_custom_id

LIMITS = Limits(max_items=100_000, max_bytes=256 * 1024 * 1024)  # per batch (Message Batches docs)

# an errored item's error type → our kind (https://docs.anthropic.com/en/api/errors)
ERROR_KIND = {
    "invalid_request_error": ErrorKind.BAD_REQUEST,
    "authentication_error": ErrorKind.AUTH,
    "permission_error": ErrorKind.AUTH,
    "billing_error": ErrorKind.AUTH,
    "not_found_error": ErrorKind.NOT_FOUND,
    "request_too_large": ErrorKind.BAD_REQUEST,
    "rate_limit_error": ErrorKind.RATE_LIMIT,
    "api_error": ErrorKind.SERVER,
    "overloaded_error": ErrorKind.OVERLOADED,
    "timeout_error": ErrorKind.TIMEOUT,
    "gateway_timeout_error": ErrorKind.TIMEOUT,
}


class AnthropicBatch:
    def submit(
        self, items: Sequence[tuple[str, LLMRequest]], config: ProviderConfig, http_client: Any
    ) -> str:
        with open_client(config, http_client) as client:
            requests: list[Any] = [
                {"custom_id": custom_id, "params": build_payload(request, config)}
                for custom_id, request in items
            ]
            size = len(json.dumps({"requests": requests}, separators=(",", ":")).encode("utf-8"))
            check_limits(config, LIMITS, items=len(requests), size=size)
            with sdk_errors():
                batch = client.messages.batches.create(requests=requests)
        return batch.id

    def status(self, batch_id: str, config: ProviderConfig, http_client: Any) -> BatchStatus:
        with open_client(config, http_client) as client, sdk_errors():
            batch = client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        if batch.processing_status == "ended":
            state = "cancelled" if batch.cancel_initiated_at is not None else "ended"
        else:  # in_progress, canceling
            state = "running"
        return BatchStatus(
            state=state,
            total=counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired,
            succeeded=counts.succeeded,
            errored=counts.errored + counts.canceled + counts.expired,
        )

    def results(self, batch_id: str, config: ProviderConfig, http_client: Any) -> dict[str, ItemOutcome]:
        with open_client(config, http_client) as client, sdk_errors():
            batch = client.messages.batches.retrieve(batch_id)
            if not batch.results_url:
                raise ProviderError(
                    f"Batch {batch_id} has no results yet ({batch.processing_status}).",
                    kind=ErrorKind.OTHER,
                    retryable=True,
                )
            _check_same_origin(batch.results_url, str(client.base_url))
            # the URL just checked, fetched once through the SDK (auth, errors); ``batches.results`` would
            # retrieve the batch again and follow whatever URL that second answer names
            response = client.get(
                batch.results_url,
                cast_to=httpx2.Response,
                options={"headers": {"Accept": "application/binary"}},
            )
            content = response.read()
        outcomes: dict[str, ItemOutcome] = {}
        for number, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                salvaged = salvage_custom_id(line)  # without one the item is simply absent
                if salvaged is not None:
                    raw = {"line": line.decode("utf-8", "replace")}
                    outcomes[salvaged] = malformed(raw, f"line {number} is not JSON")
                continue
            if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
                outcomes[item["custom_id"]] = _outcome(item, number)
        return outcomes

    def cancel(self, batch_id: str, config: ProviderConfig, http_client: Any) -> None:
        with open_client(config, http_client) as client, sdk_errors():
            client.messages.batches.cancel(batch_id)


def _check_same_origin(results_url: str, base_url: str) -> None:
    """A relative results URL, or an absolute one on the approved endpoint's scheme, host and port."""
    target, base = urlsplit(results_url), urlsplit(base_url)
    if not target.scheme and not target.netloc:
        return
    if (target.scheme, target.hostname, target.port) != (base.scheme, base.hostname, base.port):
        raise ProviderError(
            f"The batch results URL is on {target.hostname!r}, not on the model's endpoint {base.hostname!r}.",
            kind=ErrorKind.CONFIG,
        )


def _outcome(item: dict[str, Any], number: int) -> ItemOutcome:
    try:
        line = MessageBatchIndividualResponse.model_validate(item)
    except pydantic.ValidationError as exc:
        return malformed(item, f"line {number}: {exc.error_count()} invalid field(s)")
    result = line.result
    if result.type == "succeeded":
        try:
            return ItemOutcome(raw=item, reply=reply_from_message(result.message))
        except (AttributeError, TypeError, ValueError) as exc:
            return malformed(item, f"line {number}: {exc}")
    if result.type == "errored":
        error = result.error.error
        message = f"{error.type}: {error.message}"
        return ItemOutcome(
            raw=item, error=ProviderError(message, kind=ERROR_KIND.get(error.type, ErrorKind.OTHER))
        )
    if result.type == "expired":
        return ItemOutcome(
            raw=item,
            error=ProviderError("The batch expired before this request ran.", kind=BatchErrorKind.EXPIRED),
        )
    return ItemOutcome(
        raw=item,
        error=ProviderError(
            "The batch was cancelled before this request ran.", kind=BatchErrorKind.CANCELLED
        ),
    )
