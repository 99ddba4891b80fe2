"""The evaluation runs API as its users call it: admins list (keyset pages), launch and read runs, with the
exact answers; every other role is refused (403)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from evaluation.models import EvalRun
from models_registry.models import ModelConfig
from probes.models import Probe
from tests.endpoint_matrix.evaluation_cases import _probe
from tests.factories import ParentProblemFactory

REFUSED = ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"]


@pytest.fixture
def launchable(db) -> Probe:
    ModelConfig.objects.create(name="m", provider="simulated", model="sim")
    probe = _probe(ParentProblemFactory(problem_id="api-eval"), "PAQ-API-EVAL-1")
    Probe.objects.filter(pk=probe.pk).update(state="approved")
    return probe


def api(role_users: dict[str, Any], role: str) -> APIClient:
    client = APIClient()
    client.force_login(role_users[role])
    return client


BODY = {
    "models": ["m"],
    "conditions": ["raw", "no_image"],
    "name": "api launch",
    "probe_filter": {"probe_ids": ["PAQ-API-EVAL-1"]},
    "resamples": 20,
}


@pytest.mark.django_db
def test_an_admin_launches_a_run_and_reads_it(role_users, launchable):
    client = api(role_users, "admin")
    response = client.post("/api/eval/runs/", BODY, format="json")
    assert response.status_code == 201, response.data
    run = EvalRun.objects.get()
    body = response.json()
    manifest = body.pop("manifest")
    assert body == {
        "id": run.pk,
        "name": "api launch",
        "status": "queued",
        "release": None,
        "models": ["m"],
        "conditions": ["raw", "no_image"],
        "total": 2,
        "done": 0,
        "by_status": {"pending": 2},
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": "0",
        "metrics": None,
    }
    assert manifest == run.manifest and run.created_by == role_users["admin"]
    detail = client.get(f"/api/eval/runs/{run.pk}/")
    assert detail.status_code == 200 and detail.json() == {**body, "manifest": manifest}
    assert client.get("/api/eval/runs/999999/").status_code == 404


@pytest.mark.django_db
def test_a_launch_names_what_is_wrong(role_users, launchable):
    client = api(role_users, "admin")
    assert client.post("/api/eval/runs/", {**BODY, "models": []}, format="json").status_code == 400
    unknown = client.post("/api/eval/runs/", {**BODY, "models": ["nope"]}, format="json")
    assert unknown.status_code == 400 and unknown.json()["code"] == "models_invalid"
    release = client.post("/api/eval/runs/", {**BODY, "release": "NREL-nope"}, format="json")
    assert release.status_code == 404 and release.json()["code"] == "release_not_found"
    assert not EvalRun.objects.exists()


@pytest.mark.django_db
def test_an_admin_lists_runs_newest_first_in_keyset_pages(role_users, launchable):
    client = api(role_users, "admin")
    ids = [
        client.post("/api/eval/runs/", {**BODY, "name": f"run {i}"}, format="json").json()["id"]
        for i in range(3)
    ]
    first = client.get("/api/eval/runs/?page_size=2").json()
    assert set(first) == {"next", "previous", "results"} and first["previous"] is None
    assert first["results"] == [
        {"id": ids[2], "name": "run 2", "status": "queued", "total": 2, "conditions": ["raw", "no_image"]},
        {"id": ids[1], "name": "run 1", "status": "queued", "total": 2, "conditions": ["raw", "no_image"]},
    ]
    second = client.get(first["next"]).json()
    assert [row["id"] for row in second["results"]] == [ids[0]] and second["next"] is None
    assert client.get("/api/eval/runs/?cursor=bad").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("role", REFUSED)
def test_every_other_role_is_refused_every_run_operation(role_users, launchable, role):
    run = EvalRun.objects.create(name="existing", conditions=["raw"])
    client = api(role_users, role)
    calls = [
        client.get("/api/eval/runs/"),
        client.post("/api/eval/runs/", BODY, format="json"),
        client.get(f"/api/eval/runs/{run.pk}/"),
    ]
    assert [call.status_code for call in calls] == [403] * 3
    assert list(EvalRun.objects.values_list("pk", flat=True)) == [run.pk]
