"""Settings for pytest: the real settings module, with test-only defaults for unset variables.

The environment still wins (``make test`` points DATABASE_URL at PostgreSQL and the broker at Redis).
"""

import os
import re

TEST_WORKERS_MAX = 4  # scripts/test.sh starts at most this many pytest-xdist workers
REDIS_DBS_PER_WORKER = 2  # the broker's and the app's


def _worker_redis_url(url: str, worker: int) -> str:
    """The Redis database of pytest-xdist worker ``gw<worker>``: each worker has its own broker and app
    database, counted down from the suite's (15 and 14 for gw0, 13 and 12 for gw1, …, 9 and 8 for gw3), so
    one worker's Celery purge or key never reaches another's. ``bench/_sandbox.py`` stays below them."""
    match = re.fullmatch(r"(rediss?://[^/]*)/(\d+)", url)
    if not match or worker == 0:
        return url
    return f"{match.group(1)}/{int(match.group(2)) - REDIS_DBS_PER_WORKER * worker}"


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
# Once per process tree: a Celery worker a test starts inherits the shifted environment (and
# PYTEST_XDIST_WORKER with it) and must not shift it again.
if (
    re.fullmatch(r"gw\d+", _worker)
    and int(_worker[2:]) < TEST_WORKERS_MAX
    and os.environ.get("PHYSALIGN_TEST_REDIS_SHIFTED") != _worker
):
    for _name in ("CELERY_BROKER_URL", "REDIS_URL"):
        if os.environ.get(_name):
            # the environment, not only the setting: Celery reads CELERY_BROKER_URL itself, and worker
            # processes the tests start inherit it
            os.environ[_name] = _worker_redis_url(os.environ[_name], int(_worker[2:]))
    os.environ["PHYSALIGN_TEST_REDIS_SHIFTED"] = _worker

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("DJANGO_SECURE_SSL", "false")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")

from .settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
# No collectstatic in tests: serve from the source folders, without the manifest.
STATIC_ROOT = None  # type: ignore[assignment]  # a Path in settings; Django takes None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
