"""The Kit workspace export as an admin asks for it: over the API and the page, built by a worker, downloaded as a
zip that holds exactly what ``manage.py export_kit_workspace`` writes (issue 29 item 1)."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from annotation.demo import generate_workspace
from annotation.exporters import export_kit_workspace
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem, ProblemImage, WorkspaceExport
from audit.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    generate_workspace(ws, count=5, seed=11)
    assert import_kit_workspace(workspace=ws, actor=None).succeeded
    return sorted(ParentProblem.objects.values_list("problem_id", flat=True))


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def _zip_files(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            info.filename.split("/", 1)[1]: hashlib.sha256(archive.read(info)).hexdigest()
            for info in archive.infolist()
        }


def _folder_files(root) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_an_admin_exports_over_the_api_and_downloads_the_cli_files(
    workspace, admin_user_role, eager, tmp_path, django_capture_on_commit_callbacks
):
    client = _client(admin_user_role)
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            "/api/kit-workspace-exports/",
            {"problem_ids": workspace[1:4], "approved_only": True},
            format="json",
        )
    assert created.status_code == 202, created.content
    status = client.get(f"/api/kit-workspace-exports/{created.json()['id']}/").json()
    assert status["status"] == "ready", status
    assert (status["done"], status["total"], status["problem_ids"]) == (3, 3, workspace[1:4])
    assert status["summary"]["problems"] == 3 and status["summary"]["approved_stages"] == 12
    download = client.get(status["download_url"])
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    data = b"".join(download.streaming_content)
    assert hashlib.sha256(data).hexdigest() == status["sha256"] and len(data) == status["byte_size"]

    cli = tmp_path / "cli"
    export_kit_workspace(output=cli, problem_ids=workspace[1:4], approved_only=True)
    assert _zip_files(data) == _folder_files(cli)
    assert Event.objects.filter(verb="workspace_export.downloaded", actor=admin_user_role).count() == 1


def test_nobody_but_an_admin_may_ask_watch_or_download(workspace, role_users, eager):
    job = WorkspaceExport.objects.create(status=WorkspaceExport.Status.QUEUED)
    for role, user in role_users.items():
        if role == "admin":
            continue
        client = _client(user)
        assert client.post("/api/kit-workspace-exports/", {}, format="json").status_code == 403, role
        assert client.get(f"/api/kit-workspace-exports/{job.pk}/").status_code == 403, role
        assert client.get(f"/api/kit-workspace-exports/{job.pk}/download").status_code == 403, role
        assert client.get("/exports/kit-workspace/").status_code == 403, role
    assert not WorkspaceExport.objects.exclude(pk=job.pk).exists()
    # the admin, before the zip is built: a clear 409, not a 500
    response = _client(role_users["admin"]).get(f"/api/kit-workspace-exports/{job.pk}/download")
    assert response.status_code == 409 and response.json()["code"] == "WORKSPACE_EXPORT_NOT_READY"


def test_a_failed_build_says_why_and_stores_no_zip(
    workspace, admin_user_role, eager, django_capture_on_commit_callbacks
):
    image = ProblemImage.objects.get(parent__problem_id=workspace[0])
    default_storage.delete(image.file.name)  # the original is gone from the media storage
    with django_capture_on_commit_callbacks(execute=True):
        created = _client(admin_user_role).post("/api/kit-workspace-exports/", {}, format="json")
    job = WorkspaceExport.objects.get(pk=created.json()["id"])
    assert job.status == "failed" and not job.file
    assert "No such file" in job.error or "does not exist" in job.error or "not found" in job.error.lower(), (
        job.error
    )
    assert (
        not default_storage.exists("exports/kit_workspace")
        or not default_storage.listdir("exports/kit_workspace")[1]
    )


def test_the_page_journey(workspace, admin_user_role, eager, django_capture_on_commit_callbacks):
    client = _client(admin_user_role)
    assert "Export the annotation work as a Kit workspace" in client.get("/imports/").content.decode()
    page = client.get("/exports/kit-workspace/").content.decode()
    assert "Every source" in page and "physalign_demo" in page
    refused = client.post("/exports/kit-workspace/", {"problem_ids": "nope"})
    assert refused.status_code == 400 and "Unknown problem ids: nope" in refused.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/kit-workspace/", {"source": "physalign_demo", "problem_ids": ""})
    assert response.status_code == 302
    detail = client.get(response["Location"]).content.decode()
    assert "Ready" in detail and "Download the zip" in detail
    job = WorkspaceExport.objects.get()
    assert (job.source, job.problem_ids, job.approved_only, job.summary["problems"]) == (
        "physalign_demo",
        [],
        False,
        5,
    )
    download = client.get(f"/exports/kit-workspace/{job.pk}/download")
    assert download.status_code == 200
    assert len(b"".join(download.streaming_content)) == job.byte_size


def test_a_zip_gone_from_the_storage_is_a_clear_410(admin_user_role):
    from django.core.files.base import ContentFile

    job = WorkspaceExport(status=WorkspaceExport.Status.READY, sha256="0" * 64, byte_size=4)
    job.file.save("gone.zip", ContentFile(b"PK\x05\x06"), save=False)
    job.save()
    default_storage.delete(job.file.name)
    client = _client(admin_user_role)
    page = client.get(f"/exports/kit-workspace/{job.pk}/download")
    assert page.status_code == 410 and "no longer in the media storage" in page.content.decode()
    api = client.get(f"/api/kit-workspace-exports/{job.pk}/download")
    assert api.status_code == 410 and api.json()["code"] == "WORKSPACE_EXPORT_FILE_MISSING"
