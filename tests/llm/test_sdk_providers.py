"""Each SDK provider through its real SDK against an injected httpx2 MockTransport (no network)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from decimal import Decimal

import httpx2
import pytest

from llm import ErrorKind, ImageInput, LLMRequest, OutputStatus, ProviderConfig, generate

PNG_A = b"\x89PNG-first-image"
PNG_B = b"\x89PNG-second-image"
REQUEST = LLMRequest(
    system="Be exact.", user="Which block?", images=(ImageInput(PNG_A), ImageInput(PNG_B, "image/jpeg"))
)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-test-secret")


class Server:
    """Replays ``responses`` in order (the last one repeats) and records every request."""

    def __init__(self, *responses: Callable[[httpx2.Request], httpx2.Response] | httpx2.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        item = self.responses[min(len(self.requests), len(self.responses)) - 1]
        return item(request) if callable(item) else item

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def body(self, index: int = 0) -> dict:
        return json.loads(self.requests[index].content)


def run(server: Server, config: ProviderConfig, request: LLMRequest = REQUEST):
    sleeps: list[float] = []
    result = generate(request, config, http_client=server.client(), sleep=sleeps.append)
    return result, sleeps


def cfg(provider: str, model: str, **kw) -> ProviderConfig:
    return ProviderConfig(
        name=f"{provider}-test", provider=provider, model=model, api_key_env="TEST_LLM_API_KEY", **kw
    )


# ---------------------------------------------------------------------------------------------- OpenAI


def chat_ok(content: str = '{"owner": "E2"}', finish: str = "stop", reasoning: int = 0) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": 1200,
                "completion_tokens": 300,
                "total_tokens": 1500,
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            },
        },
    )


def openai_error(status: int, headers: dict | None = None, message: str = "error") -> httpx2.Response:
    return httpx2.Response(status, headers=headers or {}, json={"error": {"message": message, "type": "x"}})


def test_openai_reasoning_model_payload_usage_and_cost():
    server = Server(chat_ok(reasoning=100))
    config = cfg(
        "openai",
        "o3",
        max_output_tokens=900,
        temperature=0.3,
        reasoning={"effort": "low"},
        price_in_per_mtok=Decimal("2"),
        price_out_per_mtok=Decimal("8"),
    )
    result, sleeps = run(server, config)
    body = server.body()
    assert body["model"] == "o3"
    assert body["max_completion_tokens"] == 900 and "max_tokens" not in body
    assert "temperature" not in body  # reasoning models accept only the default
    assert body["reasoning_effort"] == "low"
    assert body["messages"][0] == {"role": "system", "content": "Be exact."}
    parts = body["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "Which block?"}
    assert [p["image_url"]["url"] for p in parts[1:]] == [
        "data:image/png;base64," + base64.b64encode(PNG_A).decode(),
        "data:image/jpeg;base64," + base64.b64encode(PNG_B).decode(),
    ]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-secret"
    assert result.status == OutputStatus.COMPLETED and result.text == '{"owner": "E2"}'
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.reasoning_tokens) == (
        1200,
        200,
        100,
    )
    assert result.cost_usd == Decimal("0.004800")  # 1200*2/1e6 + 300*8/1e6
    assert len(result.attempts) == 1 and sleeps == []


def test_openai_chat_model_uses_max_tokens_and_temperature():
    server = Server(chat_ok())
    run(server, cfg("openai", "gpt-4o-2024-08-06", max_output_tokens=500, temperature=0.0))
    body = server.body()
    assert body["max_tokens"] == 500 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.0 and "reasoning_effort" not in body


def test_openai_429_twice_then_ok_honours_retry_after():
    server = Server(
        openai_error(429, {"retry-after": "7"}), openai_error(429, {"retry-after-ms": "2500"}), chat_ok()
    )
    result, sleeps = run(server, cfg("openai", "gpt-4o"))
    assert result.status == OutputStatus.COMPLETED
    assert len(server.requests) == 3 and [a.outcome for a in result.attempts] == ["error", "error", "ok"]
    assert [a.status_code for a in result.attempts[:2]] == [429, 429]
    assert sleeps[0] >= 7.0 and sleeps[1] >= 2.5
    assert [a.retry_after_s for a in result.attempts[:2]] == [7.0, 2.5]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, ErrorKind.BAD_REQUEST),
        (401, ErrorKind.AUTH),
        (403, ErrorKind.AUTH),
        (404, ErrorKind.NOT_FOUND),
        (422, ErrorKind.BAD_REQUEST),
    ],
)
def test_openai_client_errors_are_not_retried(status, kind):
    server = Server(openai_error(status))
    result, sleeps = run(server, cfg("openai", "gpt-4o"))
    assert result.status == OutputStatus.FAILED and result.error_kind == kind
    assert len(server.requests) == 1 and sleeps == []


def test_openai_content_filter_400_is_not_retried():
    server = Server(openai_error(400, message="Your request was rejected by the content_filter"))
    result, _ = run(server, cfg("openai", "gpt-4o"))
    assert result.error_kind == ErrorKind.CONTENT_FILTER and len(server.requests) == 1


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503])
def test_openai_retryable_statuses_give_three_attempts(status):
    server = Server(openai_error(status))
    result, sleeps = run(server, cfg("openai", "gpt-4o"))
    assert result.status == OutputStatus.FAILED and len(server.requests) == 3 and len(sleeps) == 2
    assert all(a.retryable for a in result.attempts)


def test_openai_connection_error_and_timeout_are_retried():
    def refuse(request):
        raise httpx2.ConnectError("connection refused", request=request)

    def slow(request):
        raise httpx2.ReadTimeout("read timed out", request=request)

    server = Server(refuse, slow, chat_ok())
    result, sleeps = run(server, cfg("openai", "gpt-4o"))
    assert [a.error_kind for a in result.attempts] == [ErrorKind.CONNECTION, ErrorKind.TIMEOUT, ""]
    assert result.status == OutputStatus.COMPLETED and len(sleeps) == 2


def test_openai_finish_reasons_map_to_truncated_and_refusal():
    result, _ = run(Server(chat_ok("{", finish="length")), cfg("openai", "gpt-4o"))
    assert result.status == OutputStatus.TRUNCATED
    result, _ = run(Server(chat_ok("", finish="content_filter")), cfg("openai", "gpt-4o"))
    assert result.status == OutputStatus.REFUSAL


def test_openai_missing_key_fails_without_a_request(monkeypatch):
    monkeypatch.delenv("TEST_LLM_API_KEY")
    server = Server(chat_ok())
    result, _ = run(server, cfg("openai", "gpt-4o"))
    assert result.error_kind == ErrorKind.CONFIG and server.requests == []
    assert "TEST_LLM_API_KEY" in result.error and "sk-test" not in result.error


def test_max_retries_setting_bounds_attempts():
    server = Server(openai_error(503))
    result, _ = run(server, cfg("openai", "gpt-4o", max_retries=0))
    assert len(server.requests) == 1 and result.status == OutputStatus.FAILED


# ---------------------------------------------------------------------------------------------- Anthropic


def message_ok(text: str = "ok", stop: str = "end_turn") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [
                {"type": "thinking", "thinking": "…", "signature": "s"},
                {"type": "text", "text": text},
            ],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 120},
        },
    )


def anthropic_error(status: int, error_type: str, headers: dict | None = None) -> httpx2.Response:
    return httpx2.Response(
        status,
        headers=headers or {},
        json={"type": "error", "error": {"type": error_type, "message": error_type}},
    )


# The budget-thinking form belongs to models the SDK now flags as deprecated; that is the point here.
@pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning")
def test_anthropic_budget_thinking_payload():
    server = Server(message_ok('{"referent": "E1"}'))
    result, _ = run(
        server,
        cfg(
            "anthropic",
            "claude-sonnet-4-5",
            max_output_tokens=4000,
            temperature=0.5,
            reasoning={"budget_tokens": 2048},
        ),
    )
    body = server.body()
    assert body["model"] == "claude-sonnet-4-5" and body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body and "output_config" not in body  # thinking forbids a custom temperature
    assert body["system"] == "Be exact."
    content = body["messages"][0]["content"]
    assert [c["type"] for c in content] == ["image", "image", "text"]
    assert [c["source"]["data"] for c in content[:2]] == [
        base64.b64encode(PNG_A).decode(),
        base64.b64encode(PNG_B).decode(),
    ]
    assert content[1]["source"]["media_type"] == "image/jpeg"
    assert "sk-test-secret" in (
        server.requests[0].headers.get("x-api-key", "") + server.requests[0].headers.get("authorization", "")
    )
    assert result.text == '{"referent": "E1"}' and result.usage.input_tokens == 900


def test_anthropic_adaptive_thinking_with_effort_and_default_cap():
    server = Server(message_ok())
    run(server, cfg("anthropic", "claude-opus-4-6", reasoning={"effort": "high"}))
    body = server.body()
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "high"}
    assert body["max_tokens"] == 8192


def test_anthropic_budget_form_rejected_for_adaptive_family_without_request():
    server = Server(message_ok())
    result, _ = run(server, cfg("anthropic", "claude-opus-4-6", reasoning={"budget_tokens": 2048}))
    assert result.error_kind == ErrorKind.CONFIG and server.requests == []


def test_anthropic_overloaded_then_ok_and_max_tokens_truncation():
    server = Server(
        anthropic_error(529, "overloaded_error"),
        anthropic_error(429, "rate_limit_error", {"retry-after": "3"}),
        message_ok("{", stop="max_tokens"),
    )
    result, sleeps = run(server, cfg("anthropic", "claude-3-5-haiku-latest"))
    assert [a.error_kind for a in result.attempts[:2]] == [ErrorKind.OVERLOADED, ErrorKind.RATE_LIMIT]
    assert sleeps[1] >= 3.0 and result.status == OutputStatus.TRUNCATED


def test_anthropic_bad_request_not_retried():
    server = Server(anthropic_error(400, "invalid_request_error"))
    result, _ = run(server, cfg("anthropic", "claude-3-5-haiku-latest"))
    assert len(server.requests) == 1 and result.error_kind == ErrorKind.BAD_REQUEST


# ---------------------------------------------------------------------------------------------- Google


def gemini_ok(text: str = '{"owner": "E1"}', finish: str = "STOP") -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": "thinking…", "thought": True}, {"text": text}],
                    },
                    "finishReason": finish,
                }
            ],
            "usageMetadata": {"promptTokenCount": 700, "candidatesTokenCount": 40, "thoughtsTokenCount": 60},
        },
    )


def gemini_error(status: int, state: str, headers: dict | None = None) -> httpx2.Response:
    return httpx2.Response(
        status,
        headers=headers or {},
        json={"error": {"code": status, "message": state.lower(), "status": state}},
    )


def test_gemini_3_thinking_level_payload_and_usage():
    server = Server(gemini_ok())
    result, _ = run(
        server,
        cfg(
            "google",
            "gemini-3-pro-preview",
            max_output_tokens=1000,
            temperature=0.1,
            reasoning={"level": "low"},
            price_in_per_mtok=Decimal("1"),
            price_out_per_mtok=Decimal("10"),
        ),
    )
    request = server.requests[0]
    assert request.url.path.endswith("/models/gemini-3-pro-preview:generateContent")
    assert request.headers["x-goog-api-key"] == "sk-test-secret"
    body = server.body()
    parts = body["contents"][0]["parts"]
    assert parts[0] == {"text": "Which block?"}
    assert [p["inlineData"]["data"] for p in parts[1:]] == [
        base64.b64encode(PNG_A).decode(),
        base64.b64encode(PNG_B).decode(),
    ]
    assert body["systemInstruction"]["parts"] == [{"text": "Be exact."}]
    config = body["generationConfig"]
    assert config["maxOutputTokens"] == 1000 and config["temperature"] == 0.1
    thinking = config["thinkingConfig"]
    assert set(thinking) == {"thinking_level"} or set(thinking) == {"thinkingLevel"}
    assert list(thinking.values()) == ["LOW"]
    assert result.text == '{"owner": "E1"}'  # thought parts are not the answer
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.reasoning_tokens) == (
        700,
        40,
        60,
    )
    assert result.cost_usd == Decimal("0.001700")


def test_gemini_25_budget_and_combination_refused():
    server = Server(gemini_ok())
    run(server, cfg("google", "gemini-2.5-flash", reasoning={"budget_tokens": 512}))
    assert list(server.body()["generationConfig"]["thinkingConfig"].values()) == [512]
    server = Server(gemini_ok())
    result, _ = run(server, cfg("google", "gemini-3-pro", reasoning={"budget_tokens": 512, "level": "low"}))
    assert result.error_kind == ErrorKind.CONFIG and "cannot be combined" in result.error
    assert server.requests == []


def test_gemini_429_retry_after_then_503_then_ok_and_sdk_retries_off():
    server = Server(
        gemini_error(429, "RESOURCE_EXHAUSTED", {"retry-after": "4"}),
        gemini_error(503, "UNAVAILABLE"),
        gemini_ok(),
    )
    result, sleeps = run(server, cfg("google", "gemini-2.5-flash"))
    assert len(server.requests) == 3 and result.status == OutputStatus.COMPLETED
    assert [a.status_code for a in result.attempts] == [429, 503, None]
    assert sleeps[0] >= 4.0


def test_gemini_400_not_retried_and_safety_is_refusal():
    server = Server(gemini_error(400, "INVALID_ARGUMENT"))
    result, _ = run(server, cfg("google", "gemini-2.5-flash"))
    assert len(server.requests) == 1 and result.error_kind == ErrorKind.BAD_REQUEST
    result, _ = run(Server(gemini_ok("", finish="SAFETY")), cfg("google", "gemini-2.5-flash"))
    assert result.status == OutputStatus.REFUSAL


def test_gemini_connection_error_retried_once_per_attempt():
    def refuse(request):
        raise httpx2.ConnectError("refused", request=request)

    server = Server(refuse)
    result, sleeps = run(server, cfg("google", "gemini-2.5-flash"))
    assert len(server.requests) == 3 and len(sleeps) == 2 and result.error_kind == ErrorKind.CONNECTION
