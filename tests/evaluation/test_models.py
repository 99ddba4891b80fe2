"""Model configurations: add_model, API, page; keys are referenced by variable, never stored."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from models_registry.models import ModelConfig


@pytest.mark.django_db
def test_add_model_creates_and_updates():
    out = io.StringIO()
    call_command(
        "add_model",
        "--name",
        "gpt5",
        "--provider",
        "openai",
        "--model",
        "gpt-5",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--max-output-tokens",
        "4000",
        "--reasoning",
        "effort=low",
        "--price-in",
        "1.25",
        "--price-out",
        "10",
        "--rpm",
        "500",
        "--concurrency",
        "8",
        stdout=out,
    )
    config = ModelConfig.objects.get(name="gpt5")
    assert (
        config.reasoning,
        config.price_in_per_mtok,
        config.requests_per_minute,
        config.max_concurrency,
    ) == ({"effort": "low"}, Decimal("1.25"), 500, 8)
    assert "Added model gpt5" in out.getvalue()
    with pytest.raises(CommandError, match="--update"):
        call_command("add_model", "--name", "gpt5", "--provider", "openai", "--model", "gpt-5")
    call_command(
        "add_model",
        "--name",
        "gpt5",
        "--provider",
        "openai",
        "--model",
        "gpt-5",
        "--update",
        "--api-key-env",
        "OPENAI_API_KEY",
        stdout=out,
    )
    assert ModelConfig.objects.get(name="gpt5").reasoning == {}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [
                "--provider",
                "google",
                "--model",
                "gemini-3-pro",
                "--reasoning",
                '{"budget_tokens": 1, "level": "low"}',
            ],
            "cannot be combined",
        ),
        (
            ["--provider", "openai", "--model", "gpt-4o", "--reasoning", "effort=high"],
            "no reasoning controls",
        ),
        (["--provider", "openai_compatible", "--model", "x"], "base URL"),
        (
            ["--provider", "openai", "--model", "x", "--api-key-env", "sk-live-123 456"],
            "environment variable",
        ),
        (
            ["--provider", "openai", "--model", "x", "--api-key-env", "DJANGO_SECRET_KEY"],
            "api_key_env_not_allowed",
        ),
        (
            ["--provider", "openai", "--model", "x", "--api-key-env", "DATABASE_URL"],
            "api_key_env_not_allowed",
        ),
        (
            ["--provider", "openai_compatible", "--model", "x", "--base-url", "http://169.254.169.254/"],
            "base_url_not_allowed",
        ),
        (
            ["--provider", "openai_compatible", "--model", "x", "--base-url", "http://127.0.0.1:8000/v1"],
            "PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS",
        ),
        (
            ["--provider", "simulated", "--model", "s", "--price-in", "-1"],
            "price_in_per_mtok must be at least 0",
        ),
        (
            ["--provider", "simulated", "--model", "s", "--rpm", "-5"],
            "requests_per_minute must be at least 0",
        ),
        (
            ["--provider", "simulated", "--model", "s", "--timeout", "0"],
            "timeout_seconds must be at least 0.1",
        ),
        (
            ["--provider", "simulated", "--model", "s", "--max-retries", "11"],
            "max_retries must be between 0 and 10",
        ),
        (["--provider", "simulated", "--model", "s", "--extra", "[1, 2]"], "JSON object"),
    ],
)
def test_add_model_refuses_invalid_settings(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("add_model", "--name", "bad", *args)
    assert not ModelConfig.objects.exists()


@pytest.mark.django_db
def test_add_model_accepts_a_local_server_only_where_private_urls_are_allowed(settings):
    settings.PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS = True
    call_command(
        "add_model",
        "--name",
        "local",
        "--provider",
        "openai_compatible",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:8000/v1",
        "--api-key-env",
        "VLLM_API_KEY",
        stdout=io.StringIO(),
    )
    assert ModelConfig.objects.get(name="local").base_url == "http://127.0.0.1:8000/v1"


@pytest.mark.django_db
def test_api_admin_creates_annotator_reads(api_client, admin_user_role, annotator):
    api_client.force_login(annotator)
    body = {
        "name": "claude",
        "provider": "anthropic",
        "model": "claude-opus-4-6",
        "api_key_env": "ANTHROPIC_API_KEY",
        "reasoning": {"effort": "high"},
        "price_in_per_mtok": "5",
        "price_out_per_mtok": "25",
    }
    assert api_client.post("/api/models/", body, format="json").status_code == 403
    api_client.force_login(admin_user_role)
    response = api_client.post("/api/models/", body, format="json")
    assert response.status_code == 201, response.data
    bad = api_client.patch("/api/models/claude/", {"reasoning": {"budget_tokens": 2048}}, format="json")
    assert bad.status_code == 400 and bad.data["code"] == "reasoning_invalid"
    api_client.force_login(annotator)
    listed = api_client.get("/api/models/").json()
    assert [m["name"] for m in listed] == ["claude"] and listed[0]["api_key_env"] == "ANTHROPIC_API_KEY"


@pytest.mark.django_db
def test_annotators_never_see_a_configs_extra_settings(api_client, admin_user_role, annotator):
    """``extra`` can hold scripted outputs written from the answer key (the debate demo): admins only."""
    ModelConfig.objects.create(
        name="scripted-solver-a",
        provider="scripted",
        model="s",
        extra={"responses": [{"match": "P1", "outputs": ["\\boxed{42 N}"]}]},
    )
    api_client.force_login(annotator)
    listed = api_client.get("/api/models/").json()
    detail = api_client.get("/api/models/scripted-solver-a/").json()
    assert listed[0]["name"] == "scripted-solver-a" and "extra" not in listed[0] and "extra" not in detail
    assert "42 N" not in api_client.get("/api/models/").content.decode()
    api_client.force_login(admin_user_role)
    assert api_client.get("/api/models/scripted-solver-a/").json()["extra"]["responses"][0]["match"] == "P1"


@pytest.mark.django_db
def test_models_page_for_admins_only(client, admin_user_role, annotator):
    ModelConfig.objects.create(name="sim", provider="simulated", model="s")
    client.force_login(annotator)
    assert client.get("/models/").status_code == 403
    client.force_login(admin_user_role)
    response = client.get("/models/")
    assert response.status_code == 200 and "sim" in response.content.decode()
