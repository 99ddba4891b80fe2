"""Shared pieces of the backup tests: a second PostgreSQL database to restore into, ``manage.py`` in a
subprocess pointed at another database and media root, and an ORM alias that reads another database."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.apps import apps
from django.db import connections

ROOT = Path(__file__).resolve().parents[2]


def postgres_url(name: str) -> str:
    s = connections["default"].settings_dict
    auth = quote(s["USER"] or "") + (f":{quote(s['PASSWORD'])}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{name}"


def _admin_connect() -> psycopg.Connection:
    return psycopg.connect(postgres_url("postgres"), autocommit=True)


@pytest.fixture
def pg_target() -> Iterator[str]:
    """A new, empty PostgreSQL database beside the test database (dropped after the test)."""
    if connections["default"].vendor != "postgresql":
        pytest.skip("PostgreSQL restore needs DATABASE_URL on PostgreSQL")
    name = f"{connections['default'].settings_dict['NAME']}_restore"[:63]
    with _admin_connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name
    with _admin_connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(*args: str, database_url: str, media_root: Path, var_dir: Path) -> subprocess.CompletedProcess:
    """``manage.py`` in a fresh process with its own database, media root and var folder."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PHYSALIGN_MEDIA_ROOT": str(media_root),
        "PHYSALIGN_VAR_DIR": str(var_dir),
        "DJANGO_SETTINGS_MODULE": "physalign_site.test_settings",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
    env.pop("PHYSALIGN_MEDIA_S3_BUCKET", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def query(database: str, sql: str) -> list[tuple]:
    """Rows of ``sql`` on PostgreSQL database ``database``, read over a connection of its own (not the ORM:
    Django's test case allows only its configured aliases, and this is a database it does not know)."""
    with psycopg.connect(postgres_url(database)) as conn:
        return [tuple(row) for row in conn.execute(sql).fetchall()]


def table_counts(database: str) -> dict[str, int]:
    """Rows of every table of ``database``'s public schema."""
    tables = [t for (t,) in query(database, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    with psycopg.connect(postgres_url(database)) as conn:
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in sorted(tables)}


def row_counts(using: str = "default") -> dict[str, int]:
    """Rows of every table the models (and their many-to-many tables) have, counted through the ORM."""
    counts = {}
    for model in apps.get_models(include_auto_created=True):
        counts[model._meta.db_table] = model._base_manager.using(using).count()
    return counts


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
