"""A real Celery worker process against the test database and the Redis broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from physalign_site.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]


def _services_required() -> bool:
    return os.environ.get("PHYSALIGN_REQUIRE_SERVICES") == "1" or os.environ.get("CI") == "true"


def _unavailable(reason: str) -> None:
    if _services_required():
        pytest.fail(f"integration service missing: {reason}")
    pytest.skip(reason)


@pytest.fixture
def celery_worker_process(transactional_db, settings):
    """Start ``celery worker`` on the broker from the environment; yields once it answers a ping."""
    if connection.vendor != "postgresql":
        _unavailable("the worker process needs a shared database: run with DATABASE_URL=postgres://…")
    broker = django_settings.CELERY_BROKER_URL
    if not broker.startswith("redis://"):
        _unavailable("the worker test needs CELERY_BROKER_URL=redis://…")

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_BROKER_URL": broker,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "PHYSALIGN_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DJANGO_SECRET_KEY": django_settings.SECRET_KEY,
        "DJANGO_SETTINGS_MODULE": "physalign_site.settings",
        "DB_CONN_MAX_AGE": "0",
    }
    nodename = f"itest-{os.getpid()}@localhost"
    celery_app.conf.task_always_eager = False
    celery_app.control.purge()
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "physalign_site.celery",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "-n",
            nodename,
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not celery_app.control.ping(destination=[nodename], timeout=1.0):
            if worker.poll() is not None or time.monotonic() > deadline:
                output = worker.stdout.read() if worker.poll() is not None else ""
                pytest.fail(f"Celery worker did not start:\n{output}")
        yield worker
    finally:
        celery_app.conf.task_always_eager = django_settings.CELERY_TASK_ALWAYS_EAGER
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
