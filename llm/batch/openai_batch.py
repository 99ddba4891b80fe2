"""OpenAI Batch API through the official SDK: the requests as a JSONL file (``purpose="batch"``), one
batch on ``/v1/chat/completions`` with a 24 h window; results from the output and error files.

Each input line's ``body`` is exactly the direct path's ``build_payload``; each output line's
``response.body`` is a chat completion read by the direct path's ``reply_from_completion``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import pydantic
from openai.types.chat import ChatCompletion

from ..errors import ErrorKind, ProviderError, kind_for_status
from ..providers.openai_provider import build_payload, open_client, reply_from_completion, sdk_errors
from ..types import LLMRequest, ProviderConfig
from .base import BatchErrorKind, BatchStatus, ItemOutcome, Limits, check_limits, malformed, salvage_custom_id

ENDPOINT: Final = "/v1/chat/completions"
LIMITS = Limits(max_items=50_000, max_bytes=200 * 1024 * 1024)  # per input file (OpenAI Batch guide)

STATE = {
    "validating": "running",
    "in_progress": "running",
    "finalizing": "running",
    "cancelling": "running",
    "completed": "ended",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}

ITEM_ERROR_KIND = {"batch_expired": BatchErrorKind.EXPIRED, "batch_cancelled": BatchErrorKind.CANCELLED}


class OpenAIBatch:
    def submit(
        self, items: Sequence[tuple[str, LLMRequest]], config: ProviderConfig, http_client: Any
    ) -> str:
        if config.provider != "openai":
            raise ProviderError("OpenAI batches need provider 'openai'.", kind=ErrorKind.CONFIG)
        with open_client(config, http_client) as client:
            lines = [
                json.dumps(
                    {
                        "custom_id": custom_id,
                        "method": "POST",
                        "url": ENDPOINT,
                        "body": build_payload(r, config),
                    },
                    separators=(",", ":"),
                )
                for custom_id, r in items
            ]
            data = ("\n".join(lines) + "\n").encode("utf-8")
            check_limits(config, LIMITS, items=len(lines), size=len(data))
            with sdk_errors():
                uploaded = client.files.create(
                    file=("physalign-batch.jsonl", data, "application/jsonl"), purpose="batch"
                )
                batch = client.batches.create(
                    input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h"
                )
        return batch.id

    def status(self, batch_id: str, config: ProviderConfig, http_client: Any) -> BatchStatus:
        with open_client(config, http_client) as client, sdk_errors():
            batch = client.batches.retrieve(batch_id)
        counts = batch.request_counts
        error = ""
        if batch.errors is not None and batch.errors.data:
            error = "; ".join(
                f"{e.code or 'error'}: {e.message or ''}".strip()
                + (f" (line {e.line})" if e.line is not None else "")
                for e in batch.errors.data
            )
        state = STATE.get(batch.status, "failed")
        if state == "failed" and not error:
            error = f"batch {batch.status}"
        return BatchStatus(
            state=state,
            total=counts.total if counts else 0,
            succeeded=counts.completed if counts else 0,
            errored=counts.failed if counts else 0,
            error=error[:2000],
        )

    def results(self, batch_id: str, config: ProviderConfig, http_client: Any) -> dict[str, ItemOutcome]:
        outcomes: dict[str, ItemOutcome] = {}
        with open_client(config, http_client) as client, sdk_errors():
            batch = client.batches.retrieve(batch_id)
            # errors first: a custom id in both files (a retried line) keeps its answer
            for file_id in (batch.error_file_id, batch.output_file_id):
                if not file_id:
                    continue
                content = client.files.content(file_id).content
                for custom_id, outcome in _read_lines(content):
                    outcomes[custom_id] = outcome
        return outcomes

    def cancel(self, batch_id: str, config: ProviderConfig, http_client: Any) -> None:
        with open_client(config, http_client) as client, sdk_errors():
            client.batches.cancel(batch_id)


def _read_lines(content: bytes) -> list[tuple[str, ItemOutcome]]:
    read: list[tuple[str, ItemOutcome]] = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            salvaged = salvage_custom_id(line)  # without one the item is simply absent
            if salvaged is not None:
                read.append(
                    (
                        salvaged,
                        malformed({"line": line.decode("utf-8", "replace")}, f"line {number} is not JSON"),
                    )
                )
            continue
        if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
            continue
        read.append((item["custom_id"], _outcome(item, number)))
    return read


def _outcome(item: dict[str, Any], number: int) -> ItemOutcome:
    error = item.get("error")
    if isinstance(error, dict):
        code = str(error.get("code") or "")
        message = f"{code}: {error.get('message') or ''}".strip(": ")
        return ItemOutcome(
            raw=item, error=ProviderError(message, kind=ITEM_ERROR_KIND.get(code, ErrorKind.OTHER))
        )
    response = item.get("response")
    if not isinstance(response, dict):
        return malformed(item, f"line {number} has neither a response nor an error")
    body = response.get("body")
    status_code = response.get("status_code")
    if not isinstance(status_code, int) or status_code != 200:
        detail = body.get("error") if isinstance(body, dict) else None
        text = str(detail.get("message") if isinstance(detail, dict) else detail or body or "")
        http = status_code if isinstance(status_code, int) else 0
        return ItemOutcome(
            raw=item,
            error=ProviderError(
                f"HTTP {http}: {text}"[:500],
                kind=kind_for_status(http, json.dumps(body, default=str)) if http else ErrorKind.OTHER,
                status_code=http or None,
            ),
        )
    try:
        completion = ChatCompletion.model_validate(body)
    except pydantic.ValidationError as exc:
        return malformed(item, f"line {number}: {exc.error_count()} invalid field(s) in the chat completion")
    try:
        return ItemOutcome(raw=item, reply=reply_from_completion(completion))
    except ProviderError as exc:
        return ItemOutcome(raw=item, error=exc)
