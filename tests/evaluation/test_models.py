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
    listed = api_client.get("/api/models/").json()["results"]
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
    listed = api_client.get("/api/models/").json()["results"]
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


# --- the API as each role calls it ----------------------------------------------------------------------

READERS = ["annotator", "admin"]
REFUSED = ["source_reviewer", "probe_reviewer", "adjudicator"]


def _api(role_users, role: str):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(role_users[role])
    return client


def _configs() -> None:
    ModelConfig.objects.create(name="b-sim", provider="simulated", model="sim", extra={"seed": 7})
    ModelConfig.objects.create(name="a-off", provider="simulated", model="sim", is_active=False)
    ModelConfig.objects.create(
        name="c-gpt", provider="openai", model="gpt-5", reasoning={"effort": "low"}, temperature=None
    )


@pytest.mark.django_db
@pytest.mark.parametrize("role", READERS)
def test_a_reader_lists_models_by_name_in_keyset_pages(role_users, role):
    _configs()
    client = _api(role_users, role)
    first = client.get("/api/models/?page_size=2").json()
    assert set(first) == {"next", "previous", "results"} and first["previous"] is None
    assert [m["name"] for m in first["results"]] == ["a-off", "b-sim"]
    second = client.get(first["next"]).json()
    assert [m["name"] for m in second["results"]] == ["c-gpt"] and second["next"] is None
    gpt = second["results"][0]
    assert (gpt["provider"], gpt["model"], gpt["reasoning"], gpt["is_active"]) == (
        "openai",
        "gpt-5",
        {"effort": "low"},
        True,
    )
    active = client.get("/api/models/?active=1").json()["results"]
    assert [m["name"] for m in active] == ["b-sim", "c-gpt"]
    sim = active[0]
    assert ("extra" in sim) == (role == "admin")
    if role == "admin":
        assert sim["extra"] == {"seed": 7}
    assert client.get("/api/models/?cursor=bad").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("role", READERS)
def test_a_reader_reads_one_model(role_users, role):
    _configs()
    client = _api(role_users, role)
    body = client.get("/api/models/c-gpt/").json()
    expected = {
        "name": "c-gpt",
        "provider": "openai",
        "model": "gpt-5",
        "base_url": "",
        "api_key_env": "",
        "max_output_tokens": None,
        "temperature": None,
        "reasoning": {"effort": "low"},
        "image_policy": "send",
        "price_in_per_mtok": "0.000000",
        "price_out_per_mtok": "0.000000",
        "requests_per_minute": None,
        "max_concurrency": None,
        "timeout_seconds": 120.0,
        "max_retries": 2,
        "is_active": True,
    }
    if role == "admin":
        expected["extra"] = {}
    assert {k: v for k, v in body.items() if k not in ("id", "created_at", "updated_at")} == expected
    assert client.get("/api/models/no-such-model/").status_code == 404


@pytest.mark.django_db
def test_an_admin_creates_and_changes_a_model_an_annotator_may_not(role_users):
    annotator, admin = _api(role_users, "annotator"), _api(role_users, "admin")
    body = {"name": "gpt", "provider": "openai", "model": "gpt-5", "reasoning": {"effort": "minimal"}}
    assert annotator.post("/api/models/", body, format="json").status_code == 403
    created = admin.post("/api/models/", body, format="json")
    assert created.status_code == 201, created.data
    assert {k: created.json()[k] for k in ("name", "provider", "model", "reasoning", "extra")} == {
        "name": "gpt",
        "provider": "openai",
        "model": "gpt-5",
        "reasoning": {"effort": "minimal"},
        "extra": {},
    }
    taken = admin.post("/api/models/", body, format="json")
    assert taken.status_code == 400 and taken.json()["code"] == "name_taken"
    change = {"max_retries": 4, "reasoning": {"effort": "high"}, "is_active": False, "name": "renamed"}
    assert annotator.patch("/api/models/gpt/", change, format="json").status_code == 403
    changed = admin.patch("/api/models/gpt/", change, format="json")
    assert changed.status_code == 200, changed.data
    assert {k: changed.json()[k] for k in ("name", "max_retries", "reasoning", "is_active")} == {
        "name": "gpt",  # the name stays
        "max_retries": 4,
        "reasoning": {"effort": "high"},
        "is_active": False,
    }
    config = ModelConfig.objects.get()
    assert (config.name, config.max_retries, config.reasoning, config.is_active) == (
        "gpt",
        4,
        {"effort": "high"},
        False,
    )
    assert admin.patch("/api/models/nope/", change, format="json").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "reasoning",
    [
        {"effort": 3},
        {"budget_tokens": "2048"},
        {"budget_tokens": True},
        {"include_thoughts": "yes"},
        {"x": None},
    ],
)
def test_reasoning_settings_are_typed_as_the_schema_says(role_users, reasoning):
    response = _api(role_users, "admin").post(
        "/api/models/",
        {"name": "g", "provider": "google", "model": "gemini-2.5-pro", "reasoning": reasoning},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["reasoning"] and not ModelConfig.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("role", REFUSED)
def test_a_role_without_the_annotator_role_is_refused_every_model_operation(role_users, role):
    _configs()
    client = _api(role_users, role)
    calls = [
        client.get("/api/models/"),
        client.post("/api/models/", {"name": "x", "provider": "simulated", "model": "s"}, format="json"),
        client.get("/api/models/b-sim/"),
        client.patch("/api/models/b-sim/", {"max_retries": 1}, format="json"),
    ]
    assert [call.status_code for call in calls] == [403] * 4
    assert ModelConfig.objects.count() == 3 and ModelConfig.objects.get(name="b-sim").max_retries == 2
