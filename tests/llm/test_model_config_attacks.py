"""Model configs cannot exfiltrate secrets (issue 12 item 7) and malformed input is a 400 (item 9).

The attack: an admin names an app variable (DJANGO_SECRET_KEY) as a config's key variable and
points base_url at a server they control or at an internal address (cloud metadata, loopback);
the app would send that variable's value as a bearer token. Refused on save through the API and
the command, and again right before each call for rows written around the service (the ORM),
with the real SDKs against a real local HTTP server that must receive nothing.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.forms.models import model_to_dict

from audit.models import Event
from evaluation.models import EvalRequest
from llm import ErrorKind, LLMRequest, OutputStatus
from llm.endpoint_policy import EndpointRefused, check_api_key_env
from models_registry.models import ModelConfig
from models_registry.providers import endpoint_policy, model_generate

SECRET = "canary-django-secret-5d1f0c"  # DJANGO_SECRET_KEY's value in these tests
PROVIDER_KEY = "sk-local-allowed-key"  # LOCAL_API_KEY: a key a config may name
PUBLIC, PRIVATE = "93.184.216.34", "10.20.30.40"
REQUEST = LLMRequest(system="Be exact.", user="Which block?")


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("DJANGO_SECRET_KEY", SECRET)
    monkeypatch.setenv("LOCAL_API_KEY", PROVIDER_KEY)


@pytest.fixture(autouse=True)
def dns(monkeypatch) -> dict[str, list[str]]:
    """Names → addresses for this test. Our check and the SDKs' connections both ask socket.getaddrinfo,
    so a name mapped to 127.0.0.1 really reaches the local server unless the check refuses it."""
    table = {
        "models.example.com": [PUBLIC],
        "internal.example.com": [PRIVATE],
        "mixed.example.com": [PUBLIC, "10.0.0.7"],
    }
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in table:
            return real(host, port, *args, **kwargs)
        return [
            (
                socket.AF_INET6 if ":" in a else socket.AF_INET,
                socket.SOCK_STREAM,
                socket.IPPROTO_TCP,
                "",
                (a, int(port or 0), 0, 0) if ":" in a else (a, int(port or 0)),
            )
            for a in table[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


@dataclass
class ModelServer:
    url: str
    port: int
    requests: list[dict] = field(default_factory=list)


@pytest.fixture
def model_server():
    """A local OpenAI-compatible server that records every request it receives (path, headers, body)."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            received.append(
                {
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": self.rfile.read(length).decode("utf-8", "replace"),
                }
            )
            data = json.dumps(
                {
                    "id": "chatcmpl-local",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "local-model",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "{}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = _answer  # noqa: N815

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    yield ModelServer(url=f"http://127.0.0.1:{port}/v1", port=port, requests=received)
    server.shutdown()
    server.server_close()


@pytest.fixture
def redirector(model_server):
    """A server that answers every request with a redirect to ``model_server`` (303: as a GET, 307: resent)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _redirect(self):
            status = 303 if "see-other" in self.path else 307
            self.send_response(status)
            self.send_header("Location", f"http://127.0.0.1:{model_server.port}/v1/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET = _redirect  # noqa: N815

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def admin_client(api_client, admin_user_role):
    api_client.force_login(admin_user_role)
    return api_client


def row_snapshot(name: str) -> dict:
    config = ModelConfig.objects.get(name=name)
    return {**model_to_dict(config), "updated_at": config.updated_at}


def create_good(admin_client, name: str = "good", **fields):
    body = {
        "name": name,
        "provider": "openai_compatible",
        "model": "local-model",
        "base_url": "https://models.example.com/v1",
        "api_key_env": "LOCAL_API_KEY",
        **fields,
    }
    response = admin_client.post("/api/models/", body, format="json")
    assert response.status_code == 201, response.content
    return response


def assert_refused(response, code: str) -> dict:
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code, body
    assert SECRET not in response.content.decode()
    return body


def no_secret_in(*values) -> bool:
    return all(SECRET not in json.dumps(v, default=str) for v in values)


# ---------------------------------------------------------------------------------------------- key variables


APP_VARIABLES = [
    "DJANGO_SECRET_KEY",
    "DATABASE_URL",
    "POSTGRES_PASSWORD",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "DJANGO_SOMETHING_API_KEY",
    "PHYSALIGN_API_KEY",
    "HOME",
    "AWS_SECRET_ACCESS_KEY",
]


@pytest.mark.django_db
@pytest.mark.parametrize("variable", APP_VARIABLES)
def test_creating_a_config_that_names_an_app_variable_is_refused(admin_client, variable):
    response = admin_client.post(
        "/api/models/",
        {"name": "leak", "provider": "openai", "model": "gpt-4o", "api_key_env": variable},
        format="json",
    )
    body = assert_refused(response, "api_key_env_not_allowed")
    assert variable in body["message"] and body["extra"] == {"field": "api_key_env"}
    assert not ModelConfig.objects.exists()
    assert not Event.objects.filter(verb__startswith="model_config").exists()


@pytest.mark.django_db
def test_patching_a_config_to_an_app_variable_is_refused_and_nothing_changes(admin_client):
    create_good(admin_client)
    before, events = row_snapshot("good"), Event.objects.count()
    response = admin_client.patch("/api/models/good/", {"api_key_env": "DJANGO_SECRET_KEY"}, format="json")
    assert_refused(response, "api_key_env_not_allowed")
    assert row_snapshot("good") == before and Event.objects.count() == events


@pytest.mark.django_db
def test_the_add_model_command_refuses_app_variables_and_internal_urls():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match=r"DJANGO_SECRET_KEY .*\(api_key_env_not_allowed\)"):
        call_command(
            "add_model",
            "--name",
            "leak",
            "--provider",
            "openai",
            "--model",
            "gpt-4o",
            "--api-key-env",
            "DJANGO_SECRET_KEY",
        )
    with pytest.raises(CommandError, match=r"169\.254\.169\.254 .*\(base_url_not_allowed\)"):
        call_command(
            "add_model",
            "--name",
            "ssrf",
            "--provider",
            "openai_compatible",
            "--model",
            "m",
            "--base-url",
            "http://169.254.169.254/latest/",
        )
    assert not ModelConfig.objects.exists()


def test_every_variable_the_settings_read_is_refused_as_a_key_variable(settings):
    source = Path(django_settings.BASE_DIR, "physalign_site", "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r"""\benv(?:\(\))?\.\w+\(\s*["']([A-Z][A-Z0-9_]*)["']""", source))
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"} <= read
    policy = endpoint_policy()
    for name in sorted(read):
        with pytest.raises(EndpointRefused):
            check_api_key_env(name, policy)


def test_a_loosened_pattern_still_never_allows_the_apps_secrets(settings):
    settings.PHYSALIGN_MODEL_KEY_ENV_PATTERN = r".*"
    policy = endpoint_policy()
    check_api_key_env("VLLM_TOKEN", policy)
    for name in (
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "POSTGRES_PASSWORD",
        "REDIS_URL",
        "CELERY_BROKER_URL",
        "CELERY_RESULT_BACKEND",
        "DB_CONN_MAX_AGE",
        "LOG_LEVEL",
    ):
        with pytest.raises(EndpointRefused):
            check_api_key_env(name, policy)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"):  # .env.example's key examples
        check_api_key_env(name, policy)


# ---------------------------------------------------------------------------------------------- base URLs


INTERNAL_URLS = [
    ("http://169.254.169.254/", "base_url_not_allowed"),
    ("http://127.0.0.1:8080", "base_url_not_allowed"),
    ("http://[::1]/", "base_url_not_allowed"),
    ("http://10.0.0.5/", "base_url_not_allowed"),
    ("http://localhost:11434/v1", "base_url_not_allowed"),
    ("https://internal.example.com/v1", "base_url_not_allowed"),  # resolves to a private address
    ("https://mixed.example.com/v1", "base_url_not_allowed"),  # one of its addresses is private
    ("file:///etc/passwd", "validation_error"),  # not even a URL to the serializer
]


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "code"), INTERNAL_URLS)
def test_creating_a_config_with_an_internal_base_url_is_refused(admin_client, url, code):
    response = admin_client.post(
        "/api/models/",
        {"name": "ssrf", "provider": "openai_compatible", "model": "m", "base_url": url},
        format="json",
    )
    body = assert_refused(response, code)
    assert body["extra"] == {"field": "base_url"} or "base_url" in body["extra"]["fields"]
    assert not ModelConfig.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "code"), INTERNAL_URLS)
def test_patching_a_config_to_an_internal_base_url_is_refused_and_nothing_changes(admin_client, url, code):
    create_good(admin_client)
    before, events = row_snapshot("good"), Event.objects.count()
    assert_refused(admin_client.patch("/api/models/good/", {"base_url": url}, format="json"), code)
    assert row_snapshot("good") == before and Event.objects.count() == events


@pytest.mark.django_db
def test_private_urls_need_the_setting_and_metadata_stays_refused(admin_client, settings):
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True
    create_good(admin_client, name="local", base_url="http://127.0.0.1:8080/v1")
    create_good(admin_client, name="lan", base_url="https://internal.example.com/v1")
    response = admin_client.post(
        "/api/models/",
        {
            "name": "meta",
            "provider": "openai_compatible",
            "model": "m",
            "base_url": "http://169.254.169.254/",
        },
        format="json",
    )
    assert_refused(response, "base_url_not_allowed")
    assert sorted(ModelConfig.objects.values_list("name", flat=True)) == ["lan", "local"]


# ---------------------------------------------------------------------------------------------- at call time


def assert_refused_before_sending(result, server: ModelServer, *, needle: str) -> None:
    assert result.status == OutputStatus.FAILED and result.error_kind == ErrorKind.CONFIG
    assert needle in result.error, result.error
    assert [a.error_kind for a in result.attempts] == [ErrorKind.CONFIG]  # not retried
    assert server.requests == []
    assert no_secret_in(result.error, result.attempts_record(), result.raw, result.text)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-4o"),
        ("openai_compatible", "local-model"),
        ("anthropic", "claude-3-5-haiku-latest"),
        ("google", "gemini-2.5-flash"),
    ],
)
def test_a_row_written_through_the_orm_cannot_send_an_app_variable(model_server, settings, provider, model):
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = (
        True  # only the key rule stands between the row and the server
    )
    config = ModelConfig.objects.create(
        name="orm-leak",
        provider=provider,
        model=model,
        max_retries=2,
        base_url=model_server.url,
        api_key_env="DJANGO_SECRET_KEY",
    )
    result = model_generate(model_config=config, request=REQUEST)
    assert_refused_before_sending(result, model_server, needle="api_key_env DJANGO_SECRET_KEY")


@pytest.mark.django_db
@pytest.mark.parametrize("provider", ["openai_compatible", "anthropic"])
def test_a_row_written_through_the_orm_cannot_reach_an_internal_url(model_server, provider):
    config = ModelConfig.objects.create(
        name="orm-ssrf",
        provider=provider,
        model="claude-3-5-haiku-latest",
        max_retries=2,
        base_url=model_server.url,
        api_key_env="LOCAL_API_KEY",
    )
    result = model_generate(model_config=config, request=REQUEST)
    assert_refused_before_sending(result, model_server, needle="127.0.0.1 is not a public address (loopback")
    assert PROVIDER_KEY not in json.dumps(result.attempts_record())


@pytest.mark.django_db
def test_a_name_that_rebinds_to_loopback_after_saving_is_refused_at_call_time(
    admin_client, model_server, dns, settings
):
    dns["rebind.example.com"] = [PUBLIC]  # public when the config is saved
    create_good(admin_client, name="rebind", base_url=f"http://rebind.example.com:{model_server.port}/v1")
    config = ModelConfig.objects.get(name="rebind")
    dns["rebind.example.com"] = ["127.0.0.1"]  # the attacker's DNS now answers with loopback

    result = model_generate(model_config=config, request=REQUEST)
    assert_refused_before_sending(result, model_server, needle="rebind.example.com (resolves to 127.0.0.1)")

    # Control: where loopback is allowed the same row reaches the server through that very resolution,
    # so the empty request log above is the check's doing.
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True
    result = model_generate(model_config=config, request=REQUEST)
    assert result.status == OutputStatus.COMPLETED, result.error
    assert len(model_server.requests) == 1
    assert model_server.requests[0]["headers"]["authorization"] == f"Bearer {PROVIDER_KEY}"


@pytest.mark.django_db
@pytest.mark.parametrize("provider", ["openai_compatible", "anthropic", "google"])
@pytest.mark.parametrize("kind", ["see-other", "temporary"])
def test_a_redirect_is_never_followed(redirector, model_server, settings, provider, kind):
    """A checked endpoint could redirect to an address the check never saw (a 303 to the metadata
    service arrives as a GET): the SDK clients never follow redirects."""
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True  # both servers are on loopback
    model = {"anthropic": "claude-3-5-haiku-latest", "google": "gemini-2.5-flash"}.get(
        provider, "local-model"
    )
    config = ModelConfig.objects.create(
        name="redirecting",
        provider=provider,
        model=model,
        max_retries=0,
        base_url=f"{redirector}/{kind}/v1",
        api_key_env="LOCAL_API_KEY",
    )
    result = model_generate(model_config=config, request=REQUEST)
    assert result.status == OutputStatus.FAILED
    assert model_server.requests == []


@pytest.fixture
def eager(settings):
    from physalign_site.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


@pytest.mark.django_db
def test_an_evaluation_run_with_a_leaking_row_sends_nothing_and_stores_no_secret(
    django_user_model, model_server, settings, eager
):
    from evaluation.runs import eval_run_create, eval_run_dispatch
    from tests.evaluation.conftest import compile_and_approve

    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True
    probes = compile_and_approve(django_user_model)
    ModelConfig.objects.create(
        name="orm-leak",
        provider="openai_compatible",
        model="local-model",
        max_retries=2,
        base_url=model_server.url,
        api_key_env="DJANGO_SECRET_KEY",
    )
    run = eval_run_create(
        model_names=["orm-leak"],
        conditions=["raw"],
        start=False,
        options={"resamples": 20},
        probe_filter={"probe_ids": [probes[0].logical_probe_id]},
    )
    eval_run_dispatch(run_id=run.pk)

    assert model_server.requests == []
    row = EvalRequest.objects.get(run=run)
    assert row.status == EvalRequest.Status.INFRA_MISSING and row.raw_output is None
    assert "api_key_env DJANGO_SECRET_KEY is one of the application's own variables" in row.error
    assert [a["error_kind"] for a in row.attempts] == [ErrorKind.CONFIG]
    run.refresh_from_db()
    stored = [model_to_dict(r) for r in EvalRequest.objects.filter(run=run)]
    assert no_secret_in(
        stored, run.manifest, run.metrics, run.error, list(Event.objects.values("verb", "before", "after"))
    )


# ---------------------------------------------------------------------------------------------- malformed input


MALFORMED = [
    ({"extra": None}, "extra"),
    ({"extra": [1, 2]}, "extra"),
    ({"extra": "faults"}, "extra"),
    ({"reasoning": None}, "reasoning"),
    ({"reasoning": ["effort"]}, "reasoning"),
    ({"price_in_per_mtok": "-1"}, "price_in_per_mtok"),
    ({"price_out_per_mtok": "-0.5"}, "price_out_per_mtok"),
    ({"requests_per_minute": -1}, "requests_per_minute"),
    ({"max_concurrency": -3}, "max_concurrency"),
    ({"max_retries": 50}, "max_retries"),
    ({"timeout_seconds": 0}, "timeout_seconds"),
    ({"temperature": -1}, "temperature"),
    ({"max_output_tokens": 0}, "max_output_tokens"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("patch", "field"), MALFORMED)
def test_a_malformed_patch_is_a_400_and_changes_nothing(admin_client, patch, field):
    create_good(admin_client)
    before, events = row_snapshot("good"), Event.objects.count()
    body = assert_refused(admin_client.patch("/api/models/good/", patch, format="json"), "validation_error")
    assert list(body["extra"]["fields"]) == [field]
    assert row_snapshot("good") == before and Event.objects.count() == events


@pytest.mark.django_db
@pytest.mark.parametrize(("patch", "field"), MALFORMED)
def test_a_malformed_create_is_a_400_and_writes_nothing(admin_client, patch, field):
    response = admin_client.post(
        "/api/models/", {"name": "m", "provider": "simulated", "model": "s", **patch}, format="json"
    )
    assert list(assert_refused(response, "validation_error")["extra"]["fields"]) == [field]
    assert not ModelConfig.objects.exists()


@pytest.mark.django_db
def test_extra_null_says_an_object_is_expected(admin_client):
    create_good(admin_client)
    body = admin_client.patch("/api/models/good/", {"extra": None}, format="json").json()
    assert body["extra"]["fields"]["extra"] == ["extra must be a JSON object (an empty object for none)."]


@pytest.mark.django_db
def test_the_django_admin_site_saves_through_the_same_rules(django_user_model):
    from django.test import Client

    staff = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-12345")
    client = Client()
    client.force_login(staff)
    form = {
        "name": "sneaky",
        "provider": "openai",
        "model": "gpt-x",
        "base_url": "",
        "api_key_env": "DJANGO_SECRET_KEY",
        "is_active": "on",
        "max_output_tokens": "",
        "temperature": "",
        "reasoning": "{}",
        "image_policy": "send",
        "extra": "{}",
        "price_in_per_mtok": "0",
        "price_out_per_mtok": "0",
        "requests_per_minute": "",
        "max_concurrency": "",
        "timeout_seconds": "60",
        "max_retries": "2",
    }
    response = client.post("/admin/models_registry/modelconfig/add/", form)
    assert response.status_code == 200  # the form comes back with the error
    body = response.content.decode()
    errors = re.findall(r"errorlist[^<]*<li>([^<]*)", body)
    assert errors == [
        "api_key_env DJANGO_SECRET_KEY is one of the application&#x27;s own variables; a model config "
        "may only name a provider key variable."
    ], errors
    assert not ModelConfig.objects.filter(name="sneaky").exists()
