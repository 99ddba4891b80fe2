"""A real Celery worker killed (SIGKILL) in the middle of a compile chunk: the broker hands the unacknowledged
chunk task to a fresh worker, which takes the chunk over once the dead claim's lease ran out. The run ends with
exactly the rows, views and issues of a one-process compile: nothing lost, nothing written twice."""

from __future__ import annotations

import os
import signal

import pytest
from django.conf import settings as django_settings
from django.db import connection

from physalign_site.celery import app as celery_app
from probes.models import CompileChunk, CompileRun
from probes.services import compile_run_create
from tests.integration.conftest import _unavailable
from tests.integration.test_eval_redelivery import _start_worker, _stop, _wait

from .test_compile_chunks import dump, make_parents, one_process, reset, without_progress

pytestmark = pytest.mark.integration


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_chunk_loses_and_duplicates_nothing(django_user_model, settings, tmp_path):
    if connection.vendor != "postgresql":
        _unavailable("the worker processes need a shared database: run with DATABASE_URL=postgres://…")
    if not django_settings.CELERY_BROKER_URL.startswith("redis://"):
        _unavailable("redelivery is the Redis transport's visibility timeout: CELERY_BROKER_URL=redis://…")
    import redis

    make_parents(django_user_model, tmp_path)
    reference = without_progress(one_process())
    reset()
    broker = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    celery_app.conf.task_always_eager = False
    celery_app.control.purge()
    broker.delete("unacked", "unacked_index")
    first = _start_worker("compile-a", tmp_path / "a.log", settings)
    second = None
    try:
        # one chunk holding every parent: killing its worker mid-way loses the whole chunk's work
        run = compile_run_create(actor=None, chunk_size=10_000, lease_seconds=2)
        chunk = lambda: CompileChunk.objects.filter(run=run).first()  # noqa: E731
        assert _wait(lambda: chunk() is not None and chunk().status == "running", 60), (
            tmp_path / "a.log"
        ).read_text()[-3000:]
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert chunk().status == "running" and chunk().claims == 1
        assert CompileRun.objects.get(pk=run.pk).done == 0  # nothing of the chunk was written

        second = _start_worker(
            "compile-b",
            tmp_path / "b.log",
            settings,
            CELERY_VISIBILITY_TIMEOUT="4",
            CELERY_UNACKED_RESTORE_INTERVAL="1",
            CELERY_UNACKED_RESTORE_THROTTLE="1",
        )
        finished = _wait(lambda: CompileRun.objects.get(pk=run.pk).status == "succeeded", 120)
        assert finished, (tmp_path / "b.log").read_text()[-3000:]
    finally:
        celery_app.conf.task_always_eager = django_settings.CELERY_TASK_ALWAYS_EAGER
        _stop(first)
        if second is not None:
            _stop(second)
    assert chunk().claims == 2 and chunk().status == "done"
    assert without_progress(dump()) == reference
