"""A local OpenAI-compatible Chat Completions server with a fixed latency, for benchmarks (loopback only).

    .venv/bin/python bench/_openai_server.py --port 0 --latency-ms 50     # prints "listening on PORT"

``POST /v1/chat/completions`` sleeps ``--latency-ms`` and answers a fixed completion, over HTTP/1.1 keep-alive,
one thread per connection (as many in flight as clients send). It is the meter both sides of a comparison are
read with: ``GET /stats`` returns how many completions it served, the first arrival and the last reply
(``time.monotonic`` of this process) and the most it had in flight at once; ``POST /reset`` clears them.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY_TEXT = "The answer is A."


class _Meter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.served = 0
        self.first_arrival: float | None = None
        self.last_reply: float | None = None
        self.in_flight = 0
        self.peak_in_flight = 0

    def arrive(self) -> None:
        with self.lock:
            now = time.monotonic()
            self.first_arrival = now if self.first_arrival is None else self.first_arrival
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def reply(self) -> None:
        with self.lock:
            self.in_flight -= 1
            self.served += 1
            self.last_reply = time.monotonic()

    def snapshot(self) -> dict[str, float | int | None]:
        with self.lock:
            return {
                "served": self.served,
                "first_arrival": self.first_arrival,
                "last_reply": self.last_reply,
                "peak_in_flight": self.peak_in_flight,
            }


def _completion(model: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": REPLY_TEXT},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
        }
    ).encode()


def serve(port: int, latency_s: float) -> None:
    meter = _Meter()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect

        def log_message(self, *args: object) -> None:  # quiet: thousands of requests
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/stats":
                self._send(200, json.dumps(meter.snapshot()).encode())
            else:
                self._send(404, b'{"error": {"message": "not found"}}')

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/reset":
                meter.reset()
                self._send(200, b"{}")
                return
            if not self.path.endswith("/chat/completions"):
                self._send(
                    404,
                    json.dumps(
                        {"error": {"message": f"only chat completions here, not {self.path}"}}
                    ).encode(),
                )
                return
            meter.arrive()
            try:
                model = json.loads(body or b"{}").get("model", "bench")
                time.sleep(latency_s)
                self._send(200, _completion(model))
            finally:
                meter.reply()

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    arguments = parser.parse_args()
    serve(arguments.port, arguments.latency_ms / 1000.0)
