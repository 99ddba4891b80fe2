"""SDK clients are built once per endpoint, key and timeout and reused (``llm.providers.kept_client``): through
each real SDK against a real local server, calls share one client (building one costs ~20 ms of CPU), a changed
key in the environment gets a new client that sends it, and the least recently used client is closed."""

from __future__ import annotations

from decimal import Decimal

import anthropic
import openai
import pytest

import llm.providers as providers
from llm import LLMRequest, OutputStatus, ProviderConfig, generate
from llm.endpoint_policy import EndpointPolicy

from .batch_server import BatchServer

SDKS = {"openai": (openai, "gpt-4o-2024-08-06"), "anthropic": (anthropic, "claude-3-5-haiku-latest")}


@pytest.fixture
def server():
    with BatchServer() as running:
        yield running


@pytest.fixture(autouse=True)
def no_kept_clients(monkeypatch):
    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-first")
    providers._forget_kept_clients()
    yield
    for client in list(providers._kept.values()):
        client.close()
    providers._forget_kept_clients()


def config(server: BatchServer, provider: str, *, timeout: float = 30.0) -> ProviderConfig:
    return ProviderConfig(
        name=f"{provider}-kept",
        provider=provider,
        model=SDKS[provider][1],
        base_url=server.url(provider),
        api_key_env="TEST_LLM_API_KEY",
        max_output_tokens=200,
        timeout_seconds=timeout,
        price_in_per_mtok=Decimal("1"),
        price_out_per_mtok=Decimal("1"),
        endpoint_policy=EndpointPolicy(allow_private_urls=True),
    )


@pytest.mark.parametrize("provider", list(SDKS))
def test_calls_share_one_client_and_a_changed_key_gets_a_new_one(server, provider, monkeypatch):
    sdk = SDKS[provider][0]
    made = []
    real = sdk.DefaultHttpxClient

    def counted(**kwargs):
        made.append((kwargs, real(**kwargs)))
        return made[-1][1]

    monkeypatch.setattr(sdk, "DefaultHttpxClient", counted)
    monkeypatch.setattr(providers, "KEPT_CLIENTS", 1)
    request = LLMRequest(system="Be exact.", user="Which block is red?")
    outputs = [generate(request, config(server, provider)) for _ in range(3)]
    assert [o.status for o in outputs] == [OutputStatus.COMPLETED] * 3
    assert len(made) == 1 and made[0][0] == {
        "follow_redirects": False
    }  # one client, never following redirects
    assert [c.headers["authorization"] for c in server.calls] == ["Bearer sk-first"] * 3

    monkeypatch.setenv("TEST_LLM_API_KEY", "sk-rotated")  # read on every call: the next one sends the new key
    assert generate(request, config(server, provider)).status == OutputStatus.COMPLETED
    assert len(made) == 2 and server.calls[-1].headers["authorization"] == "Bearer sk-rotated"
    assert made[0][1].is_closed and not made[1][1].is_closed  # only one kept: the older one closed

    generate(request, config(server, provider, timeout=10.0))  # another timeout is another client
    assert len(made) == 3 and made[1][1].is_closed
