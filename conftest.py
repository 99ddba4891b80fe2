"""Test-run defaults. Real values come from the environment (make test sets PostgreSQL and Redis)."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("DJANGO_SECURE_SSL", "false")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
