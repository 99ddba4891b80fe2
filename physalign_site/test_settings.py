"""Settings for pytest: the real settings module, with test-only defaults for unset variables.

The environment still wins (``make test`` points DATABASE_URL at PostgreSQL and the broker at Redis).
"""

import os

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
