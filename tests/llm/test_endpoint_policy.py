"""llm.endpoint_policy: which key variables and base URLs a model config may use (pure, no Django)."""

from __future__ import annotations

import socket

import pytest

from llm.endpoint_policy import (
    EndpointPolicy,
    EndpointRefused,
    address_class,
    check_api_key_env,
    check_base_url,
)
from llm.errors import ErrorKind

POLICY = EndpointPolicy(reserved_env_names=frozenset({"DATABASE_URL", "REDIS_URL", "LOG_LEVEL"}))


def resolver(table: dict[str, list[str]]):
    calls: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append((host, port))
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def no_lookup(host: str, port: int) -> list[str]:
    raise AssertionError(f"an IP literal needs no lookup, yet {host} was resolved")


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_VLLM_API_KEY", ""])
def test_provider_key_variables_pass(name):
    check_api_key_env(name, POLICY)


@pytest.mark.parametrize(
    "name",
    [
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "POSTGRES_PASSWORD",
        "CELERY_BROKER_URL",
        "DJANGO_API_KEY",
        "PHYSALIGN_API_KEY",
        "django_secret_key",
        "HOME",
        "AWS_SECRET_ACCESS_KEY",
        "OPENAI_API_KEY_FILE",
    ],
)
def test_app_variables_and_names_outside_the_pattern_are_refused(name):
    with pytest.raises(EndpointRefused) as refused:
        check_api_key_env(name, POLICY)
    assert refused.value.code == "api_key_env_not_allowed" and refused.value.field == "api_key_env"
    assert refused.value.kind == ErrorKind.CONFIG and not refused.value.retryable
    assert name in refused.value.message


def test_a_key_instead_of_a_variable_name_is_invalid():
    with pytest.raises(EndpointRefused) as refused:
        check_api_key_env("sk-live-123 456", POLICY)
    assert refused.value.code == "api_key_env_invalid"
    assert "sk-live" not in refused.value.message


def test_reserved_names_win_over_a_broad_pattern():
    broad = EndpointPolicy(key_env_pattern=r".*", reserved_env_names=frozenset({"DATABASE_URL"}))
    check_api_key_env("VLLM_TOKEN", broad)
    for name in ("DATABASE_URL", "DJANGO_SECRET_KEY", "CELERY_RESULT_BACKEND"):
        with pytest.raises(EndpointRefused):
            check_api_key_env(name, broad)


def test_exact_names_as_the_pattern_and_a_broken_pattern_allows_nothing():
    exact = EndpointPolicy(key_env_pattern="OPENAI_API_KEY|VLLM_TOKEN")
    check_api_key_env("VLLM_TOKEN", exact)
    with pytest.raises(EndpointRefused):
        check_api_key_env("ANTHROPIC_API_KEY", exact)
    with pytest.raises(EndpointRefused):
        check_api_key_env("OPENAI_API_KEY", EndpointPolicy(key_env_pattern="("))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:8080", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://10.0.0.5/", "private"),
        ("http://172.16.3.4/", "private"),
        ("https://192.168.1.10/v1", "private"),
        ("http://[fc00::1]/", "private"),
        ("http://0.0.0.0:8000/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://100.100.100.200/", "non-global"),  # shared address space: Alibaba Cloud's metadata
    ],
)
def test_non_public_ip_literals_are_refused(url, reason):
    with pytest.raises(EndpointRefused) as refused:
        check_base_url(url, resolve=no_lookup)
    assert refused.value.code == "base_url_not_allowed" and f"({reason}" in refused.value.message


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://models.example.com/",
        "gopher://example.com/",
        "http:///v1",
        "models.example.com/v1",
        "http://user:pw@models.example.com/",
        "http://models.example.com:99999/",
    ],
)
def test_only_http_urls_with_a_host_and_no_credentials(url):
    with pytest.raises(EndpointRefused) as refused:
        check_base_url(url, resolve=resolver({"models.example.com": ["93.184.216.34"]}))
    assert refused.value.code == "base_url_invalid"


def test_public_hosts_pass_and_every_resolved_address_is_checked():
    resolve = resolver(
        {
            "models.example.com": ["93.184.216.34", "2606:2800:220:1::1"],
            "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
        }
    )
    check_base_url("https://models.example.com/v1", resolve=resolve)
    check_base_url("https://8.8.8.8/v1", resolve=no_lookup)
    with pytest.raises(EndpointRefused) as refused:
        check_base_url("https://mixed.example.com:8443/v1", resolve=resolve)
    assert refused.value.code == "base_url_not_allowed"
    assert "mixed.example.com (resolves to 10.0.0.7)" in refused.value.message
    assert resolve.calls == [("models.example.com", 443), ("mixed.example.com", 8443)]


def test_an_unresolvable_host_is_refused_as_a_connection_problem():
    for table in ({}, {"gone.example.com": []}):
        with pytest.raises(EndpointRefused) as refused:
            check_base_url("http://gone.example.com/", resolve=resolver(table))
        assert refused.value.code == "base_url_unresolvable" and refused.value.kind == ErrorKind.CONNECTION


def test_localhost_through_the_system_resolver_is_refused():
    with pytest.raises(EndpointRefused) as refused:
        check_base_url("http://localhost:11434/v1")
    assert refused.value.code == "base_url_not_allowed"


def test_allowing_private_urls_still_refuses_metadata_and_unspecified_addresses():
    resolve = resolver(
        {"vllm.internal.example": ["10.1.2.3"], "metadata.internal.example": ["169.254.169.254"]}
    )
    for url in (
        "http://127.0.0.1:8000/v1",
        "http://[::1]:8000/",
        "http://10.0.0.5/",
        "http://vllm.internal.example/",
    ):
        check_base_url(url, allow_private=True, resolve=resolve)
    for url in ("http://169.254.169.254/", "http://metadata.internal.example/", "http://0.0.0.0/"):
        with pytest.raises(EndpointRefused) as refused:
            check_base_url(url, allow_private=True, resolve=resolve)
        assert refused.value.code == "base_url_not_allowed"
        assert "PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS" not in refused.value.message


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("93.184.216.34", ""),
        ("2606:2800:220:1::1", ""),
        ("2002:7f00:1::1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("192.0.2.1", "private"),
    ],
)
def test_address_classes(address, reason):
    assert address_class(address) == reason
