"""Backup, restore and media_prune with the media on a real S3 API (issue 29 §3): a release (its folder, index
and built zip in the bucket), a finished evaluation run (its item file) and the originals and views are backed
up from the bucket, restored by ``manage.py restore`` in another process into a fresh database and a fresh
bucket, and found equal object by object; the restored release validates from the new bucket alone.
``media_prune`` on the bucket removes only objects no row names, never a release's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from io import StringIO
from pathlib import Path

import boto3
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from evaluation.models import EvalRun
from evaluation.runs import eval_run_create, eval_run_dispatch
from probes.release_store import index_name, public_zip_name, release_folder
from probes.releases import UNSIGNED_TOLERATED, release_validate, release_zip_build
from tests.backup.conftest import postgres_url, query, table_counts
from tests.conftest import make_user
from tests.factories import scripted

from .conftest import PREFIX, REGION, Bucket

ROOT = Path(__file__).resolve().parents[2]
CHECK_RESTORED = """
import json
from probes.models import Release
from probes.release_store import release_folder
from probes.releases import release_validate
release = Release.objects.get()
root = release_folder(release)
report = release_validate(root)
print(json.dumps({"root": str(root), "valid": report.valid, "errors": report.errors}))
"""


@pytest.fixture
def finished(s3_media, released, eager):
    """The release with its public zip built into the bucket, and a finished run on it (its item file)."""
    release_zip_build(release_pk=released.pk)
    released.refresh_from_db()
    assert released.zip_path == public_zip_name(released.release_id)
    run = eval_run_create(
        model_names=[scripted("m-s3", [], default="not json").name],
        conditions=["raw"],
        release=released,
        start=False,
    )
    eval_run_dispatch(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == EvalRun.Status.COMPLETED and run.items_file.name
    return released, run


def _only_unsigned(errors: list[dict]) -> bool:
    """The fixture's release is an unsigned export: it fails only on what an unsigned export must fail on
    (every rebuild and hash check of the Kit's validation passes)."""
    return {error["code"] for error in errors} == UNSIGNED_TOLERATED


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _restore_env(s3_media: Bucket, database: str, tmp_path: Path) -> tuple[dict[str, str], Bucket]:
    """The environment of a new deployment: its own database, a fresh bucket, no media folder."""
    name = f"restored-{uuid.uuid4().hex[:12]}"
    s3_media.client.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
    env = {
        **os.environ,  # the S3 endpoint and test credentials of the s3_media fixture
        "DATABASE_URL": postgres_url(database),
        "PHYSALIGN_MEDIA_S3_BUCKET": name,
        "PHYSALIGN_MEDIA_ROOT": str(tmp_path / "restored-no-media"),
        "PHYSALIGN_VAR_DIR": str(tmp_path / "restored-var"),
        "PHYSALIGN_RELEASES_ROOT": str(tmp_path / "restored-release-copies"),
        "DJANGO_SETTINGS_MODULE": "physalign_site.test_settings",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
    return env, Bucket(client=s3_media.client, name=name, prefix=PREFIX)


@pytest.mark.django_db(transaction=True)
def test_a_backup_from_the_bucket_restores_equal_into_a_fresh_database_and_bucket(
    s3_media, finished, pg_target, tmp_path
):
    release, run = finished
    shutil.rmtree(tmp_path / "exported")  # only the bucket holds the release
    source_report = release_validate(release_folder(release))
    assert _only_unsigned(source_report.errors)

    out = StringIO()
    call_command("backup", "--output", str(tmp_path / "backup"), stdout=out, stderr=StringIO())
    manifest = json.loads((tmp_path / "backup" / "manifest.json").read_text())
    assert manifest["missing"] == [] and manifest["releases"] == []  # a release is bucket objects here
    source_keys = s3_media.keys()
    backed_up = {entry["name"] for entry in manifest["files"] if entry["kind"] == "media"}
    assert backed_up == source_keys  # every object is named by a row: all of them, nothing else
    assert {
        index_name(release.release_id),
        public_zip_name(release.release_id),
        run.items_file.name,
    } <= backed_up

    env, restored = _restore_env(s3_media, pg_target, tmp_path)
    done = _manage("restore", str(tmp_path / "backup"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Restored the backup" in done.stdout
    assert not (tmp_path / "restored-no-media").exists()

    source = connection.settings_dict["NAME"]
    assert table_counts(pg_target) == table_counts(source)
    for sql in (
        "SELECT id, document_sha256 FROM annotation_passdocument ORDER BY id",
        "SELECT * FROM evaluation_metricsnapshot ORDER BY id",
        "SELECT * FROM evaluation_evalrun ORDER BY id",
        "SELECT id, release_id, path, manifest, counts, zip_status, zip_path FROM probes_release ORDER BY id",
        "SELECT file, bytes_sha256 FROM probes_renderedview ORDER BY id",
    ):
        assert query(pg_target, sql) == query(source, sql) != []
    assert restored.keys() == source_keys
    for name in source_keys:
        assert restored.get(name) == s3_media.get(name), name

    checked = _manage("shell", "-c", CHECK_RESTORED, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout.strip().splitlines()[-1])
    assert report["root"].startswith(str(tmp_path / "restored-release-copies"))  # fetched from the new bucket
    assert report == {"root": report["root"], "valid": False, "errors": source_report.errors}

    again = _manage("restore", str(tmp_path / "backup"), env=env)  # now the target holds data: refused
    assert again.returncode == 1 and "Nothing was restored." in again.stderr
    assert restored.keys() == source_keys


@pytest.mark.django_db
def test_media_prune_on_the_bucket_removes_only_objects_no_row_names(
    s3_media, finished, tmp_path, django_user_model
):
    release, run = finished
    shutil.rmtree(tmp_path / "exported")
    referenced = s3_media.keys()
    orphans = {
        f"views/ab/{'ab' * 32}.png": b"a view no probe shows any more",
        "eval_runs/run-99-items.jsonl": b"{}\n",
        f"releases/NREL-{'0' * 64}/public/qa_raw.json": b"[]",  # the bucket copy of a release no row names
    }
    client = boto3.client(
        "s3", endpoint_url=os.environ["PHYSALIGN_MEDIA_S3_ENDPOINT_URL"], region_name=REGION
    )
    for name, data in orphans.items():
        client.put_object(Bucket=s3_media.name, Key=f"{PREFIX}/{name}", Body=data)

    out = StringIO()
    call_command("media_prune", "--dry-run", "--min-age", "0", stdout=out, stderr=StringIO())
    listed = out.getvalue()
    assert all(f"would remove {name} " in listed for name in orphans)
    assert f"{len(orphans)} unreferenced files would be removed" in listed
    assert f"{len(referenced):,} referenced files kept" in listed
    assert s3_media.keys() == referenced | set(orphans)  # a dry run removes nothing

    young = StringIO()
    call_command("media_prune", stdout=young, stderr=StringIO())  # the default --min-age 60: all too young
    assert s3_media.keys() == referenced | set(orphans)
    call_command("media_prune", "--min-age", "0", stdout=StringIO(), stderr=StringIO())
    assert s3_media.keys() == referenced

    # everything a row names still works: the release from the bucket, its zip, the item file
    assert _only_unsigned(release_validate(release_folder(release)).errors)
    holder = make_user(django_user_model, "boss", "admin")
    from django.contrib.auth.models import Permission

    holder.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    browser = Client()
    browser.force_login(holder)
    download = browser.get(f"/releases/{release.release_id}/download/")
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == s3_media.get(public_zip_name(release.release_id))
    items = browser.get(f"/runs/{run.pk}/download/items/")
    assert b"".join(items.streaming_content) == s3_media.get(run.items_file.name)
