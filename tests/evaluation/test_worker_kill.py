"""A real Celery worker is SIGKILLed mid-run; a new worker finishes with exactly the planned rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from evaluation.models import EvalRequest, EvalRun, ItemScore
from evaluation.runs import eval_run_create, eval_run_dispatch
from models_registry.models import ModelConfig
from tests.integration.conftest import ROOT
from tests.integration.conftest import celery_worker_process as celery_worker_process  # noqa: F401

from .conftest import compile_and_approve


def _wait(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.django_db(transaction=True)
def test_sigkill_worker_mid_run_loses_and_duplicates_nothing(
    celery_worker_process, django_user_model, settings
):
    compile_and_approve(django_user_model)
    ModelConfig.objects.create(
        name="slow-sim",
        provider="simulated",
        model="sim",
        max_retries=2,
        extra={"seed": 1, "latency_ms": 150},
    )
    run = eval_run_create(
        model_names=["slow-sim"],
        conditions=["raw", "no_image", "reordered"],
        start=False,
        options={"resamples": 50, "chunk_size": 2, "claim_lease_seconds": 3},
    )
    planned = run.total
    eval_run_dispatch(run_id=run.pk)
    if not _wait(lambda: run.requests.filter(status__in=EvalRequest.TERMINAL).count() >= 2, 60):
        celery_worker_process.terminate()
        pytest.fail("worker made no progress:\n" + celery_worker_process.stdout.read()[-3000:])
    os.kill(celery_worker_process.pid, signal.SIGKILL)
    celery_worker_process.wait(timeout=10)
    done_at_kill = run.requests.filter(status__in=EvalRequest.TERMINAL).count()
    assert done_at_kill < planned
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": os.environ.get("DATABASE_URL", ""),
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "DJANGO_SECRET_KEY": settings.SECRET_KEY,
            "PHYSALIGN_MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "DB_CONN_MAX_AGE": "0",
        }
    )
    from django.db import connection

    db = connection.settings_dict
    env["DATABASE_URL"] = (
        f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    )
    second = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "physalign_site.celery",
            "worker",
            "--pool=solo",
            "-n",
            f"itest2-{os.getpid()}@localhost",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(2)
        # the broker redelivers unacked tasks only after its visibility timeout; resume re-queues now
        from evaluation.runs import eval_run_resume

        eval_run_resume(run=EvalRun.objects.get(pk=run.pk))
        assert _wait(lambda: EvalRun.objects.get(pk=run.pk).status == "completed", 180)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    print(
        f"worker kill: planned {planned}, terminal at the kill {done_at_kill}, after {run.requests.count()} rows "
        f"with {ItemScore.objects.filter(request__run=run).count()} scores, re-claimed "
        f"{run.requests.filter(claims__gt=1).count()}, infra_missing "
        f"{run.requests.filter(status='infra_missing').count()}"
    )
    assert run.requests.count() == planned
    assert run.requests.filter(status__in=EvalRequest.TERMINAL).count() == planned
    assert ItemScore.objects.filter(request__run=run).count() == planned
    assert run.requests.filter(claims__gt=1).count() <= 2  # only rows in flight at the kill were re-claimed
    assert run.requests.filter(status="infra_missing").count() == 0
