"""Each pytest-xdist worker has its own Redis databases, and a Celery worker a test starts shares them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.integration.conftest import ROOT

_PRINT = (
    "import json, os; import physalign_site.test_settings as s; "
    "print(json.dumps([s.CELERY_BROKER_URL, os.environ['REDIS_URL'], os.environ.get('PHYSALIGN_TEST_REDIS_SHIFTED')]))"
)


def _settings_in(env: dict[str, str]) -> list[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTEST_XDIST_WORKER", "PHYSALIGN_TEST_REDIS_SHIFTED")
    }
    result = subprocess.run(
        [sys.executable, "-c", _PRINT],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_each_worker_counts_down_two_databases_from_the_suites():
    urls = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/15", "REDIS_URL": "redis://127.0.0.1:6379/14"}
    assert _settings_in({**urls, "PYTEST_XDIST_WORKER": "gw0"})[:2] == urls_list(15, 14)
    assert _settings_in({**urls, "PYTEST_XDIST_WORKER": "gw1"}) == [*urls_list(13, 12), "gw1"]
    assert _settings_in({**urls, "PYTEST_XDIST_WORKER": "gw3"})[:2] == urls_list(9, 8)


def test_a_process_started_by_a_worker_keeps_the_workers_databases():
    # the worker's environment after the shift, as a Celery worker subprocess inherits it
    inherited = {
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/13",
        "REDIS_URL": "redis://127.0.0.1:6379/12",
        "PYTEST_XDIST_WORKER": "gw1",
        "PHYSALIGN_TEST_REDIS_SHIFTED": "gw1",
    }
    assert _settings_in(inherited)[:2] == urls_list(13, 12)


def urls_list(broker: int, app: int) -> list[str]:
    return [f"redis://127.0.0.1:6379/{broker}", f"redis://127.0.0.1:6379/{app}"]
