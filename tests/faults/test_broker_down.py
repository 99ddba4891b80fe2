"""The task queue's broker (Redis) unreachable when a run is launched or resumed (issue 32, §2): the request gets a
clear 503 that says so, never a 500; the run is kept, queued with every row pending, not left "running" with no task
to run it; pages that do not need the broker still serve; once the broker is back, a resume runs it to the end."""

from __future__ import annotations

from typing import Any

import pytest
from kombu.exceptions import OperationalError
from rest_framework.test import APIClient

from evaluation import tasks
from evaluation.models import EvalRun
from models_registry.models import ModelConfig
from probes.models import Probe
from tests.endpoint_matrix.evaluation_cases import _probe
from tests.evaluation.test_eval_runs_api import BODY
from tests.factories import ParentProblemFactory

REFUSED = OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def _broker_down(*args: Any, **kwargs: Any) -> None:
    raise REFUSED


@pytest.fixture
def launchable(db) -> Probe:  # one approved probe and a simulated model, as the runs API tests launch
    ModelConfig.objects.create(name="m", provider="simulated", model="sim")
    probe = _probe(ParentProblemFactory(problem_id="api-eval"), "PAQ-API-EVAL-1")
    Probe.objects.filter(pk=probe.pk).update(state="approved")
    return probe


@pytest.fixture
def admin(role_users) -> APIClient:
    client = APIClient()
    client.force_login(role_users["admin"])
    return client


@pytest.mark.django_db(transaction=True)
def test_a_launch_with_the_broker_down_is_a_503_and_the_run_waits_paused_until_resumed(
    admin, launchable, monkeypatch
):
    for name in ("delay", "apply_async"):
        monkeypatch.setattr(tasks.eval_chunk_task, name, _broker_down)
    response = admin.post("/api/eval/runs/", BODY, format="json")
    assert response.status_code == 503, response.content
    run = EvalRun.objects.get()
    body = response.json()
    assert body["code"] == "queue_unavailable" and body["extra"] == {"run": run.pk, "status": "paused"}
    assert f"Run {run.pk} is kept (paused)" in body["message"] and "Connection refused" in body["message"]
    assert run.status == "paused" and "Resume the run when the queue (Redis) is back" in run.error
    assert sorted(run.requests.values_list("status", flat=True)) == ["pending", "pending"]  # nothing lost

    # pages that do not need the broker still serve, and say why the run waits
    page = admin.get(f"/runs/{run.pk}/")
    assert page.status_code == 200 and "The task queue could not be reached" in page.content.decode()
    assert admin.get("/api/eval/runs/").status_code == 200

    # a resume while it is still down: the same clear answer, still paused, still nothing lost
    resumed = admin.post(f"/runs/{run.pk}/do/resume/")
    assert resumed.status_code in (200, 302)
    run.refresh_from_db()
    assert run.status == "paused" and run.requests.filter(status="pending").count() == 2

    monkeypatch.undo()  # the broker is back (tasks run eagerly here): a resume runs every request once
    admin.post(f"/runs/{run.pk}/do/resume/")
    run.refresh_from_db()
    assert run.status == "completed" and run.error == ""
    assert run.requests.exclude(status="pending").count() == 2 and run.requests.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_launch_form_with_the_broker_down_opens_the_paused_run_that_says_why(
    admin, launchable, monkeypatch
):
    monkeypatch.setattr(tasks.eval_chunk_task, "delay", _broker_down)
    form = {
        "name": "form launch",
        "models": ["m"],
        "conditions": ["raw"],
        "resamples": "20",
        "execution": "direct",
    }
    response = admin.post("/runs/", form)
    run = EvalRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    page = admin.get(response["Location"]).content.decode()
    assert (
        run.status == "paused"
        and "The task queue could not be reached" in page
        and ">Resume</button>" in page
    )
