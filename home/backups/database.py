"""The database half of a backup, with each engine's own tool.

- PostgreSQL: the backup holds a ``REPEATABLE READ`` transaction open, exports its snapshot
  (``pg_export_snapshot()``) and runs ``pg_dump --snapshot`` on it, so the dump, the row counts, the migration
  state and the media references are all read from one and the same snapshot; ``pg_restore`` loads it into the
  configured database in one transaction.
- SQLite: ``sqlite3.Connection.backup`` copies the live file in one step (one read transaction: a consistent
  snapshot while writers continue in WAL mode); the counts, migrations and references are then read from that
  copy. A restore copies it back with the same API.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connections, transaction
from django.db.backends.postgresql.client import DatabaseClient

from physalign_site.errors import ApplicationError

from .references import MediaReferences, media_references

SNAPSHOT_ALIAS = "physalign_backup_snapshot"
# Rows ``manage.py migrate`` itself writes into a new database: a target holding only these is empty.
MIGRATE_WRITES = frozenset({"django_migrations", "django_content_type", "auth_permission", "auth_group"})


@dataclass(frozen=True)
class DatabaseState:
    """What one snapshot of the database holds, besides its rows."""

    counts: dict[str, int]
    migrations: dict[str, list[str]]
    references: MediaReferences


def engine(using: str = "default") -> str:
    vendor = connections[using].vendor
    if vendor not in ("postgresql", "sqlite"):
        raise ApplicationError(f"Backups support PostgreSQL and SQLite, not {vendor}.", code="backup_engine")
    return vendor


def read_state(using: str) -> DatabaseState:
    """Row counts of every table, applied migrations and media references, read through ``using``."""
    connection = connections[using]
    tables = sorted(connection.introspection.table_names())
    counts = {}
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = int(cursor.fetchone()[0])
        migrations: dict[str, list[str]] = {}
        if "django_migrations" in tables:
            cursor.execute("SELECT app, name FROM django_migrations ORDER BY app, name")
            for app, name in cursor.fetchall():
                migrations.setdefault(app, []).append(name)
    return DatabaseState(counts=counts, migrations=migrations, references=media_references(using=using))


def rows_outside_migrate(using: str = "default") -> dict[str, int]:
    """Tables of ``using`` that hold rows ``migrate`` does not write (an empty target has none)."""
    state_counts = {}
    connection = connections[using]
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names()):
            if table in MIGRATE_WRITES:
                continue
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
            if rows := int(cursor.fetchone()[0]):
                state_counts[table] = rows
    return state_counts


# PostgreSQL ---------------------------------------------------------------------------------------------------


def _pg_env(settings_dict: dict[str, Any]) -> dict[str, str]:
    """libpq's variables for the configured database (password, SSL, service as Django's own client sets them)."""
    _args, env = DatabaseClient.settings_to_cmd_args_env(settings_dict, [])
    merged = {**os.environ, **(env or {})}
    for variable, key in (("PGHOST", "HOST"), ("PGPORT", "PORT"), ("PGUSER", "USER"), ("PGDATABASE", "NAME")):
        if settings_dict.get(key):
            merged[variable] = str(settings_dict[key])
    return merged


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ApplicationError(
            f"{name} is not installed: install PostgreSQL's client programs (Debian: postgresql-client), "
            "of the server's major version or newer.",
            code="backup_tool_missing",
        )
    return path


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        detail = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ApplicationError(
            f"{what} failed: {detail[-1] if detail else f'exit status {done.returncode}'}",
            code="backup_tool_failed",
            extra={"stderr": done.stderr[-4000:]},
        )


def pg_backup(target: Path, using: str = "default") -> DatabaseState:
    """Dump the database to ``target`` (custom format) and read its state, all in one snapshot."""
    connection = connections[using]
    if connection.in_atomic_block:
        raise ApplicationError("A backup cannot run inside a transaction.", code="backup_in_transaction")
    pg_dump = _pg_tool("pg_dump")
    connection.ensure_connection()
    with transaction.atomic(using=using), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute("SELECT pg_export_snapshot()")
        snapshot = cursor.fetchone()[0]
        state = read_state(using)
        _run(
            [pg_dump, "--format=custom", f"--snapshot={snapshot}", "--no-password", f"--file={target}"],
            _pg_env(connection.settings_dict),
            "pg_dump",
        )
    return state


def pg_restore(dump: Path, using: str = "default") -> None:
    """Load a custom-format dump into the configured (empty) database, in one transaction. Tables a ``migrate``
    made there hold no data (checked before): they are dropped first, so the dump's own schema goes in."""
    pg_restore_bin = _pg_tool("pg_restore")
    connection = connections[using]
    tables = connection.introspection.table_names()
    if tables:
        with transaction.atomic(using=using), connection.cursor() as cursor:
            quoted = ", ".join(connection.ops.quote_name(t) for t in tables)
            cursor.execute(f"DROP TABLE IF EXISTS {quoted} CASCADE")
    settings_dict = connection.settings_dict
    connection.close()
    _run(
        [
            pg_restore_bin,
            "--no-owner",
            "--no-acl",
            "--exit-on-error",
            "--single-transaction",
            "--no-password",
            f"--dbname={settings_dict['NAME']}",
            str(dump),
        ],
        _pg_env(settings_dict),
        "pg_restore",
    )


# SQLite -------------------------------------------------------------------------------------------------------


def sqlite_path(using: str = "default") -> Path:
    name = str(connections[using].settings_dict["NAME"])
    if name == ":memory:" or name.startswith("file:") or "mode=memory" in name:
        raise ApplicationError("An in-memory SQLite database cannot be backed up.", code="backup_engine")
    return Path(name)


def sqlite_copy(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online backup API, in one step (one consistent read), into a
    self-contained file (rollback journal, no ``-wal`` beside it)."""
    src = sqlite3.connect(source, timeout=60)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    finally:
        src.close()


@contextmanager
def sqlite_alias(path: Path) -> Iterator[str]:
    """A database alias that reads the SQLite file ``path`` through the ORM (for the state of a copy)."""
    settings_dict = {**connections["default"].settings_dict, "NAME": str(path), "OPTIONS": {"timeout": 20}}
    connections.settings[SNAPSHOT_ALIAS] = settings_dict
    try:
        yield SNAPSHOT_ALIAS
    finally:
        connections[SNAPSHOT_ALIAS].close()
        del connections[SNAPSHOT_ALIAS]
        del connections.settings[SNAPSHOT_ALIAS]


def sqlite_backup(target: Path, using: str = "default") -> DatabaseState:
    sqlite_copy(sqlite_path(using), target)
    with sqlite_alias(target) as alias:
        return read_state(alias)


def sqlite_restore(snapshot: Path, using: str = "default") -> None:
    path = sqlite_path(using)
    connections[using].close()
    path.parent.mkdir(parents=True, exist_ok=True)
    sqlite_copy(snapshot, path)
