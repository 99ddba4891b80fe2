"""The releases page lists each release; its page shows the files and builds the public zip on demand."""

from __future__ import annotations

import io
import zipfile

from audit.models import Event
from probes.models import Release
from probes.release_views import release_files
from tests.conftest import make_user


def test_the_list_links_each_release_and_its_page_lists_public_and_private_files(
    client, release, django_user_model
):
    client.force_login(make_user(django_user_model, "boss", "admin"))
    listed = client.get("/releases/").content.decode()
    assert f'href="/releases/{release.release_id}/"' in listed
    page = client.get(f"/releases/{release.release_id}/").content.decode()
    rows = release_files(release)
    names = [row["name"] for row in rows]
    assert any(n.startswith("public/") for n in names) and any(n.startswith("private/") for n in names)
    assert names.index(next(n for n in names if n.startswith("public/"))) == 0  # public part first
    for row in rows:
        assert f"<code>{row['name']}</code>" in page
    assert "private (not in the download)" in page
    assert 'data-testid="release-prepare"' in page and 'data-testid="release-download"' not in page


def test_preparing_the_download_builds_the_public_zip_and_the_page_serves_it(
    client, release, django_user_model, eager, django_capture_on_commit_callbacks
):
    admin = make_user(django_user_model, "boss", "admin")
    client.force_login(admin)
    assert client.get(f"/releases/{release.release_id}/download/").status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/releases/{release.release_id}/zip/")
    assert response.status_code == 302 and response["Location"] == f"/releases/{release.release_id}/"
    release.refresh_from_db()
    assert release.zip_status == "ready"
    assert Event.objects.filter(verb="release.zip_queued", object_id=str(release.pk)).count() == 1
    page = client.get(f"/releases/{release.release_id}/").content.decode()
    assert 'data-testid="release-download"' in page
    download = client.get(f"/releases/{release.release_id}/download/")
    assert download.status_code == 200
    body = b"".join(download.streaming_content)
    names = zipfile.ZipFile(io.BytesIO(body)).namelist()
    public = sorted(row["name"] for row in release_files(release) if row["public"] and not row["folder"])
    assert names and all(name.startswith("public/") for name in names)
    assert set(public) <= set(names)
    # the API serves the same file
    assert b"".join(client.get(f"/api/releases/{release.release_id}/zip/").streaming_content) == body


def test_a_zip_being_built_is_not_queued_twice(client, release, django_user_model):
    client.force_login(make_user(django_user_model, "boss", "admin"))
    Release.objects.filter(pk=release.pk).update(zip_status="running", zip_progress=40)
    client.post(f"/releases/{release.release_id}/zip/")
    release.refresh_from_db()
    assert (release.zip_status, release.zip_progress) == ("running", 40)
    partial = client.get(f"/releases/{release.release_id}/", HTTP_HX_REQUEST="true").content.decode()
    assert "Building the zip: 40 %" in partial and 'hx-trigger="every 1s"' in partial
    assert "<html" not in partial


def test_the_signoff_page_links_the_release_it_exported(client, release, django_user_model):
    from review.models import Signoff

    admin = make_user(django_user_model, "boss", "admin")
    Signoff.objects.create(
        mode="individual",
        split="development",
        problem_ids=["SYNTHETIC_TEST_ONLY"],
        target_root="0" * 64,
        confirmations={},
        evidence_ref="test",
        reviewer=admin,
        release=release,
    )
    client.force_login(admin)
    assert f'href="/releases/{release.release_id}/"' in client.get("/review/signoff/").content.decode()
