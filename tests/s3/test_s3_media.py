"""Media on a real S3 API (issue 29 §3): every media path of the app against moto's S3 server, configured as
production configures it (``PHYSALIGN_MEDIA_S3_*``, see ``conftest.py``), with no local media folder.

Originals arrive by an uploaded import and are served by the role-checked image view; a compile stores its views
content-addressed; a release lives in the bucket (its folder, an index, its zips) so a worker without the
exporting machine's disk builds and serves its public zip and its Hugging Face dataset, and the harness exports
read it; an evaluation run's item file is written to the bucket and served to key holders only. Every download
goes through the app (no bucket URL is handed out), and an object missing from the bucket gives a 404 or a
failed build with its reason, never a 500.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import urllib.error
import urllib.request
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation.models import ImportJob, ProblemImage
from evaluation.models import EvalRun
from evaluation.runs import eval_run_create, eval_run_dispatch
from kit.canonical import parse_json
from probes.models import RenderedView
from probes.release_store import index_name, public_zip_name, releases_root
from probes.services import compile_run_create, compile_run_execute
from tests.conftest import make_user
from tests.factories import png_bytes, scripted

BUCKET_URL_MARKERS = ("X-Amz-", "127.0.0.1:", "amazonaws")  # what a handed-out bucket URL would carry


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def _no_bucket_url(response) -> None:
    text = _body(response).decode("utf-8", "replace") + " ".join(f"{k}: {v}" for k, v in response.items())
    assert not any(marker in text for marker in BUCKET_URL_MARKERS), "a bucket URL was handed out"


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _problem_row(problem_id: str, images: list[str]) -> dict:
    return {
        "id": problem_id,
        "source": "Test Source",
        "source_id": f"src-{problem_id}",
        "license": "CC BY 4.0",
        "statement": "A block of mass 2 kg rests on a table.",
        "question": "What is its weight?",
        "options": None,
        "answer": "19.6 N",
        "solution": None,
        "images": images,
        "domain": "mechanics",
        "meta": {},
    }


@pytest.fixture
def admin(django_user_model):
    return make_user(django_user_model, "boss", "admin")


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- originals --------------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_an_uploaded_import_stores_its_originals_in_the_bucket_and_the_image_view_serves_them(
    s3_media, annotator, eager, django_capture_on_commit_callbacks
):
    image = png_bytes(64, 48, (10, 120, 200))
    archive = _zip(
        {
            "manifest.jsonl": (json.dumps(_problem_row("s3_p1", ["images/a.png"])) + "\n").encode(),
            "images/a.png": image,
        }
    )
    client = _client(annotator)
    with django_capture_on_commit_callbacks(execute=True):  # the job runs once the upload is committed
        response = client.post(
            "/imports/", {"kind": "problems", "file": SimpleUploadedFile("batch.zip", archive)}
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    job = ImportJob.objects.get()
    assert job.status == "succeeded", job.report
    stored = ProblemImage.objects.get(parent__problem_id="s3_p1")
    name = f"problems/{_sha(image)[:2]}/{_sha(image)}.png"
    assert stored.file.name == name
    # the upload itself was in the bucket only while its job ran: only the original is left
    assert s3_media.keys() == {name}
    assert s3_media.get(name) == image and s3_media.head(name)["ContentType"] == "image/png"

    served = client.get(f"/problems/s3_p1/images/{stored.image_id}")
    assert served.status_code == 200
    assert _body(served) == image
    assert served["Content-Type"] == "image/png" and served["Content-Length"] == str(len(image))
    assert served["Cache-Control"] == "private, max-age=3600"
    _no_bucket_url(served)
    assert Client().get(f"/problems/s3_p1/images/{stored.image_id}").status_code == 302  # login first

    s3_media.delete(name)  # gone from the bucket: a 404 that says so, not a 500
    missing = client.get(f"/problems/s3_p1/images/{stored.image_id}")
    assert missing.status_code == 404


@pytest.mark.django_db
def test_the_import_api_upload_goes_through_the_bucket_too(
    s3_media, annotator, eager, django_capture_on_commit_callbacks
):
    from rest_framework.test import APIClient

    image = png_bytes(30, 20)
    archive = _zip(
        {
            "manifest.jsonl": (json.dumps(_problem_row("s3_api", ["images/b.png"])) + "\n").encode(),
            "images/b.png": image,
        }
    )
    client = APIClient()
    client.force_authenticate(annotator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/imports/",
            {"kind": "problems", "file": SimpleUploadedFile("b.zip", archive)},
            format="multipart",
        )
    assert response.status_code == 202, response.data
    assert ImportJob.objects.get().status == "succeeded"
    assert s3_media.keys() == {f"problems/{_sha(image)[:2]}/{_sha(image)}.png"}


# --- rendered views ---------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_compile_stores_its_views_content_addressed_in_the_bucket(s3_media, compiled, admin):
    views = list(RenderedView.objects.all())
    assert views
    for view in views:
        assert view.file.name == f"views/{view.bytes_sha256[:2]}/{view.bytes_sha256}.png"
        assert s3_media.sha256(view.file.name) == view.bytes_sha256
        assert s3_media.head(view.file.name)["ContentType"] == "image/png"
    before = {name: s3_media.head(name)["ETag"] for name in s3_media.keys()}

    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)  # unchanged: nothing new
    assert {name: s3_media.head(name)["ETag"] for name in s3_media.keys()} == before

    probe = compiled.filter(views__isnull=False).first()
    view = probe.views.first()
    client = _client(admin)
    url = f"/probes/{probe.logical_probe_id}/attachments/{view.view_id}"
    served = client.get(url)
    assert served.status_code == 200, url
    assert _sha(_body(served)) == view.bytes_sha256 and served["Content-Type"] == "image/png"
    s3_media.delete(view.file.name)
    assert client.get(url).status_code == 404  # not a 500


# --- releases ---------------------------------------------------------------------------------------------------
def _http_get(live_server, path: str, session: str | None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(live_server.url + path)
    if session:
        request.add_header("Cookie", f"sessionid={session}")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.mark.django_db(transaction=True)
def test_a_release_lives_in_the_bucket_and_its_zips_build_and_download_without_the_exporting_disk(
    s3_media, released, django_user_model, eager, live_server, tmp_path
):
    release = released
    folder = Path(release.path)
    sealed = parse_json((folder / "FILE_MANIFEST.json").read_bytes())
    local = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    # the whole folder is in the bucket, with an index of it
    index = json.loads(s3_media.get(index_name(release.release_id)))
    assert {row["name"] for row in index["files"]} == set(local) == set(sealed) | {"FILE_MANIFEST.json"}
    for name, data in local.items():
        assert s3_media.get(f"releases/{release.release_id}/{name}") == data
    shutil.rmtree(tmp_path / "exported")  # a worker on another machine: the exporting disk is not there

    admin = make_user(django_user_model, "boss", "admin")
    client = _client(admin)
    page = client.get(f"/releases/{release.release_id}/")
    assert page.status_code == 200
    assert (
        "<code>public/qa_raw.json</code>" in page.content.decode()
    )  # the file list, from the bucket's index

    response = client.post(f"/releases/{release.release_id}/zip/")  # eager: the worker's task runs here
    assert response.status_code == 302
    release.refresh_from_db()
    assert (release.zip_status, release.zip_path) == ("ready", public_zip_name(release.release_id))
    stored_zip = s3_media.get(public_zip_name(release.release_id))
    members = zipfile.ZipFile(io.BytesIO(stored_zip))
    public = {name for name in local if name.startswith("public/")}
    assert set(members.namelist()) == public
    assert all(_sha(members.read(name)) == sealed[name] for name in public)
    assert 'data-testid="release-download"' in client.get(f"/releases/{release.release_id}/").content.decode()

    # downloaded over HTTP from the running app, through its role check
    session = client.cookies["sessionid"].value
    status, headers, body = _http_get(live_server, f"/releases/{release.release_id}/download/", session)
    assert status == 200 and body == stored_zip
    assert headers["Content-Type"] == "application/zip"
    assert headers["Content-Disposition"] == f'attachment; filename="{release.release_id}.public.zip"'
    assert not any(marker in " ".join(headers.values()) for marker in BUCKET_URL_MARKERS)
    annotator = _client(make_user(django_user_model, "ann", "annotator"))
    status, _, _ = _http_get(
        live_server, f"/releases/{release.release_id}/download/", annotator.cookies["sessionid"].value
    )
    assert status == 403
    status, headers, _ = _http_get(live_server, f"/releases/{release.release_id}/download/", None)
    assert status == 302 and "/accounts/login/" in headers["Location"]
    api = client.get(f"/api/releases/{release.release_id}/zip/")
    assert api.status_code == 200 and _body(api) == stored_zip

    # the Hugging Face dataset: built from a working copy fetched from the bucket, its zip kept there
    assert client.post(f"/releases/{release.release_id}/hf/").status_code == 302
    release.refresh_from_db()
    assert release.hf_status == "ready", release.hf_error
    hf_zip = s3_media.get(f"releases/{release.release_id}.hf.zip")
    hf_names = zipfile.ZipFile(io.BytesIO(hf_zip)).namelist()
    assert "README.md" in hf_names and any(n.endswith(".parquet") for n in hf_names)
    status, headers, body = _http_get(live_server, f"/releases/{release.release_id}/hf/download/", session)
    assert status == 200 and body == hf_zip and headers["Content-Type"] == "application/zip"
    build = releases_root() / ".build"
    assert not build.exists() or not any(build.iterdir()), "a built zip or dataset was left on the local disk"

    # a zip gone from the bucket: not ready, a 404 on download, and "Prepare" again
    s3_media.delete(public_zip_name(release.release_id))
    assert client.get(f"/releases/{release.release_id}/download/").status_code == 404
    assert 'data-testid="release-prepare"' in client.get(f"/releases/{release.release_id}/").content.decode()


@pytest.mark.django_db
def test_the_harness_exports_read_a_release_whose_folder_is_only_in_the_bucket(s3_media, released, tmp_path):
    shutil.rmtree(tmp_path / "exported")
    out = StringIO()
    call_command(
        "export_hf",
        "--release",
        released.release_id,
        "--output",
        str(tmp_path / "out" / "hf"),
        "--vlmevalkit",
        str(tmp_path / "out" / "vlm"),
        "--lmms-eval",
        str(tmp_path / "out" / "lmms"),
        stdout=out,
    )
    copy = releases_root() / ".copies" / released.release_id
    assert f"PHYSALIGN_PRIVATE_KEY={copy}/private/mappings.json" in out.getvalue()
    assert (tmp_path / "out" / "hf" / "README.md").is_file()
    assert any((tmp_path / "out" / "vlm").glob("*.tsv")) and any((tmp_path / "out" / "lmms").glob("*.yaml"))


@pytest.mark.django_db
def test_a_release_whose_files_left_the_bucket_fails_its_build_with_the_reason(
    s3_media, released, tmp_path, admin, eager, django_capture_on_commit_callbacks
):
    shutil.rmtree(tmp_path / "exported")
    s3_media.delete(index_name(released.release_id))
    client = _client(admin)
    page = client.get(f"/releases/{released.release_id}/")
    assert page.status_code == 200  # the page still opens, with no files to list
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/releases/{released.release_id}/zip/").status_code == 302
    released.refresh_from_db()
    assert released.zip_status == "failed"
    assert "Building the zip failed" in client.get(f"/releases/{released.release_id}/").content.decode()
    with pytest.raises(CommandError, match="missing from the media storage"):
        call_command("export_hf", "--release", released.release_id, "--output", str(tmp_path / "hf"))


@pytest.mark.django_db
def test_a_changed_object_in_the_bucket_is_refused_not_used(s3_media, released, tmp_path):
    from physalign_site.errors import ApplicationError
    from probes.release_store import release_folder

    shutil.rmtree(tmp_path / "exported")
    name = f"releases/{released.release_id}/public/qa_raw.json"
    s3_media.client.put_object(Bucket=s3_media.name, Key=f"{s3_media.prefix}/{name}", Body=b"[]")
    with pytest.raises(ApplicationError) as refused:
        release_folder(released)
    assert refused.value.code == "RELEASE_FILE_CHANGED"
    assert not (releases_root() / ".copies" / released.release_id).exists()


def test_release_folders_never_default_into_the_media_root_with_a_bucket(s3_media, settings, tmp_path):
    settings.RELEASES_ROOT = ""
    assert releases_root() == tmp_path / "var" / "releases"


# --- item files -------------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_an_item_file_is_written_to_the_bucket_and_served_to_key_holders_only(
    s3_media, released, eager, django_user_model
):
    model = scripted("m-s3", [], default="not json")
    run = eval_run_create(model_names=[model.name], conditions=["raw"], release=released, start=False)
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.COMPLETED
    name = f"eval_runs/run-{run.pk}-items.jsonl"
    assert run.items_file.name == name
    stored = s3_media.get(name)
    assert len(stored.splitlines()) == run.total

    holder = make_user(django_user_model, "keys", "admin")
    holder.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    client = _client(holder)
    served = client.get(f"/runs/{run.pk}/download/items/")
    assert served.status_code == 200
    assert _body(served) == stored and served["Content-Type"] == "application/x-ndjson"
    _no_bucket_url(served)
    admin = _client(make_user(django_user_model, "boss", "admin"))
    assert admin.get(f"/runs/{run.pk}/download/items/").status_code == 403  # the targets: key holders only

    s3_media.delete(
        name
    )  # gone from the bucket: rebuilt from the rows on the next download, and stored again
    again = client.get(f"/runs/{run.pk}/download/items/")
    assert again.status_code == 200 and _body(again) == stored
    assert s3_media.get(name) == stored


# --- the Kit workspace export -------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_kit_workspace_export_zip_is_kept_in_the_bucket_and_downloaded_by_admins_only(
    s3_media, compiled, admin, django_user_model, eager, django_capture_on_commit_callbacks
):
    from annotation.models import WorkspaceExport

    client = _client(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/kit-workspace/", {"source": "", "problem_ids": ""})
    assert response.status_code == 302
    job = WorkspaceExport.objects.get()
    assert job.status == WorkspaceExport.Status.READY, job.error
    stored = s3_media.get(job.file.name)
    assert job.file.name.startswith("exports/kit_workspace/") and _sha(stored) == job.sha256
    served = client.get(f"/exports/kit-workspace/{job.pk}/download")
    assert served.status_code == 200 and _body(served) == stored
    assert served["Content-Type"] == "application/zip"
    _no_bucket_url(served)
    annotator = _client(make_user(django_user_model, "ann", "annotator"))
    assert annotator.get(f"/exports/kit-workspace/{job.pk}/download").status_code == 403
    s3_media.delete(job.file.name)
    assert client.get(f"/exports/kit-workspace/{job.pk}/download").status_code == 410
