"""A run whose model needs what this machine lacks is refused at launch with the reason (issue 28 item 10): the
preflight per model (``llm.preflight``), the REST launch (400 ``model_unavailable``), the HTML launch form (the
error shown, nothing created) and ``manage.py evaluate``."""

from __future__ import annotations

import io
from typing import Any

import pytesseract.pytesseract as tess
import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from evaluation.models import EvalRequest, EvalRun
from llm.preflight import MissingTool, preflight
from llm.types import ProviderConfig
from models_registry.models import ModelConfig
from probes.models import Probe
from tests.endpoint_matrix.evaluation_cases import _probe
from tests.factories import ParentProblemFactory

NO_TESSERACT = "/nonexistent/bin/tesseract"
OCR_REFUSAL = (
    "Model ocr (OCR baseline) needs the tesseract binary, which is not installed on this machine "
    f"('{NO_TESSERACT}' is not found; apt-get install tesseract-ocr)."
)


# --- the preflight itself ------------------------------------------------------------------------------------


def _config(provider: str, **fields: Any) -> ProviderConfig:
    return ProviderConfig(name="m1", provider=provider, model="x", **fields)


def test_the_ocr_baseline_needs_the_tesseract_binary():
    config = _config("baseline-ocr-nearest")
    found = {"tesseract": "/usr/bin/tesseract"}
    assert preflight(config, which=found.get, tesseract="tesseract") == []
    assert preflight(config, which={}.get, tesseract="tesseract") == [
        MissingTool(
            "m1",
            "tesseract",
            "tool_missing",
            "Model m1 (OCR baseline) needs the tesseract binary, which is not installed on this machine "
            "('tesseract' is not found; apt-get install tesseract-ocr).",
        )
    ]


def test_the_ocr_baseline_follows_the_configured_command_and_the_real_path(monkeypatch, tmp_path):
    config = _config("baseline-ocr-nearest")
    monkeypatch.setattr(tess, "tesseract_cmd", NO_TESSERACT)
    assert [m.tool for m in preflight(config)] == ["tesseract"]
    binary = tmp_path / "tesseract"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(tess, "tesseract_cmd", str(binary))
    assert preflight(config) == []
    monkeypatch.setattr("shutil.which", lambda _command: None)  # shutil.which is asked at call time
    assert [m.code for m in preflight(config)] == ["tool_missing"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_a_provider_model_needs_its_key_variable_named_and_set(provider):
    named = _config(provider, api_key_env="DEMO_API_KEY")
    assert preflight(named, environ={"DEMO_API_KEY": "sk-1"}) == []
    assert preflight(named, environ={"DEMO_API_KEY": ""}) == [
        MissingTool(
            "m1",
            "DEMO_API_KEY",
            "api_key_missing",
            f"Model m1 ({provider}) needs the environment variable DEMO_API_KEY, which is not set.",
        )
    ]
    assert [(m.tool, m.code) for m in preflight(_config(provider), environ={})] == [
        ("api_key_env", "api_key_missing")
    ]


def test_an_openai_compatible_model_needs_a_base_url_and_a_named_key_only_when_it_names_one():
    url = "http://127.0.0.1:8001/v1"
    assert preflight(_config("openai_compatible", base_url=url), environ={}) == []
    assert [(m.tool, m.code) for m in preflight(_config("openai_compatible"), environ={})] == [
        ("base_url", "base_url_missing")
    ]
    keyed = _config("openai_compatible", base_url=url, api_key_env="LOCAL_API_KEY")
    assert [m.tool for m in preflight(keyed, environ={})] == ["LOCAL_API_KEY"]
    assert preflight(keyed, environ={"LOCAL_API_KEY": "k"}) == []


@pytest.mark.parametrize("provider", ["simulated", "scripted"])
def test_the_offline_models_need_nothing(provider):
    assert preflight(_config(provider), which={}.get, environ={}, tesseract=NO_TESSERACT) == []


# --- the launches -----------------------------------------------------------------------------------------------


@pytest.fixture
def launchable(db) -> Probe:
    ModelConfig.objects.create(name="ocr", provider="baseline-ocr-nearest", model="tesseract-nearest-region")
    ModelConfig.objects.create(name="sim", provider="simulated", model="sim")
    ModelConfig.objects.create(name="gpt", provider="openai", model="gpt-4o", api_key_env="PREFLIGHT_API_KEY")
    probe = _probe(ParentProblemFactory(problem_id="preflight"), "PAQ-PREFLIGHT-1")
    Probe.objects.filter(pk=probe.pk).update(state="approved")
    return probe


@pytest.fixture
def no_tesseract(monkeypatch):
    monkeypatch.setattr(tess, "tesseract_cmd", NO_TESSERACT)


BODY = {
    "models": ["ocr", "sim"],
    "conditions": ["raw"],
    "name": "preflight launch",
    "probe_filter": {"probe_ids": ["PAQ-PREFLIGHT-1"]},
    "resamples": 20,
}


def _admin_api(role_users) -> APIClient:
    client = APIClient()
    client.force_login(role_users["admin"])
    return client


def _nothing_created() -> bool:
    return not EvalRun.objects.exists() and not EvalRequest.objects.exists()


@pytest.mark.django_db
def test_the_api_refuses_a_launch_whose_model_lacks_tesseract_and_creates_nothing(
    role_users, launchable, no_tesseract
):
    response = _admin_api(role_users).post("/api/eval/runs/", BODY, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "message": f"{OCR_REFUSAL} Nothing was launched.",
        "code": "model_unavailable",
        "extra": {
            "missing": [{"model": "ocr", "tool": "tesseract", "code": "tool_missing", "message": OCR_REFUSAL}]
        },
    }
    assert _nothing_created()


@pytest.mark.django_db
def test_the_api_accepts_the_same_launch_when_tesseract_is_there(
    role_users, launchable, monkeypatch, tmp_path
):
    binary = tmp_path / "tesseract"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(tess, "tesseract_cmd", str(binary))
    response = _admin_api(role_users).post("/api/eval/runs/", BODY, format="json")
    assert response.status_code == 201, response.json()
    run = EvalRun.objects.get()
    assert sorted(run.requests.values_list("model__name", flat=True)) == ["ocr", "sim"]


@pytest.mark.django_db
def test_the_api_refuses_a_provider_model_without_its_key_and_accepts_it_with_the_key(
    role_users, launchable, monkeypatch
):
    monkeypatch.delenv("PREFLIGHT_API_KEY", raising=False)
    client = _admin_api(role_users)
    refused = client.post("/api/eval/runs/", {**BODY, "models": ["gpt"]}, format="json")
    assert refused.status_code == 400
    message = "Model gpt (openai) needs the environment variable PREFLIGHT_API_KEY, which is not set."
    assert refused.json()["message"] == f"{message} Nothing was launched."
    assert refused.json()["extra"]["missing"] == [
        {"model": "gpt", "tool": "PREFLIGHT_API_KEY", "code": "api_key_missing", "message": message}
    ]
    assert _nothing_created()
    monkeypatch.setenv("PREFLIGHT_API_KEY", "sk-test")
    accepted = client.post("/api/eval/runs/", {**BODY, "models": ["gpt"]}, format="json")
    assert accepted.status_code == 201 and EvalRun.objects.get().total == 1


FORM = {
    "name": "form launch",
    "models": ["ocr"],
    "conditions": ["raw"],
    "resamples": "20",
    "execution": "direct",
}


@pytest.mark.django_db
def test_the_launch_form_shows_the_refusal_and_creates_nothing(client, role_users, launchable, no_tesseract):
    client.force_login(role_users["admin"])
    response = client.post("/runs/", FORM)
    assert response.status_code == 200
    body = response.content.decode()
    assert (
        f'<div class="alert alert--error" role="alert">{OCR_REFUSAL.replace("'", "&#x27;")} Nothing was launched.</div>'
        in body
    )
    assert "This launch will be refused:" in body  # the preview says so before the button is pressed
    assert _nothing_created()


@pytest.mark.django_db
def test_the_launch_form_launches_when_tesseract_is_there(client, role_users, launchable):
    client.force_login(role_users["admin"])
    response = client.post("/runs/", FORM)
    run = EvalRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert "This launch will be refused:" not in client.get("/runs/").content.decode()


@pytest.mark.django_db
def test_the_preview_warns_before_the_launch(client, role_users, launchable, no_tesseract):
    client.force_login(role_users["admin"])
    preview = client.get("/runs/preview/", {"models": ["ocr", "sim"], "conditions": ["raw"]}).content.decode()
    assert "This launch will be refused:" in preview and "needs the tesseract binary" in preview
    offline = client.get("/runs/preview/", {"models": ["sim"], "conditions": ["raw"]}).content.decode()
    assert "This launch will be refused:" not in offline


@pytest.mark.django_db
def test_manage_py_evaluate_refuses_with_the_reason(launchable, no_tesseract):
    err = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command(
            "evaluate",
            "--models",
            "ocr",
            "--conditions",
            "raw",
            "--probes",
            "probe_ids=PAQ-PREFLIGHT-1",
            "--no-wait",
            stdout=io.StringIO(),
            stderr=err,
        )
    assert str(refused.value) == f"{OCR_REFUSAL} Nothing was launched."
    assert f"refused at launch: {OCR_REFUSAL}" in err.getvalue()
    assert _nothing_created()
