"""Done-when scenario: ``manage.py draft --pass 1`` against a local OpenAI-compatible HTTP server
(real sockets, the real openai SDK), over the demo problems."""

from __future__ import annotations

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command

from annotation.models import DraftRun, LLMDraft, ParentProblem

FLAKY, BAD_REQUEST, MALFORMED = "ostx_up_002", "ostx_up_003", "ostx_up_004"


class FakeOpenAI(BaseHTTPRequestHandler):
    received: list[dict] = []
    hits: dict[str, int] = {}
    lock = threading.Lock()

    def log_message(self, *args):  # keep test output clean
        pass

    def _reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = body["messages"][-1]["content"][0]["text"]
        problem_id = user.split("[Problem ID]\n", 1)[1].split("\n", 1)[0]
        with self.lock:
            self.received.append({"path": self.path, "problem_id": problem_id, "body": body})
            self.hits[problem_id] = self.hits.get(problem_id, 0) + 1
            hit = self.hits[problem_id]
        if problem_id == FLAKY and hit <= 2:
            return self._reply(
                429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"Retry-After": "0"}
            )
        if problem_id == BAD_REQUEST:
            return self._reply(
                400, {"error": {"message": "image too large", "type": "invalid_request_error"}}
            )
        images = [part for part in body["messages"][-1]["content"][1:]]
        if problem_id == MALFORMED:
            content = '{"problem_id": "' + problem_id + '", "visual_nodes": [ {"id": "v001",'
        else:
            content = json.dumps(
                {
                    "problem_id": problem_id,
                    "ambiguities": [],
                    "visual_nodes": [
                        {
                            "id": f"v{n:03d}",
                            "type": "region",
                            "subtype": "diagram",
                            "text": "",
                            "image_id": f"img_{n - 1}",
                            "bbox_1000": [10, 10, 900, 900],
                            "keypoints_1000": [],
                            "center_1000": [-1, -1],
                            "radius_1000": -1,
                            "confidence": "medium",
                        }
                        for n in range(1, len(images) + 1)
                    ],
                }
            )
        return self._reply(
            200,
            {
                "id": "chatcmpl-local",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200},
            },
        )


@pytest.fixture
def local_server():
    FakeOpenAI.received, FakeOpenAI.hits = [], {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_manage_draft_pass1_against_local_openai_compatible_server(local_server, settings):
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True  # the local mock server is on loopback
    call_command("load_demo", "--count", "0", "--no-users", stdout=io.StringIO())
    # the 26 OpenStax diagram problems (the text-only solving demo problems have nothing to draw on)
    ParentProblem.objects.exclude(problem_id__startswith="ostx_").delete()
    call_command(
        "add_model",
        "--name",
        "local",
        "--provider",
        "openai_compatible",
        "--model",
        "local-vision",
        "--base-url",
        local_server,
        "--price-in",
        "1",
        "--price-out",
        "4",
        "--rpm",
        "600",
        "--concurrency",
        "4",
        "--extra",
        '{"backoff_base_seconds": 0.01}',
        stdout=io.StringIO(),
    )
    parents = list(ParentProblem.objects.prefetch_related("images").order_by("problem_id"))
    assert len(parents) == 26

    out = io.StringIO()
    call_command("draft", "--pass", "1", "--all", "--model", "local", stdout=out)

    run = DraftRun.objects.get()
    drafts = {d.parent.problem_id: d for d in LLMDraft.objects.select_related("parent")}
    assert len(drafts) == 26 and run.total == 26 and run.finished_at is not None
    assert run.done == 24 and run.failed == 2 and run.status == DraftRun.Status.SUCCEEDED
    printed = out.getvalue()
    assert "26/26" in printed and "24 drafted" in printed and "2 failed" in printed

    # Every image, in order, as a data URL; never the answer or the solution.
    by_problem: dict[str, list[dict]] = {}
    for item in FakeOpenAI.received:
        by_problem.setdefault(item["problem_id"], []).append(item)
    assert set(by_problem) == {p.problem_id for p in parents}
    for parent in parents:
        for item in by_problem[parent.problem_id]:
            assert item["path"] == "/v1/chat/completions"
            parts = item["body"]["messages"][-1]["content"]
            expected = []
            for image in parent.images.order_by("ordinal"):
                with image.file.open("rb") as handle:
                    expected.append(
                        f"data:{image.media_type};base64,{base64.b64encode(handle.read()).decode()}"
                    )
            assert [p["image_url"]["url"] for p in parts[1:]] == expected
            assert expected  # the demo problems all have images
            sent = json.dumps(item["body"], ensure_ascii=False)
            for secret in (parent.answer, parent.solution):
                if secret and len(secret.strip()) >= 6:
                    assert secret not in sent, parent.problem_id

    # 429, 429, 200 → a draft after three attempts.
    flaky = drafts[FLAKY]
    assert FakeOpenAI.hits[FLAKY] == 3 and len(flaky.attempts) == 3
    assert [a["status_code"] for a in flaky.attempts] == [429, 429, None]
    assert flaky.status == LLMDraft.Status.READY and flaky.parsed_document["problem_id"] == FLAKY
    # 400 is not retried.
    bad = drafts[BAD_REQUEST]
    assert FakeOpenAI.hits[BAD_REQUEST] == 1 and len(bad.attempts) == 1
    assert bad.status == LLMDraft.Status.FAILED and "400" in bad.error and bad.parsed_document is None
    # Malformed output → a failed draft carrying its parse error and the raw output.
    malformed = drafts[MALFORMED]
    assert malformed.status == LLMDraft.Status.FAILED and malformed.error.startswith(
        "The output is not valid JSON"
    )
    assert malformed.validation_errors[0]["code"] == "PARSE_ERROR" and malformed.raw_output.endswith(
        '"v001",'
    )
    # Records: usage, cost, prompt version, request record without image bytes.
    ok = drafts["ostx_up_001"]
    assert ok.status == LLMDraft.Status.READY and ok.validation_errors == []
    assert ok.usage == {"input_tokens": 1000, "output_tokens": 200, "reasoning_tokens": 0}
    assert str(ok.cost_usd) == "0.001800" and ok.prompt_version == "draft-p1-v1"
    assert ok.request_record["images"][0]["sha256"] and "base64" not in json.dumps(ok.request_record)
    assert str(run.cost_usd) == f"{0.0018 * 25:.6f}"  # the malformed answer was paid for too
