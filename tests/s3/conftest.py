"""The media storage on a real S3 API: moto's S3 server on loopback, started by the suite (no network).

``s3_media`` configures the app exactly as production does with ``PHYSALIGN_MEDIA_S3_*`` set: the
``STORAGES["default"]`` entry comes from the settings' own :func:`physalign_site.settings.s3_media_storage`
over the same environment variables, so the backend, bucket, endpoint, region, prefix and options are the ones a
deployment gets. ``MEDIA_ROOT`` points at a folder that does not exist, and each test checks that nothing
created it: with a bucket, no media file may touch the local disk.

moto is in the ``test`` extra: when it is missing these tests fail at the import below, they are never skipped.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from physalign_site.settings import s3_media_storage
from probes.models import Probe
from probes.releases import release_export
from probes.services import compile_run_create, compile_run_execute
from tests.backup.conftest import pg_target  # noqa: F401  (the restore tests' fresh PostgreSQL database)
from tests.probes.conftest import approve_as_planned, make_demo_parent

REGION = "eu-west-1"
PREFIX = "studio"  # PHYSALIGN_MEDIA_S3_PREFIX: every object lives under this folder of the bucket


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_endpoint() -> Any:
    """moto's S3 server in a thread of the test process, on 127.0.0.1 and a free port."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's request log, one line per S3 call
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@dataclass
class Bucket:
    """The test's bucket, read with boto3 directly (not through the app): what is really stored."""

    client: Any
    name: str
    prefix: str

    def keys(self) -> set[str]:
        """Every object name under the prefix, without it (the app's storage names)."""
        found: set[str] = set()
        for page in self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.name, Prefix=f"{self.prefix}/"
        ):
            found.update(obj["Key"].removeprefix(f"{self.prefix}/") for obj in page.get("Contents", []))
        return found

    def get(self, name: str) -> bytes:
        return self.client.get_object(Bucket=self.name, Key=f"{self.prefix}/{name}")["Body"].read()

    def head(self, name: str) -> dict[str, Any]:
        return self.client.head_object(Bucket=self.name, Key=f"{self.prefix}/{name}")

    def delete(self, name: str) -> None:
        self.client.delete_object(Bucket=self.name, Key=f"{self.prefix}/{name}")

    def sha256(self, name: str) -> str:
        return hashlib.sha256(self.get(name)).hexdigest()


@pytest.fixture
def s3_media(s3_endpoint, settings, tmp_path, monkeypatch) -> Any:
    """A fresh bucket as the media storage, configured through the production settings function."""
    environment = {
        "PHYSALIGN_MEDIA_S3_BUCKET": f"media-{uuid.uuid4().hex[:12]}",
        "PHYSALIGN_MEDIA_S3_ENDPOINT_URL": s3_endpoint,
        "PHYSALIGN_MEDIA_S3_REGION": REGION,
        "PHYSALIGN_MEDIA_S3_PREFIX": PREFIX,
        # boto3's own chain reads these; nothing from a profile, a config file or an instance role
        "AWS_ACCESS_KEY_ID": "test-only-access-key",
        "AWS_SECRET_ACCESS_KEY": "test-only-secret-key",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name=REGION)
    bucket = environment["PHYSALIGN_MEDIA_S3_BUCKET"]
    client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    storage = s3_media_storage(os.environ)
    assert storage is not None and storage["OPTIONS"]["bucket_name"] == bucket
    no_media = tmp_path / "no-media-folder"
    settings.MEDIA_ROOT = no_media
    settings.STORAGES = {**settings.STORAGES, "default": storage}  # resets Django's cached storages
    settings.RELEASES_ROOT = str(tmp_path / "release-copies")  # a working copy only: the bucket has releases
    settings.VAR_DIR = tmp_path / "var"
    yield Bucket(client=client, name=bucket, prefix=PREFIX)
    assert not Path(no_media).exists(), "a media file was written to the local disk"


@pytest.fixture
def compiled(s3_media, django_user_model):
    """The kit demo parent (its original stored through the app's storage) compiled and approved."""
    make_demo_parent(django_user_model, problem_id="SYNTHETIC_TEST_ONLY")
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    approve_as_planned(Probe.objects.all())
    return Probe.objects.all()


@pytest.fixture
def released(compiled, tmp_path):
    """Its development release, exported by the CLI's service to a folder the operator named."""
    from annotation.models import Source

    Source.objects.update(license="CC BY 4.0", url="https://example.org/source")
    return release_export(split="development", output=tmp_path / "exported" / "release", actor=None)
