"""Provider batch APIs (``llm.batch``) through each real SDK against a real local HTTP server that also
answers direct calls, so a batch item and a direct ``generate`` of the same request are compared."""

from __future__ import annotations

from decimal import Decimal

import httpx2
import pytest

from llm import ErrorKind, ImageInput, LLMRequest, OutputStatus, ProviderConfig, ProviderError, generate
from llm.batch import (
    BatchErrorKind,
    batch_cancel,
    batch_price_factor,
    batch_results,
    batch_status,
    batch_submit,
    batch_supported,
)
from llm.cost import discounted_cost
from llm.endpoint_policy import EndpointPolicy, EndpointRefused

from .batch_server import BatchServer

MODELS = {"openai": "gpt-4o-2024-08-06", "anthropic": "claude-3-5-haiku-latest", "google": "gemini-2.5-flash"}
PROVIDERS = list(MODELS)

PNG_A = b"\x89PNG-first-image"
PNG_B = b"\xff\xd8JPEG-second-image"
PNG_C = b"\x89PNG-third-image"


def requests() -> list[tuple[str, LLMRequest]]:
    return [
        ("r1", LLMRequest(system="Be exact.", user="Which block is red?", images=(ImageInput(PNG_A),))),
        (
            "r2",
            LLMRequest(
                system="Be exact.",
                user="Which block is left of E2?",
                images=(ImageInput(PNG_B, "image/jpeg"), ImageInput(PNG_C)),
            ),
        ),
        ("r3", LLMRequest(system="", user="No images here, which?")),
        ("r4", LLMRequest(system="Be exact.", user="And the fourth?", images=(ImageInput(PNG_C),))),
    ]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-test-secret")


@pytest.fixture
def server():
    with BatchServer() as running:
        yield running


def cfg(server: BatchServer, provider: str, *, allow_private: bool = True, **kw) -> ProviderConfig:
    return ProviderConfig(
        name=f"{provider}-batch",
        provider=provider,
        model=MODELS[provider],
        base_url=server.url(provider),
        api_key_env="TEST_LLM_API_KEY",
        max_output_tokens=kw.pop("max_output_tokens", 700),
        price_in_per_mtok=Decimal("3"),
        price_out_per_mtok=Decimal("15"),
        endpoint_policy=EndpointPolicy(allow_private_urls=allow_private),
        **kw,
    )


def poll_until_done(batch_id: str, config: ProviderConfig, limit: int = 20):
    seen = []
    for _ in range(limit):
        status = batch_status(batch_id, config)
        seen.append(status)
        if status.state != "running":
            return seen
    raise AssertionError(f"still running after {limit} polls: {seen}")


# ---------------------------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_round_trip_matches_direct_calls_at_half_the_price(server, provider):
    server.polls_before_done = 2
    config = cfg(server, provider)
    items = requests()
    batch_id = batch_submit(items, config)
    statuses = poll_until_done(batch_id, config)
    assert [s.state for s in statuses] == ["running", "running", "ended"]
    assert statuses[-1].total == 4 and statuses[-1].succeeded == 4 and statuses[-1].errored == 0
    if provider == "anthropic":  # counts only once processing ended; total is the processing count
        assert [(s.total, s.succeeded) for s in statuses[:2]] == [(4, 0), (4, 0)]
    else:  # progress: some items done while running, never all
        assert statuses[0].total == 4 and 0 < statuses[0].succeeded < statuses[1].succeeded < 4

    results = batch_results(batch_id, config)
    assert sorted(results) == ["r1", "r2", "r3", "r4"]
    assert server.direct_calls() == 0

    for custom_id, request in items:
        direct = generate(request, config)
        got = results[custom_id]
        assert direct.status == OutputStatus.COMPLETED and got.status == OutputStatus.COMPLETED
        assert got.text == direct.text and got.finish_reason == direct.finish_reason == "stop"
        assert got.usage == direct.usage and got.usage.input_tokens > 0
        assert got.cost_usd == discounted_cost(direct.cost_usd, Decimal("0.5")) and got.cost_usd > 0
        assert [a.outcome for a in got.attempts] == ["ok"] and got.error == "" and got.error_kind == ""
        assert got.raw  # the provider's raw item
    # the four answers differ: the mapping is by custom id, not position (Anthropic answers reversed)
    assert len({r.text for r in results.values()}) == 4
    assert server.direct_calls(provider) == 4

    batch_seen = {s.custom_id: s for s in server.seen_in("batch", provider)}
    direct_seen = server.seen_in("direct", provider)
    for (custom_id, request), direct in zip(items, direct_seen, strict=True):
        item = batch_seen[custom_id]
        expected = [(i.media_type, i.data) for i in request.images]
        assert item.images == expected and direct.images == expected  # images in order, media types kept
        assert (item.model, item.max_tokens, item.system, item.user) == (
            direct.model,
            direct.max_tokens,
            direct.system,
            direct.user,
        )
        assert item.model == MODELS[provider] and item.max_tokens == 700
        assert item.body == direct.body or provider == "google"  # Gemini's direct body has no model field
    headers = [c.headers for c in server.calls if c.mode == "batch"]
    assert all(
        "sk-test-secret"
        in (h.get("authorization", "") + h.get("x-api-key", "") + h.get("x-goog-api-key", ""))
        for h in headers
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_finish_reasons_map_like_direct_calls(server, provider):
    server.finish = lambda seen: (
        "length" if "red" in seen.user else "refusal" if "E2" in seen.user else "stop"
    )
    config = cfg(server, provider)
    items = requests()[:3]
    batch_id = batch_submit(items, config)
    poll_until_done(batch_id, config)
    results = batch_results(batch_id, config)
    assert results["r1"].status == OutputStatus.TRUNCATED
    assert results["r2"].status == OutputStatus.REFUSAL
    assert results["r3"].status == OutputStatus.COMPLETED
    for custom_id, request in items:
        direct = generate(request, config)
        assert (results[custom_id].status, results[custom_id].text) == (direct.status, direct.text)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_send_images_false_drops_images_as_generate_does(server, provider):
    config = cfg(server, provider, send_images=False)
    batch_id = batch_submit(requests()[:2], config)
    poll_until_done(batch_id, config)
    results = batch_results(batch_id, config)
    assert [s.images for s in server.seen_in("batch")] == [[], []]
    direct = generate(requests()[1][1], config)
    assert server.seen_in("direct")[0].images == []
    assert results["r2"].text == direct.text and results["r2"].usage == direct.usage


# ---------------------------------------------------------------------------------------------- item failures


ERRORED_KIND = {
    "openai": ErrorKind.BAD_REQUEST,
    "anthropic": ErrorKind.BAD_REQUEST,
    "google": ErrorKind.BAD_REQUEST,
}
EXPIRED_KIND = {
    "openai": BatchErrorKind.EXPIRED,
    "anthropic": BatchErrorKind.EXPIRED,
    "google": ErrorKind.TIMEOUT,
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_errored_expired_and_malformed_items_come_back_failed(server, provider):
    server.fail_ids = {"r2"}
    server.expire_ids = {"r3"}
    server.malformed_ids = {"r4"}
    config = cfg(server, provider)
    batch_id = batch_submit(requests(), config)
    final = poll_until_done(batch_id, config)[-1]
    assert final.state == "ended" and final.total == 4
    results = batch_results(batch_id, config)
    assert sorted(results) == ["r1", "r2", "r3", "r4"]
    assert results["r1"].status == OutputStatus.COMPLETED
    for custom_id, kind in (
        ("r2", ERRORED_KIND[provider]),
        ("r3", EXPIRED_KIND[provider]),
        ("r4", ErrorKind.OTHER),
    ):
        failed = results[custom_id]
        assert failed.status == OutputStatus.FAILED and not failed.ok, custom_id
        assert failed.error_kind == kind, (custom_id, failed.error_kind, failed.error)
        assert failed.error and failed.text == "" and failed.cost_usd == Decimal("0")
        assert [a.outcome for a in failed.attempts] == ["error"] and failed.attempts[0].error_kind == kind
    assert "malformed" in results["r4"].error and results["r4"].attempts[0].retryable
    assert "Invalid image" in results["r2"].error


@pytest.mark.parametrize("provider", ["openai", "google"])
def test_whole_batch_failure_is_a_failed_status_with_the_message(server, provider):
    server.fail_batch = "The input file is not valid JSONL."
    config = cfg(server, provider)
    batch_id = batch_submit(requests()[:2], config)
    status = batch_status(batch_id, config)
    assert status.state == "failed" and "The input file is not valid JSONL." in status.error


def test_anthropic_refuses_a_bad_batch_at_submission(server):
    server.fail_batch = "requests: too many"
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests()[:2], cfg(server, "anthropic"))
    assert caught.value.kind == ErrorKind.BAD_REQUEST and caught.value.status_code == 400
    assert "too many" in caught.value.message


@pytest.mark.parametrize("provider", ["openai", "google"])
def test_an_expired_batch_reports_expired(server, provider):
    server.expire_batch = True
    config = cfg(server, provider)
    batch_id = batch_submit(requests()[:2], config)
    assert batch_status(batch_id, config).state == "expired"
    results = batch_results(batch_id, config)
    if provider == "openai":  # the error file names every unexecuted item
        assert {k: v.error_kind for k, v in results.items()} == {"r1": "expired", "r2": "expired"}
    else:  # Gemini returns no responses for an expired batch: the items are absent
        assert results == {}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cancel_ends_the_batch_cancelled(server, provider):
    server.polls_before_done = 5
    config = cfg(server, provider)
    batch_id = batch_submit(requests()[:2], config)
    assert batch_status(batch_id, config).state == "running"
    batch_cancel(batch_id, config)
    status = batch_status(batch_id, config)
    assert status.state == "cancelled"
    assert server.batches[batch_id.removeprefix("batches/")].cancelled
    results = batch_results(batch_id, config)
    if provider == "google":
        assert results == {}
    else:
        assert {k: (v.status, v.error_kind) for k, v in results.items()} == {
            "r1": (OutputStatus.FAILED, BatchErrorKind.CANCELLED),
            "r2": (OutputStatus.FAILED, BatchErrorKind.CANCELLED),
        }
    if provider == "anthropic":
        assert status.total == 2 and status.errored == 2


# ---------------------------------------------------------------------------------------------- policy, config


@pytest.mark.parametrize("provider", PROVIDERS)
def test_endpoint_policy_refuses_a_private_url_before_anything_is_sent(server, provider):
    config = cfg(server, provider, allow_private=False)
    for call in (
        lambda: batch_submit(requests()[:1], config),
        lambda: batch_status("batches/x" if provider == "google" else "x", config),
        lambda: batch_results("batches/x" if provider == "google" else "x", config),
        lambda: batch_cancel("batches/x" if provider == "google" else "x", config),
    ):
        with pytest.raises(EndpointRefused) as caught:
            call()
        assert caught.value.kind == ErrorKind.CONFIG
    assert server.calls == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_missing_key_fails_without_a_request(server, provider, monkeypatch):
    monkeypatch.delenv("TEST_LLM_API_KEY")
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests()[:1], cfg(server, provider))
    assert caught.value.kind == ErrorKind.CONFIG and "TEST_LLM_API_KEY" in caught.value.message
    assert server.calls == []


def test_custom_ids_are_checked_before_anything_is_sent(server):
    config = cfg(server, "openai")
    request = requests()[0][1]
    for items in ([], [("r1", request), ("r1", request)], [("has space", request)], [("x" * 65, request)]):
        with pytest.raises(ProviderError) as caught:
            batch_submit(items, config)
        assert caught.value.kind == ErrorKind.CONFIG
    assert server.calls == []


def test_a_bad_payload_is_refused_before_the_upload(server):
    # the direct path's capability check: budget thinking is not the adaptive family's form
    config = ProviderConfig(
        name="bad",
        provider="anthropic",
        model="claude-opus-4-6",
        base_url=server.url("anthropic"),
        api_key_env="TEST_LLM_API_KEY",
        reasoning={"budget_tokens": 2048},
        endpoint_policy=EndpointPolicy(allow_private_urls=True),
    )
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests()[:1], config)
    assert caught.value.kind == ErrorKind.CONFIG and server.calls == []


def test_anthropic_results_on_another_origin_are_refused(server):
    config = cfg(server, "anthropic")
    batch_id = batch_submit(requests()[:1], config)
    poll_until_done(batch_id, config)
    server.anthropic_results_url = f"http://evil.example:{server.root.rsplit(':', 1)[1]}/v1/results"
    with pytest.raises(ProviderError) as caught:
        batch_results(batch_id, config)
    assert caught.value.kind == ErrorKind.CONFIG and "evil.example" in caught.value.message
    assert not any(c.path.endswith("/results") for c in server.calls)


def test_unknown_batch_is_a_not_found_error(server):
    for provider, batch_id in (
        ("openai", "batch_nope"),
        ("anthropic", "msgbatch_nope"),
        ("google", "batches/nope"),
    ):
        with pytest.raises(ProviderError) as caught:
            batch_status(batch_id, cfg(server, provider))
        assert caught.value.kind == ErrorKind.NOT_FOUND and caught.value.status_code == 404
    with pytest.raises(ProviderError) as caught:  # the SDK's own name rule, before any request
        batch_status("not-a-batch-name", cfg(server, "google"))
    assert caught.value.kind == ErrorKind.CONFIG


def test_batch_support_and_price_factor(server):
    for provider in PROVIDERS:
        config = cfg(server, provider)
        assert batch_supported(config) and batch_price_factor(config) == Decimal("0.5")
    compatible = ProviderConfig(name="local", provider="openai_compatible", model="qwen")
    assert not batch_supported(compatible) and batch_price_factor(compatible) == Decimal(1)
    assert not batch_supported(cfg(server, "openai", extra={"batch": False}))
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests()[:1], compatible)
    assert caught.value.kind == ErrorKind.CONFIG
    override = cfg(server, "openai", extra={"batch_price_factor": "0.4"})
    assert batch_price_factor(override) == Decimal("0.4")
    for bad in ("2", "0", "-0.5", "nan", "cheap"):
        with pytest.raises(ProviderError):
            batch_price_factor(cfg(server, "openai", extra={"batch_price_factor": bad}))


def test_price_factor_override_prices_the_results(server):
    config = cfg(server, "anthropic", extra={"batch_price_factor": "0.25"})
    batch_id = batch_submit(requests()[:1], config)
    poll_until_done(batch_id, config)
    got = batch_results(batch_id, config)["r1"]
    direct = generate(requests()[0][1], config)
    assert got.cost_usd == discounted_cost(direct.cost_usd, Decimal("0.25"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sdk_retries_are_off_and_errors_are_classified(server, provider):
    server.batch_status = 503
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests()[:1], cfg(server, provider))
    assert caught.value.status_code == 503 and caught.value.retryable
    assert server.batch_calls() == 1  # one attempt: retries are ours, not the SDK's


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_callers_http_client_is_used_and_left_as_it_was(server, provider):
    config = cfg(server, provider)
    with httpx2.Client() as client:
        hooks_before = {name: list(found) for name, found in client.event_hooks.items()}
        batch_id = batch_submit(requests()[:2], config, http_client=client)
        assert poll_until_done_with(batch_id, config, client)[-1].state == "ended"
        results = batch_results(batch_id, config, http_client=client)
        assert sorted(results) == ["r1", "r2"] and all(r.ok for r in results.values())
        assert client.event_hooks == hooks_before  # the Gemini response hook is removed again
    if provider == "google":  # progress counts read from the operation JSON on the caller's client too
        assert batch_status(batch_id, config).total == 2


def poll_until_done_with(batch_id: str, config: ProviderConfig, client, limit: int = 20):
    seen = []
    for _ in range(limit):
        seen.append(batch_status(batch_id, config, http_client=client))
        if seen[-1].state != "running":
            return seen
    raise AssertionError(seen)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_over_the_providers_limits_is_refused_before_it_is_sent(server, provider):
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests(), cfg(server, provider, extra={"batch_max_bytes": 300}))
    assert caught.value.kind == ErrorKind.CONFIG and "300 bytes" in caught.value.message
    with pytest.raises(ProviderError) as caught:
        batch_submit(requests(), cfg(server, provider, extra={"batch_max_items": 3}))
    assert caught.value.kind == ErrorKind.CONFIG and "4 requests" in caught.value.message
    assert server.calls == []
    batch_submit(requests(), cfg(server, provider, extra={"batch_max_items": 4, "batch_max_bytes": 100_000}))
    assert server.batch_calls(provider) >= 1
