"""A real local HTTP server that speaks OpenAI, Anthropic and Gemini — direct calls and batch APIs.

For tests only (no network): a ``ThreadingHTTPServer`` on 127.0.0.1 with an OS-chosen port, run in a
thread. Each provider lives under its own prefix, so one server serves all three SDKs::

    with BatchServer() as server:
        config = ProviderConfig(..., provider="openai", base_url=server.url("openai"),
                                endpoint_policy=EndpointPolicy(allow_private_urls=True))
        generate(request, config)                  # POST /openai/v1/chat/completions
        batch_submit([("r1", request)], config)    # POST /openai/v1/files, POST /openai/v1/batches
        server.direct_calls("openai"), server.batch_calls("openai"), server.seen, server.calls

``url(provider)`` is the SDK's ``base_url``: ``…/openai/v1`` (OpenAI), ``…/anthropic`` (Anthropic),
``…/google`` (google-genai adds its API version). Endpoints:

- OpenAI: ``POST /v1/chat/completions``; ``POST /v1/files`` (multipart), ``GET /v1/files/{id}/content``;
  ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.
- Anthropic: ``POST /v1/messages``; ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results`` (JSONL), ``POST /v1/messages/batches/{id}/cancel``.
- Gemini (``/v1`` — google-genai's default — or ``/v1beta``): ``POST /v1/models/{model}:generateContent``;
  ``POST /v1/models/{model}:batchGenerateContent`` (inlined requests, each with ``metadata``),
  ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}:cancel``.

Answers are deterministic functions of what the model sees (system, user text, image bytes and media
types in order), identical in direct and batch mode, with the same usage numbers: by default the text
is ``{"answer": "<16 hex digits of a SHA-256>"}`` and usage is ``input = 10 + words + 100·images``,
``output = 5 + len(text) // 4``. Set ``server.answer`` / ``server.finish`` (functions of a ``Seen``) to
answer otherwise; ``finish`` returns ``"stop"``, ``"length"`` or ``"refusal"`` (each provider's form is
sent). Knobs, settable any time (read when a batch is created or polled):

- ``polls_before_done``: a batch answers "running" to this many status polls, then ends (default 0).
- ``fail_ids`` / ``expire_ids`` / ``malformed_ids``: custom ids answered as errored (a 400
  invalid-request error) / expired (Gemini: DEADLINE_EXCEEDED) / with an unreadable result line.
- ``fail_batch``: a message; a new batch then fails as a whole (OpenAI: status ``failed`` with it in
  ``errors``; Gemini: state FAILED with a top-level ``error``; Anthropic, which has no failed state:
  ``POST /v1/messages/batches`` answers HTTP 400 with it).
- ``expire_batch``: a new batch ends ``expired`` (OpenAI, Gemini), every item expired (Anthropic ends).
- ``anthropic_results_url``: the ``results_url`` an ended Anthropic batch names (default: this server).
- ``direct_status`` / ``batch_status``: an HTTP status (e.g. 503) every direct call / every batch-endpoint
  request answers with instead (0: answer normally).

Records: ``calls`` (every HTTP request: provider, mode "direct"/"batch", method, path, headers), ``seen``
(every model request, direct or a batch item: ``Seen`` with custom id, model, max tokens, system, user,
images), ``batches`` (id → ``ServerBatch``). All state is guarded by one lock.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

PROVIDERS = ("openai", "anthropic", "google")


@dataclass
class Seen:
    """One model request as the server read it off the wire."""

    provider: str
    mode: str  # "direct" | "batch"
    custom_id: str  # "" for a direct call
    model: str
    max_tokens: int | None
    system: str
    user: str
    images: list[tuple[str, bytes]]  # (media type, bytes), in the order sent
    body: dict[str, Any]  # the request body (a batch item's body/params/request) as sent


@dataclass
class Call:
    provider: str
    mode: str  # "direct" | "batch"
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class ServerBatch:
    id: str
    provider: str
    items: list[tuple[str, Seen]]  # (custom id, request) in submission order
    outcome: dict[str, str]  # custom id -> "ok" | "failed" | "expired" | "malformed" (fixed at creation)
    fail_message: str = ""
    expired: bool = False
    cancelled: bool = False
    polls: int = 0
    done: bool = False
    file_ids: dict[str, str] = field(default_factory=dict)  # OpenAI "output_file_id"/"error_file_id" -> id
    files: dict[str, bytes] = field(default_factory=dict)  # OpenAI file id -> content


def default_answer(seen: Seen) -> str:
    digest = hashlib.sha256()
    for chunk in (seen.system, seen.user):
        digest.update(chunk.encode("utf-8") + b"\0")
    for media_type, data in seen.images:
        digest.update(media_type.encode("ascii") + b"\0" + hashlib.sha256(data).digest())
    return json.dumps({"answer": digest.hexdigest()[:16]})


def usage_for(seen: Seen, text: str) -> tuple[int, int]:
    words = len(seen.system.split()) + len(seen.user.split())
    return 10 + words + 100 * len(seen.images), 5 + len(text) // 4


class BatchServer:
    def __init__(self) -> None:
        self.polls_before_done = 0
        self.fail_ids: set[str] = set()
        self.expire_ids: set[str] = set()
        self.malformed_ids: set[str] = set()
        self.fail_batch = ""
        self.expire_batch = False
        self.direct_status = 0
        self.batch_status = 0  # an HTTP status every batch-endpoint request answers with instead (0: answer)
        self.anthropic_results_url = (
            ""  # non-empty: the results URL Anthropic batches name (default: this server)
        )
        self.answer: Callable[[Seen], str] = default_answer
        self.finish: Callable[[Seen], str] = lambda seen: "stop"
        self.calls: list[Call] = []
        self.seen: list[Seen] = []
        self.batches: dict[str, ServerBatch] = {}
        self.lock = threading.RLock()
        self._ids = itertools.count(1)
        self._uploads: dict[str, bytes] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------ lifecycle

    def start(self) -> BatchServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                return

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="batch-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> BatchServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root(self) -> str:
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, provider: str) -> str:
        """The SDK ``base_url`` for ``provider``."""
        suffix = {"openai": "/openai/v1", "anthropic": "/anthropic", "google": "/google"}[provider]
        return self.root + suffix

    # ------------------------------------------------------------------------------------ records

    def direct_calls(self, provider: str | None = None) -> int:
        """Model calls made directly (one per request)."""
        with self.lock:
            return sum(1 for c in self.calls if c.mode == "direct" and provider in (None, c.provider))

    def batch_calls(self, provider: str | None = None) -> int:
        """HTTP requests to batch endpoints (uploads, creates, polls, result downloads, cancels)."""
        with self.lock:
            return sum(1 for c in self.calls if c.mode == "batch" and provider in (None, c.provider))

    def seen_in(self, mode: str, provider: str | None = None) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.mode == mode and provider in (None, s.provider)]

    def reset(self) -> None:
        """Forget the records (not the batches, not the knobs)."""
        with self.lock:
            self.calls.clear()
            self.seen.clear()

    # ------------------------------------------------------------------------------------ dispatch

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        path = urlsplit(handler.path).path
        provider, _, rest = path.lstrip("/").partition("/")
        rest = "/" + rest
        try:
            if provider not in PROVIDERS:
                raise _Reply(404, {"error": {"message": f"no provider at {path}"}})
            route = getattr(self, f"_{provider}")
            status, payload, content_type = route(method, unquote(rest), body, handler)
        except _Reply as reply:
            status, payload, content_type = reply.status, reply.payload, "application/json"
        except Exception as exc:  # a request this server cannot read: answer, never drop the connection
            status, payload, content_type = (
                500,
                {"error": {"message": f"test server: {exc!r}"}},
                "application/json",
            )
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        handler.send_response(status)
        handler.send_header("content-type", content_type)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _record(
        self, provider: str, mode: str, method: str, path: str, handler: BaseHTTPRequestHandler
    ) -> None:
        with self.lock:
            self.calls.append(
                Call(provider, mode, method, path, {k.lower(): v for k, v in handler.headers.items()})
            )

    def _new_id(self, prefix: str) -> str:
        with self.lock:
            return f"{prefix}{next(self._ids):04d}"

    def _new_batch(self, provider: str, items: list[tuple[str, Seen]]) -> ServerBatch:
        with self.lock:
            outcome = {}
            for custom_id, _ in items:
                if custom_id in self.fail_ids:
                    outcome[custom_id] = "failed"
                elif custom_id in self.expire_ids:
                    outcome[custom_id] = "expired"
                elif custom_id in self.malformed_ids:
                    outcome[custom_id] = "malformed"
                else:
                    outcome[custom_id] = "ok"
            prefix = {"openai": "batch_", "anthropic": "msgbatch_", "google": "gb"}[provider]
            batch = ServerBatch(
                id=self._new_id(prefix),
                provider=provider,
                items=items,
                outcome=outcome,
                fail_message=self.fail_batch,
                expired=self.expire_batch,
            )
            self.batches[batch.id] = batch
            self.seen.extend(seen for _, seen in items)
            return batch

    def _poll(self, batch: ServerBatch) -> None:
        """One status poll: a batch ends after ``polls_before_done`` polls answered running."""
        with self.lock:
            if batch.done:
                return
            if batch.cancelled or batch.fail_message or batch.polls >= self.polls_before_done:
                batch.done = True
            else:
                batch.polls += 1

    def _item_result(self, seen: Seen) -> tuple[str, str, int, int]:
        text = self.answer(seen)
        finish = self.finish(seen)
        tokens_in, tokens_out = usage_for(seen, text)
        return text, finish, tokens_in, tokens_out

    def _item_state(self, batch: ServerBatch, custom_id: str) -> str:
        if batch.cancelled:
            return "cancelled"
        if batch.expired:
            return "expired"
        return batch.outcome[custom_id]

    def _batch(self, batch_id: str, provider: str) -> ServerBatch:
        batch = self.batches.get(batch_id)
        if batch is None or batch.provider != provider:
            raise _Reply(404, {"error": {"message": f"no batch {batch_id}", "type": "not_found_error"}})
        return batch

    def _batch_status(self) -> None:
        if self.batch_status:
            raise _Reply(self.batch_status, {"error": {"message": "unavailable", "type": "api_error"}})

    def _direct_status(self) -> None:
        if self.direct_status:
            raise _Reply(self.direct_status, {"error": {"message": "unavailable", "type": "api_error"}})

    # ------------------------------------------------------------------------------------ OpenAI

    def _openai(self, method: str, path: str, body: bytes, handler: BaseHTTPRequestHandler) -> _Routed:
        if method == "POST" and path == "/v1/chat/completions":
            self._record("openai", "direct", method, path, handler)
            self._direct_status()
            request = json.loads(body)
            seen = _openai_seen(request, "direct", "")
            with self.lock:
                self.seen.append(seen)
            return 200, self._openai_completion(seen), "application/json"
        self._record("openai", "batch", method, path, handler)
        self._batch_status()
        if method == "POST" and path == "/v1/files":
            data, filename, purpose = _multipart_file(handler.headers.get("content-type", ""), body)
            file_id = self._new_id("file-")
            with self.lock:
                self._uploads[file_id] = data
            return 200, _openai_file(file_id, filename, purpose, len(data)), "application/json"
        if method == "GET" and (match := re.fullmatch(r"/v1/files/([^/]+)/content", path)):
            with self.lock:
                data = self._uploads.get(match.group(1))
                if data is None:
                    for batch in self.batches.values():
                        data = batch.files.get(match.group(1), data)
            if data is None:
                raise _Reply(404, {"error": {"message": "no such file"}})
            return 200, data, "application/octet-stream"
        if method == "POST" and path == "/v1/batches":
            request = json.loads(body)
            if request.get("endpoint") != "/v1/chat/completions" or request.get("completion_window") != "24h":
                raise _Reply(400, {"error": {"message": "unsupported endpoint or window"}})
            with self.lock:
                data = self._uploads.get(request.get("input_file_id", ""))
            if data is None:
                raise _Reply(400, {"error": {"message": "no such input file"}})
            items = []
            for line in data.decode("utf-8").splitlines():
                entry = json.loads(line)
                if entry.get("method") != "POST" or entry.get("url") != "/v1/chat/completions":
                    raise _Reply(400, {"error": {"message": "bad batch line"}})
                items.append((entry["custom_id"], _openai_seen(entry["body"], "batch", entry["custom_id"])))
            batch = self._new_batch("openai", items)
            return 200, self._openai_batch(batch, request["input_file_id"]), "application/json"
        if method == "GET" and (match := re.fullmatch(r"/v1/batches/([^/]+)", path)):
            batch = self._batch(match.group(1), "openai")
            self._poll(batch)
            return 200, self._openai_batch(batch), "application/json"
        if method == "POST" and (match := re.fullmatch(r"/v1/batches/([^/]+)/cancel", path)):
            batch = self._batch(match.group(1), "openai")
            with self.lock:
                batch.cancelled = not batch.done
                payload = self._openai_batch(batch)
                if batch.cancelled:
                    payload["status"] = "cancelling"
            return 200, payload, "application/json"
        raise _Reply(404, {"error": {"message": f"no route {method} {path}"}})

    def _openai_completion(self, seen: Seen, completion_id: str = "chatcmpl-1") -> dict[str, Any]:
        text, finish, tokens_in, tokens_out = self._item_result(seen)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        reason = {"stop": "stop", "length": "length", "refusal": "stop"}[finish]
        if finish == "refusal":
            message = {"role": "assistant", "content": None, "refusal": text}
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": seen.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }

    def _openai_batch(self, batch: ServerBatch, input_file_id: str = "file-input") -> dict[str, Any]:
        with self.lock:
            total = len(batch.items)
            payload: dict[str, Any] = {
                "id": batch.id,
                "object": "batch",
                "endpoint": "/v1/chat/completions",
                "input_file_id": input_file_id,
                "completion_window": "24h",
                "created_at": 1_700_000_000,
                "status": "validating",
                "request_counts": {"total": total, "completed": 0, "failed": 0},
            }
            if not batch.done:
                if batch.polls:
                    payload["status"] = "in_progress"
                    # progress: a share of the items per poll, never all before the end
                    done = min(total - 1, total * batch.polls // (self.polls_before_done + 1))
                    payload["request_counts"]["completed"] = max(done, 0)
                return payload
            if batch.fail_message:
                payload["status"] = "failed"
                payload["errors"] = {
                    "object": "list",
                    "data": [{"code": "invalid_request", "message": batch.fail_message, "line": 1}],
                }
                return payload
            if not batch.file_ids:
                self._openai_files(batch)
            payload["status"] = (
                "cancelled" if batch.cancelled else "expired" if batch.expired else "completed"
            )
            ok = sum(1 for cid, _ in batch.items if self._item_state(batch, cid) in ("ok", "malformed"))
            payload["request_counts"] = {"total": total, "completed": ok, "failed": total - ok}
            payload.update(batch.file_ids)
            return payload

    def _openai_files(self, batch: ServerBatch) -> None:
        output: list[str] = []
        errors: list[str] = []
        for number, (custom_id, seen) in enumerate(batch.items, start=1):
            state = self._item_state(batch, custom_id)
            line: dict[str, Any] = {"id": f"batch_req_{number}", "custom_id": custom_id, "error": None}
            if state == "ok":
                body = self._openai_completion(seen, f"chatcmpl-{batch.id}-{number}")
                line["response"] = {"status_code": 200, "request_id": f"req_{number}", "body": body}
                output.append(json.dumps(line))
            elif state == "malformed":
                body = self._openai_completion(seen, f"chatcmpl-{batch.id}-{number}")
                line["response"] = {"status_code": 200, "request_id": f"req_{number}", "body": body}
                output.append(json.dumps(line)[:60])  # cut short: not JSON
            elif state == "failed":
                line["response"] = {
                    "status_code": 400,
                    "request_id": f"req_{number}",
                    "body": {"error": {"message": "Invalid image.", "type": "invalid_request_error"}},
                }
                errors.append(json.dumps(line))
            else:
                code = "batch_cancelled" if state == "cancelled" else "batch_expired"
                line["response"] = None
                line["error"] = {"code": code, "message": f"This request was not executed ({state})."}
                errors.append(json.dumps(line))
        for name, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                file_id = self._new_id("file-")
                batch.file_ids[name] = file_id
                batch.files[file_id] = ("\n".join(lines) + "\n").encode("utf-8")

    # ------------------------------------------------------------------------------------ Anthropic

    def _anthropic(self, method: str, path: str, body: bytes, handler: BaseHTTPRequestHandler) -> _Routed:
        if method == "POST" and path == "/v1/messages":
            self._record("anthropic", "direct", method, path, handler)
            self._direct_status()
            seen = _anthropic_seen(json.loads(body), "direct", "")
            with self.lock:
                self.seen.append(seen)
            return 200, self._anthropic_message(seen), "application/json"
        self._record("anthropic", "batch", method, path, handler)
        self._batch_status()
        if method == "POST" and path == "/v1/messages/batches":
            if self.fail_batch:
                raise _Reply(
                    400,
                    {"type": "error", "error": {"type": "invalid_request_error", "message": self.fail_batch}},
                )
            request = json.loads(body)
            items = [
                (entry["custom_id"], _anthropic_seen(entry["params"], "batch", entry["custom_id"]))
                for entry in request["requests"]
            ]
            batch = self._new_batch("anthropic", items)
            return 200, self._anthropic_batch(batch), "application/json"
        if method == "GET" and (match := re.fullmatch(r"/v1/messages/batches/([^/]+)", path)):
            batch = self._batch(match.group(1), "anthropic")
            self._poll(batch)
            return 200, self._anthropic_batch(batch), "application/json"
        if method == "GET" and (match := re.fullmatch(r"/v1/messages/batches/([^/]+)/results", path)):
            batch = self._batch(match.group(1), "anthropic")
            if not batch.done:
                raise _Reply(
                    400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not ended"}}
                )
            return 200, self._anthropic_results(batch), "application/binary"
        if method == "POST" and (match := re.fullmatch(r"/v1/messages/batches/([^/]+)/cancel", path)):
            batch = self._batch(match.group(1), "anthropic")
            with self.lock:
                batch.cancelled = not batch.done
            return 200, self._anthropic_batch(batch, canceling=batch.cancelled), "application/json"
        raise _Reply(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

    def _anthropic_message(self, seen: Seen, message_id: str = "msg_1") -> dict[str, Any]:
        text, finish, tokens_in, tokens_out = self._item_result(seen)
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": seen.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": {"stop": "end_turn", "length": "max_tokens", "refusal": "refusal"}[finish],
            "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }

    def _anthropic_batch(self, batch: ServerBatch, *, canceling: bool = False) -> dict[str, Any]:
        with self.lock:
            counts = {
                "processing": len(batch.items),
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            }
            payload: dict[str, Any] = {
                "id": batch.id,
                "type": "message_batch",
                "processing_status": "canceling" if canceling else "in_progress",
                "request_counts": counts,
                "created_at": "2026-12-01T00:00:00Z",
                "expires_at": "2026-12-02T00:00:00Z",
                "ended_at": None,
                "cancel_initiated_at": "2026-12-01T00:01:00Z" if batch.cancelled else None,
                "archived_at": None,
                "results_url": None,
            }
            if batch.done:
                counts["processing"] = 0
                for custom_id, _ in batch.items:
                    state = self._item_state(batch, custom_id)
                    key = {"ok": "succeeded", "malformed": "succeeded", "failed": "errored"}.get(
                        state, "canceled" if state == "cancelled" else "expired"
                    )
                    counts[key] += 1
                payload["processing_status"] = "ended"
                payload["ended_at"] = "2026-12-01T00:02:00Z"
                payload["results_url"] = (
                    self.anthropic_results_url
                    or f"{self.url('anthropic')}/v1/messages/batches/{batch.id}/results"
                )
            return payload

    def _anthropic_results(self, batch: ServerBatch) -> bytes:
        lines: list[str] = []
        # results come in no particular order: reversed, to prove the mapping is by custom id
        for number, (custom_id, seen) in reversed(list(enumerate(batch.items, start=1))):
            state = self._item_state(batch, custom_id)
            if state == "ok":
                result: dict[str, Any] = {
                    "type": "succeeded",
                    "message": self._anthropic_message(seen, f"msg_{batch.id}_{number}"),
                }
            elif state == "malformed":
                cut = json.dumps({"custom_id": custom_id, "result": {"type": "succeeded", "message": {}}})
                lines.append(cut[:45])  # cut short: not JSON
                continue
            elif state == "failed":
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": "Invalid image."},
                    },
                }
            else:
                result = {"type": "canceled" if state == "cancelled" else "expired"}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}))
        return ("\n".join(lines) + "\n").encode("utf-8")

    # ------------------------------------------------------------------------------------ Gemini

    def _google(self, method: str, path: str, body: bytes, handler: BaseHTTPRequestHandler) -> _Routed:
        if method == "POST" and (
            match := re.fullmatch(r"/v1(?:beta)?/models/([^/:]+):generateContent", path)
        ):
            self._record("google", "direct", method, path, handler)
            self._direct_status()
            seen = _gemini_seen(json.loads(body), match.group(1), "direct", "")
            with self.lock:
                self.seen.append(seen)
            return 200, self._gemini_response(seen), "application/json"
        self._record("google", "batch", method, path, handler)
        self._batch_status()
        if method == "POST" and (
            match := re.fullmatch(r"/v1(?:beta)?/models/([^/:]+):batchGenerateContent", path)
        ):
            model = match.group(1)
            request = json.loads(body)["batch"]
            entries = request["inputConfig"]["requests"]["requests"]
            items = []
            for index, entry in enumerate(entries):
                custom_id = str((entry.get("metadata") or {}).get("custom_id") or f"#{index}")
                inner = entry["request"]
                inner_model = str(inner.get("model") or model).removeprefix("models/")
                items.append((custom_id, _gemini_seen(inner, inner_model, "batch", custom_id)))
            batch = self._new_batch("google", items)
            return 200, self._gemini_operation(batch, model), "application/json"
        if method == "GET" and (match := re.fullmatch(r"/v1(?:beta)?/batches/([^/:]+)", path)):
            batch = self._batch(match.group(1), "google")
            self._poll(batch)
            return 200, self._gemini_operation(batch), "application/json"
        if method == "POST" and (match := re.fullmatch(r"/v1(?:beta)?/batches/([^/:]+):cancel", path)):
            batch = self._batch(match.group(1), "google")
            with self.lock:
                batch.cancelled = not batch.done
            return 200, {}, "application/json"
        raise _Reply(404, {"error": {"code": 404, "message": path, "status": "NOT_FOUND"}})

    def _gemini_response(self, seen: Seen) -> dict[str, Any]:
        text, finish, tokens_in, tokens_out = self._item_result(seen)
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": {"stop": "STOP", "length": "MAX_TOKENS", "refusal": "SAFETY"}[finish],
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": tokens_in,
                "candidatesTokenCount": tokens_out,
                "totalTokenCount": tokens_in + tokens_out,
            },
            "modelVersion": seen.model,
        }

    def _gemini_operation(self, batch: ServerBatch, model: str = "") -> dict[str, Any]:
        with self.lock:
            total = len(batch.items)
            model = model or (batch.items[0][1].model if batch.items else "")
            metadata: dict[str, Any] = {
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
                "model": f"models/{model}",
                "displayName": batch.id,
                "name": f"batches/{batch.id}",
                "createTime": "2026-12-01T00:00:00Z",
                "state": "BATCH_STATE_PENDING",
                # int64 fields arrive as strings in JSON, as from the real API
                "batchStats": {"requestCount": str(total), "pendingRequestCount": str(total)},
            }
            operation: dict[str, Any] = {"name": f"batches/{batch.id}", "metadata": metadata}
            if not batch.done:
                if batch.polls:
                    metadata["state"] = "BATCH_STATE_RUNNING"
                    done = max(min(total - 1, total * batch.polls // (self.polls_before_done + 1)), 0)
                    metadata["batchStats"] = {
                        "requestCount": str(total),
                        "successfulRequestCount": str(done),
                        "pendingRequestCount": str(total - done),
                    }
                return operation
            operation["done"] = True
            if batch.fail_message:
                metadata["state"] = "BATCH_STATE_FAILED"
                operation["error"] = {"code": 3, "message": batch.fail_message}
                return operation
            if batch.cancelled:
                metadata["state"] = "BATCH_STATE_CANCELLED"
                return operation
            if batch.expired:
                metadata["state"] = "BATCH_STATE_EXPIRED"
                return operation
            responses: list[dict[str, Any]] = []
            good = 0
            for custom_id, seen in batch.items:
                state = self._item_state(batch, custom_id)
                entry: dict[str, Any] = {"metadata": {"custom_id": custom_id}}
                if state == "ok":
                    entry["response"] = self._gemini_response(seen)
                    good += 1
                elif state == "malformed":
                    entry["response"] = {
                        "candidates": "not a list",
                        "usageMetadata": {"promptTokenCount": "x"},
                    }
                    good += 1
                elif state == "failed":
                    entry["error"] = {"code": 3, "message": "Invalid image."}
                else:
                    entry["error"] = {"code": 4, "message": "Deadline exceeded before the request ran."}
                responses.append(entry)
            metadata["state"] = "BATCH_STATE_SUCCEEDED"
            metadata["endTime"] = "2026-12-01T00:02:00Z"
            metadata["batchStats"] = {
                "requestCount": str(total),
                "successfulRequestCount": str(good),
                "failedRequestCount": str(total - good),
            }
            output = {"inlinedResponses": {"inlinedResponses": responses}}
            metadata["output"] = output
            operation["response"] = {
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatchOutput",
                **output,
            }
            return operation


_Routed = tuple[int, Any, str]


class _Reply(Exception):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(status)
        self.status = status
        self.payload = payload


def _b64(text: str) -> bytes:
    """Base64 as protobuf's JSON reader takes it: standard or URL-safe, padded or not (google-genai
    sends image bytes URL-safe inside a batch, standard in a direct call)."""
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def _data_url(url: str) -> tuple[str, bytes]:
    match = re.fullmatch(r"data:([^;,]+);base64,(.*)", url, re.S)
    if match is None:
        raise _Reply(400, {"error": {"message": "image_url must be a base64 data URL"}})
    return match.group(1), base64.b64decode(match.group(2))


def _openai_seen(body: dict[str, Any], mode: str, custom_id: str) -> Seen:
    system, user, images = "", "", []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system":
            system = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            continue
        for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if part.get("type") == "text":
                user += part["text"]
            elif part.get("type") == "image_url":
                images.append(_data_url(part["image_url"]["url"]))
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return Seen("openai", mode, custom_id, body.get("model", ""), cap, system, user, images, body)


def _anthropic_seen(body: dict[str, Any], mode: str, custom_id: str) -> Seen:
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "".join(block.get("text", "") for block in system)
    user, images = "", []
    for message in body.get("messages", []):
        for block in message.get("content", []):
            if block.get("type") == "text":
                user += block["text"]
            elif block.get("type") == "image":
                source = block["source"]
                images.append((source["media_type"], base64.b64decode(source["data"])))
    return Seen(
        "anthropic",
        mode,
        custom_id,
        body.get("model", ""),
        body.get("max_tokens"),
        system,
        user,
        images,
        body,
    )


def _gemini_seen(body: dict[str, Any], model: str, mode: str, custom_id: str) -> Seen:
    instruction = body.get("systemInstruction") or body.get("system_instruction") or {}
    system = "".join(p.get("text", "") for p in instruction.get("parts", []))
    user, images = "", []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if "text" in part:
                user += part["text"]
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                images.append((inline.get("mimeType") or inline.get("mime_type"), _b64(inline["data"])))
    generation = body.get("generationConfig") or body.get("generation_config") or {}
    cap = generation.get("maxOutputTokens", generation.get("max_output_tokens"))
    return Seen("google", mode, custom_id, model, cap, system, user, images, body)


def _multipart_file(content_type: str, body: bytes) -> tuple[bytes, str, str]:
    """The ``file`` part (bytes, filename) and the ``purpose`` field of an OpenAI upload."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"content-type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    data, filename, purpose = b"", "", ""
    for part in message.iter_parts():  # type: ignore[attr-defined]
        name = part.get_param("name", header="content-disposition")
        if name == "file":
            data = part.get_payload(decode=True) or b""
            filename = part.get_filename() or ""
        elif name == "purpose":
            purpose = part.get_content().strip()
    if purpose != "batch" or not data:
        raise _Reply(400, {"error": {"message": f"upload needs a file and purpose=batch, not {purpose!r}"}})
    return data, filename, purpose


def _openai_file(file_id: str, filename: str, purpose: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
    }
