"""Broker redelivery: a worker dies holding an unacknowledged chunk task; after the Redis visibility
timeout a fresh worker receives the same task and the run completes with exactly the planned rows.

Nothing re-dispatches or resumes the run here: the only message is the one the dead worker held.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from evaluation.models import EvalRequest, EvalRun, ItemScore
from evaluation.runs import eval_run_create, eval_run_dispatch
from models_registry.models import ModelConfig
from physalign_site.celery import app as celery_app
from tests.evaluation.conftest import compile_and_approve
from tests.integration.conftest import ROOT, _unavailable

pytestmark = pytest.mark.integration


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _start_worker(name: str, log: Path, settings, **env: str) -> subprocess.Popen:
    db = connection.settings_dict
    environment = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "CELERY_BROKER_URL": django_settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "PHYSALIGN_MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DJANGO_SECRET_KEY": django_settings.SECRET_KEY,
        "DJANGO_SETTINGS_MODULE": "physalign_site.settings",
        "DB_CONN_MAX_AGE": "0",
        **env,
    }
    nodename = f"{name}-{os.getpid()}@localhost"
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
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=environment,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    if (
        not _wait(
            lambda: worker.poll() is not None or celery_app.control.ping(destination=[nodename], timeout=0.5),
            60,
        )
        or worker.poll() is not None
    ):
        worker.kill()
        pytest.fail(f"Celery worker {name} did not start:\n{log.read_text()[-3000:]}")
    return worker


def _stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


@pytest.mark.django_db(transaction=True)
def test_chunk_of_a_killed_worker_is_redelivered_after_the_visibility_timeout(
    django_user_model, settings, tmp_path
):
    if connection.vendor != "postgresql":
        _unavailable("the worker processes need a shared database: run with DATABASE_URL=postgres://…")
    if not django_settings.CELERY_BROKER_URL.startswith("redis://"):
        _unavailable("redelivery is the Redis transport's visibility timeout: CELERY_BROKER_URL=redis://…")
    import redis

    broker = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    compile_and_approve(django_user_model)
    ModelConfig.objects.create(
        name="slow-sim",
        provider="simulated",
        model="sim",
        max_retries=2,
        extra={"seed": 5, "latency_ms": 600},
    )
    # one chunk holding every row: the whole run is a single task message
    run = eval_run_create(
        model_names=["slow-sim"],
        conditions=["raw", "no_image", "reordered"],
        start=False,
        options={"resamples": 20, "chunk_size": 10_000, "claim_lease_seconds": 2},
    )
    planned = run.total
    assert planned >= 9

    celery_app.conf.task_always_eager = False
    celery_app.control.purge()
    broker.delete("unacked", "unacked_index")
    first = _start_worker("redeliver-a", tmp_path / "a.log", settings, EVAL_CHUNK_THREADS="1")
    second = None
    try:
        eval_run_dispatch(run_id=run.pk)
        terminal = lambda: run.requests.filter(status__in=EvalRequest.TERMINAL).count()  # noqa: E731
        assert _wait(lambda: terminal() >= 2, 60), (tmp_path / "a.log").read_text()[-3000:]
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)

        done_at_kill = terminal()
        in_flight_at_kill = set(run.requests.filter(status="running").values_list("pk", flat=True))
        assert 0 < done_at_kill < planned
        # only the call in flight and at most one queued behind it were claimed, not the whole chunk
        assert 0 < len(in_flight_at_kill) <= 2 < planned - done_at_kill
        assert run.requests.filter(status="pending", claims=0).count() == planned - done_at_kill - len(
            in_flight_at_kill
        )
        held = broker.hgetall("unacked")
        assert len(held) == 1  # the chunk task was delivered to the dead worker and never acknowledged
        task_id = json.loads(next(iter(held.values())))[0]["headers"]["id"]

        second = _start_worker(
            "redeliver-b",
            tmp_path / "b.log",
            settings,
            EVAL_CHUNK_THREADS="2",
            CELERY_VISIBILITY_TIMEOUT="4",
            CELERY_UNACKED_RESTORE_INTERVAL="1",
            CELERY_UNACKED_RESTORE_THROTTLE="1",
        )
        completed = _wait(lambda: EvalRun.objects.get(pk=run.pk).status == EvalRun.Status.COMPLETED, 120)
        assert completed, (tmp_path / "b.log").read_text()[-3000:]
    finally:
        celery_app.conf.task_always_eager = django_settings.CELERY_TASK_ALWAYS_EAGER
        _stop(first)
        if second is not None:
            _stop(second)

    assert f"[{task_id}] received" in (tmp_path / "b.log").read_text()  # the same task, redelivered
    assert run.requests.count() == planned
    assert run.requests.filter(status="completed").count() == planned
    assert ItemScore.objects.filter(request__run=run).count() == planned  # one score per row (one-to-one)
    claims = dict(run.requests.values_list("pk", "claims"))
    assert max(claims.values()) == 2
    assert {pk for pk, n in claims.items() if n == 2} == in_flight_at_kill  # the lost calls, re-claimed once
    assert all(len(a) == 1 for a in run.requests.values_list("attempts", flat=True))
    assert EvalRun.objects.get(pk=run.pk).metrics["models"]["slow-sim"]["GAcc"]["probes"] > 0
