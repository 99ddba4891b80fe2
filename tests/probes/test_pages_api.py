"""Pages and REST: who sees the public prompt, who sees the private key."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from probes.services import compile_run_create, compile_run_execute

from . import kit_demo as demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def compiled(demo_parent):
    return compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)


def test_probe_page_shows_the_prompt_but_the_key_only_to_a_scorer(client, role_users, scorer, compiled):
    client.force_login(scorer)
    body = client.get(f"/probes/{demo.T02}/?condition=gold").content.decode()
    assert 'id="gold-aliases">E2<' in body
    assert "[{&quot;anchor&quot;: &quot;R2&quot;, &quot;text&quot;: &quot;m&quot;}]" in body
    scorer.user_permissions.remove(Permission.objects.get(codename="view_private_mapping"))
    client.force_login(type(scorer).objects.get(pk=scorer.pk))
    body = client.get(f"/probes/{demo.T02}/").content.decode()
    assert "Original statement" in body and "Private key" not in body and demo.PE_BLOCK_A[:20] not in body


def test_probe_api_private_part_needs_the_scorer_permission(client, role_users, scorer, compiled):
    client.force_login(scorer)
    body = client.get(f"/api/probes/{demo.T03_IMAGE}/").json()
    assert body["private"]["gold_aliases"] == ["E2"]
    assert body["attachment_ids"] == ["V1", "V2", "V3", "img_0"]
    client.force_login(role_users["probe_reviewer"])
    assert client.get(f"/api/probes/{demo.T03_IMAGE}/").status_code == 403


def test_compile_run_page_groups_issues_by_code(client, role_users, django_user_model, demo_parent):
    from tests.probes.conftest import make_demo_parent

    doc = demo.pass4()
    doc["quantities"][1]["owner_id"] = ""
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_B", sample="SYNTHETIC_B", pass4=doc)
    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    client.force_login(role_users["admin"])
    body = client.get(f"/compile/{run.pk}/").content.decode()
    assert "<code>QUANTITY_IDENTITY_OR_OWNER_CONFLICT</code> — 1" in body
    assert "also QUANTITY_IDENTITY_OR_OWNER_CONFLICT, QUANTITY_OWNER_UNRESOLVED" in body


def test_launch_compile_run_via_api(client, role_users, demo_parent, django_capture_on_commit_callbacks):
    client.force_login(role_users["admin"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/compile-runs/", {"parent_ids": [demo_parent.problem_id]}, content_type="application/json"
        )
    assert response.status_code == 202
    run = client.get(f"/api/compile-runs/{response.json()['id']}/").json()
    assert run["status"] == "succeeded" and run["counts"]["probes"] == 3
    assert (
        client.post(
            "/api/compile-runs/", {"parent_ids": ["nope"]}, content_type="application/json"
        ).status_code
        == 400
    )
