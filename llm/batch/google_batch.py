"""Gemini batch mode through the official ``google-genai`` SDK: ``batches.create`` with inlined requests,
each built by the direct path (``contents_for`` and ``build_config``: text then images in order, the
system text as ``system_instruction``) and tagged with ``metadata={"custom_id": …}``, which the API
echoes on each inlined response; each response is read by the direct path's ``reply_from_response``.

The SDK's ``BatchJob`` carries no item counts and no error for the Gemini API (only for Vertex), so the
operation JSON the SDK received is also read (a response hook on the HTTP client): ``batchStats`` for
progress, ``error.message`` for a failed batch. When one inlined response does not parse, the SDK
refuses the whole job; each response is then validated on its own and only the bad one fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx2
import pydantic
from google import genai
from google.genai import types as gtypes

from ..errors import ErrorKind, ProviderError, kind_for_status
from ..providers.google_provider import (
    build_config,
    client_for,
    contents_for,
    reply_from_response,
    sdk_errors,
)
from ..types import LLMRequest, ProviderConfig
from .base import BatchStatus, ItemOutcome, Limits, check_limits, malformed

STATE = {
    "JOB_STATE_UNSPECIFIED": "running",
    "JOB_STATE_QUEUED": "running",
    "JOB_STATE_PENDING": "running",
    "JOB_STATE_RUNNING": "running",
    "JOB_STATE_CANCELLING": "running",
    "JOB_STATE_UPDATING": "running",
    "JOB_STATE_PAUSED": "running",
    "JOB_STATE_SUCCEEDED": "ended",
    "JOB_STATE_PARTIALLY_SUCCEEDED": "ended",
    "JOB_STATE_FAILED": "failed",
    "JOB_STATE_CANCELLED": "cancelled",
    "JOB_STATE_EXPIRED": "expired",
}

# inlined requests: "keep the total request size under 20MB" (Gemini batch mode docs); larger batches
# would go through an uploaded JSONL file, which is not done here
LIMITS = Limits(max_items=None, max_bytes=20 * 1000 * 1000)

# google.rpc.Code of an inlined error → our kind
RPC_KIND = {
    3: ErrorKind.BAD_REQUEST,  # INVALID_ARGUMENT
    4: ErrorKind.TIMEOUT,  # DEADLINE_EXCEEDED
    5: ErrorKind.NOT_FOUND,
    7: ErrorKind.AUTH,  # PERMISSION_DENIED
    8: ErrorKind.RATE_LIMIT,  # RESOURCE_EXHAUSTED
    9: ErrorKind.BAD_REQUEST,  # FAILED_PRECONDITION
    13: ErrorKind.SERVER,  # INTERNAL
    14: ErrorKind.OVERLOADED,  # UNAVAILABLE
    16: ErrorKind.AUTH,  # UNAUTHENTICATED
}


class _Capture:
    """The JSON bodies the SDK received, in order (a response event hook)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, response: httpx2.Response) -> None:
        response.read()
        try:
            data = response.json()
        except ValueError:
            return
        if isinstance(data, dict):
            self.bodies.append(data)

    def last(self) -> dict[str, Any]:
        return self.bodies[-1] if self.bodies else {}


@contextmanager
def _client(config: ProviderConfig, http_client: Any) -> Iterator[tuple[genai.Client, _Capture]]:
    """The direct path's client (policy check, one attempt) on an HTTP client whose responses we also read:
    ours (never following redirects) or the caller's with our hook added for the call."""
    capture = _Capture()
    if http_client is None:
        owned = httpx2.Client(follow_redirects=False, event_hooks={"response": [capture]})
        try:
            yield client_for(config, owned), capture
        finally:
            owned.close()
        return
    hooks = {name: list(found) for name, found in http_client.event_hooks.items()}
    http_client.event_hooks = {**hooks, "response": [*hooks.get("response", []), capture]}
    try:
        yield client_for(config, http_client), capture
    finally:
        http_client.event_hooks = hooks


@contextmanager
def _sdk_errors() -> Iterator[None]:
    """The direct path's error translation, plus the SDK's refusal of a malformed batch name or answer."""
    with sdk_errors():
        try:
            yield
        except pydantic.ValidationError as exc:  # an answer the SDK's types refuse
            raise ProviderError(
                f"invalid response: {exc.error_count()} invalid field(s)",
                kind=ErrorKind.OTHER,
                retryable=True,
            ) from exc
        except ValueError as exc:
            raise ProviderError(f"Gemini batch: {exc}", kind=ErrorKind.CONFIG) from exc


class GoogleBatch:
    def submit(
        self, items: Sequence[tuple[str, LLMRequest]], config: ProviderConfig, http_client: Any
    ) -> str:
        with _client(config, http_client) as (client, _):
            requests = [
                gtypes.InlinedRequest(
                    contents=contents_for(request),
                    config=build_config(request, config),
                    metadata={"custom_id": custom_id},
                )
                for custom_id, request in items
            ]
            check_limits(config, LIMITS, items=len(requests), size=sum(_size(r) for _, r in items))
            with _sdk_errors():
                job = client.batches.create(
                    model=config.model,
                    src=gtypes.BatchJobSource(inlined_requests=requests),
                    config=gtypes.CreateBatchJobConfig(display_name=f"physalign-{config.name}"[:128]),
                )
        if not job.name:
            raise ProviderError(
                "Gemini returned a batch without a name.", kind=ErrorKind.SERVER, retryable=True
            )
        return job.name

    def status(self, batch_id: str, config: ProviderConfig, http_client: Any) -> BatchStatus:
        with _client(config, http_client) as (client, capture), _sdk_errors():
            try:
                job = client.batches.get(name=batch_id)
                name = job.state.name if job.state is not None else "JOB_STATE_UNSPECIFIED"
            except pydantic.ValidationError:  # a malformed inlined response: the state is still readable
                name = _raw_state(capture.last())
        raw = capture.last()
        metadata = _dict(raw.get("metadata"))
        stats = _dict(metadata.get("batchStats"))
        state = STATE.get(name, "failed")
        error = ""
        if isinstance(raw.get("error"), dict):
            error = str(raw["error"].get("message") or raw["error"])
        if state == "failed" and not error:
            error = f"batch {name}"
        return BatchStatus(
            state=state,
            total=_count(stats, "requestCount"),
            succeeded=_count(stats, "successfulRequestCount"),
            errored=_count(stats, "failedRequestCount"),
            error=error[:2000],
        )

    def results(self, batch_id: str, config: ProviderConfig, http_client: Any) -> dict[str, ItemOutcome]:
        with _client(config, http_client) as (client, capture), _sdk_errors():
            try:
                job = client.batches.get(name=batch_id)
            except pydantic.ValidationError:
                job = None
        raw = capture.last()
        metadata = _dict(raw.get("metadata"))
        output = _dict(metadata.get("output"))
        raw_items = _dict(output.get("inlinedResponses")).get("inlinedResponses")
        if not isinstance(raw_items, list):
            raw_items = []
        if job is not None:
            if job.dest is not None and job.dest.file_name and not job.dest.inlined_responses:
                raise ProviderError(
                    f"Gemini batch {batch_id} wrote its results to a file ({job.dest.file_name}); "
                    "only inlined responses are read here.",
                    kind=ErrorKind.OTHER,
                )
            parsed = list(job.dest.inlined_responses or []) if job.dest is not None else []
            pairs: list[tuple[Any, gtypes.InlinedResponse | None]] = [
                (raw_items[i] if i < len(raw_items) else {}, item) for i, item in enumerate(parsed)
            ]
        else:  # validate each response on its own: only the malformed one fails
            pairs = [(entry, _validated(entry)) for entry in raw_items]
        outcomes: dict[str, ItemOutcome] = {}
        for number, (entry, item) in enumerate(pairs, start=1):
            raw_entry = entry if isinstance(entry, dict) else {"entry": entry}
            custom_id = _custom_id(item, raw_entry)
            if custom_id is None:
                continue  # nothing to map it to: the item is simply absent
            outcomes[custom_id] = _outcome(item, raw_entry, number)
        return outcomes

    def cancel(self, batch_id: str, config: ProviderConfig, http_client: Any) -> None:
        with _client(config, http_client) as (client, _), _sdk_errors():
            client.batches.cancel(name=batch_id)


def _size(request: LLMRequest) -> int:
    """The JSON size of one inlined request, closely enough: texts, base64 images and some structure."""
    images = sum(4 * -(-len(i.data) // 3) + 64 for i in request.images)
    return len(request.system.encode("utf-8")) + len(request.user.encode("utf-8")) + images + 256


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _raw_state(raw: dict[str, Any]) -> str:
    metadata = _dict(raw.get("metadata"))
    state = str(metadata.get("state") or "JOB_STATE_UNSPECIFIED")
    return state.replace("BATCH_STATE_", "JOB_STATE_", 1)


def _count(stats: dict[str, Any], key: str) -> int:
    try:
        return max(int(stats.get(key) or 0), 0)  # int64 fields arrive as JSON strings
    except (TypeError, ValueError):
        return 0


def _validated(entry: Any) -> gtypes.InlinedResponse | None:
    try:
        return gtypes.InlinedResponse.model_validate(entry)
    except pydantic.ValidationError:
        return None


def _custom_id(item: gtypes.InlinedResponse | None, raw: dict[str, Any]) -> str | None:
    metadata = item.metadata if item is not None and item.metadata else raw.get("metadata")
    value = metadata.get("custom_id") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) and value else None


def _outcome(item: gtypes.InlinedResponse | None, raw: dict[str, Any], number: int) -> ItemOutcome:
    if item is None:
        return malformed(raw, f"response {number} does not parse")
    if item.error is not None:
        code = int(item.error.code or 0)
        kind = (
            kind_for_status(code, item.error.message or "")
            if code >= 100
            else RPC_KIND.get(code, ErrorKind.OTHER)
        )
        return ItemOutcome(
            raw=raw, error=ProviderError(f"code {code}: {item.error.message or ''}".strip(), kind=kind)
        )
    if item.response is None:
        return malformed(raw, f"response {number} has neither a response nor an error")
    try:
        return ItemOutcome(raw=raw, reply=reply_from_response(item.response))
    except (AttributeError, TypeError, ValueError) as exc:
        return malformed(raw, f"response {number}: {exc}")
