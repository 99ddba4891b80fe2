"""Where a model config may send requests and which environment variable it may send as its key.

Pure and Django-free. The same two rules run when a config is saved (``models_registry.services``) and
again right before each provider call (``llm.providers.endpoint_for``), so a row written before
these rules existed, or straight through the ORM, still cannot leak anything:

- ``check_api_key_env``: the variable must fully match the policy's pattern (by default a name
  ending in ``_API_KEY``) and must never be one of the app's own variables (its reserved names and
  prefixes), so no config can make us send ``DJANGO_SECRET_KEY`` or ``DATABASE_URL`` as a bearer
  token to a URL of its choosing.
- ``check_base_url``: http(s) with a host and no credentials; every address the host resolves to
  *now* must be public. Loopback and private addresses (a local vLLM or Ollama) pass only with
  ``allow_private``; link-local (cloud metadata at 169.254.169.254), unspecified, multicast and
  reserved addresses never do. Checking every address at call time as well refuses a name that
  was public when saved and resolves to an internal address later (DNS rebinding).

Errors are ``EndpointRefused``: a non-retryable ``ProviderError`` (kind ``config``) with a ``code``
for the API. Messages name the variable or host, never a variable's value.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .errors import ErrorKind, ProviderError

DEFAULT_KEY_ENV_PATTERN = r"[A-Z][A-Z0-9_]*_API_KEY"
DEFAULT_RESERVED_ENV_PREFIXES = (
    "DJANGO_",
    "CELERY_",
    "POSTGRES_",
    "PHYSALIGN_",
    "DATABASE_",
    "DB_",
    "REDIS_",
)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SCHEMES = ("http", "https")
# Refused even when private URLs are allowed: nothing a model server legitimately listens on.
ALWAYS_REFUSED = frozenset({"link-local", "unspecified", "multicast", "reserved"})

# host, port → the IP addresses (as text) a connection to it could reach
Resolver = Callable[[str, int], Iterable[str]]


class EndpointRefused(ProviderError):
    """A model config's key variable or base URL breaks the endpoint policy; nothing was sent."""

    def __init__(self, message: str, *, code: str, field: str, kind: str = ErrorKind.CONFIG) -> None:
        super().__init__(message, kind=kind)
        self.code = code
        self.field = field


@dataclass(frozen=True)
class EndpointPolicy:
    """The deployment's rules (``PHYSALIGN_MODEL_*`` settings); the defaults are the safe ones."""

    key_env_pattern: str = DEFAULT_KEY_ENV_PATTERN
    reserved_env_names: frozenset[str] = frozenset()
    reserved_env_prefixes: tuple[str, ...] = DEFAULT_RESERVED_ENV_PREFIXES
    allow_private_urls: bool = False


def check_endpoint(
    *, base_url: str, api_key_env: str, policy: EndpointPolicy, resolve: Resolver | None = None
) -> None:
    """Both rules for one config. An empty value means no key / the SDK's default endpoint."""
    check_api_key_env(api_key_env, policy)
    if base_url:
        check_base_url(base_url, allow_private=policy.allow_private_urls, resolve=resolve)


def check_api_key_env(name: str, policy: EndpointPolicy) -> None:
    """Refuse a key variable outside the allow-pattern or belonging to the app itself."""
    if not name:
        return
    if not ENV_NAME.fullmatch(name):
        raise EndpointRefused(
            "api_key_env must be an environment variable name, not a key.",
            code="api_key_env_invalid",
            field="api_key_env",
        )
    upper = name.upper()  # reserved names compare case-insensitively: fail closed on any platform
    if upper in {n.upper() for n in policy.reserved_env_names} or upper.startswith(
        policy.reserved_env_prefixes
    ):
        raise EndpointRefused(
            f"api_key_env {name} is one of the application's own variables; a model config "
            f"may only name a provider key variable.",
            code="api_key_env_not_allowed",
            field="api_key_env",
        )
    try:
        allowed = re.fullmatch(policy.key_env_pattern, name) is not None
    except re.error:
        allowed = False  # a broken PHYSALIGN_MODEL_KEY_ENV_PATTERN allows nothing
    if not allowed:
        raise EndpointRefused(
            f"api_key_env {name} is not an allowed key variable (allowed names match "
            f"{policy.key_env_pattern!r}).",
            code="api_key_env_not_allowed",
            field="api_key_env",
        )


def check_base_url(url: str, *, allow_private: bool = False, resolve: Resolver | None = None) -> None:
    """Refuse a base URL that is not http(s) or whose host is (or resolves to) a non-public address."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise EndpointRefused(
            f"base_url is not a valid URL: {exc}.", code="base_url_invalid", field="base_url"
        ) from exc
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        raise EndpointRefused(
            "base_url must be an http:// or https:// URL with a host.",
            code="base_url_invalid",
            field="base_url",
        )
    if "@" in parts.netloc:
        raise EndpointRefused(
            "base_url may not carry credentials; name the key in api_key_env.",
            code="base_url_invalid",
            field="base_url",
        )
    host = parts.hostname
    for address in _addresses(host, port, resolve):
        reason = address_class(address)
        if reason and (reason in ALWAYS_REFUSED or not allow_private):
            shown = host if host == address else f"{host} (resolves to {address})"
            hint = (
                ""
                if reason in ALWAYS_REFUSED
                else "; PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS allows loopback and private"
            )
            raise EndpointRefused(
                f"base_url host {shown} is not a public address ({reason}{hint}).",
                code="base_url_not_allowed",
                field="base_url",
            )


def address_class(address: str) -> str:
    """Why an IP address is not a public endpoint, or "" when it is one."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):  # an IPv4 address wrapped in IPv6 is judged as itself
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is not None:
            return address_class(str(embedded))
    checks = (
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("loopback", ip.is_loopback),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("non-global", not ip.is_global),
    )
    return next((name for name, hit in checks if hit), "")


def _addresses(host: str, port: int, resolve: Resolver | None) -> list[str]:
    """The host itself when it is an IP literal, else every address it resolves to now."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        found = sorted(set((resolve or system_resolve)(host, port)))
    except (OSError, UnicodeError) as exc:
        found, detail = [], f": {exc}"
    else:
        detail = ""
    if not found:
        raise EndpointRefused(
            f"base_url host {host} cannot be resolved{detail}.",
            code="base_url_unresolvable",
            field="base_url",
            kind=ErrorKind.CONNECTION,
        )
    return [str(ipaddress.ip_address(a.split("%", 1)[0])) for a in found]


def system_resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for ``host`` (looked up on ``socket`` at call time)."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
