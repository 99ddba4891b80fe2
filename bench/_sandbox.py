"""Where a benchmark may write: its own throwaway database, Redis database and folders, never a user's.

Every benchmark that touches Django calls :func:`open_sandbox` before ``django.setup()``. The sandbox
picks the database itself, whatever ``DATABASE_URL`` (or a ``.env`` file) says:

- ``sqlite``: a new file in a new temporary folder;
- ``postgres``: a database named ``bench_<name>_<pid>`` on the local server (``--postgres-server``),
  created with a comment that marks it as a benchmark's and dropped at exit. ``--keep-db NAME`` (the name
  must start with ``bench_``) keeps a database for later runs; a later run reuses it only if it carries
  the benchmark mark, so a benchmark refuses to start on a database that holds rows it did not create.

A new PostgreSQL sandbox starts from a migrated template (``physalign_bench_schema_<key>``, marked like the
sandboxes, ``<key>`` a digest of every migration file and installed package version) instead of running
every migration again: the first benchmark after a schema change migrates and saves the template (and drops
the older ones); the others clone it in a fraction of a second.

Redis, when a benchmark needs it, is a database number the sandbox chooses: the highest one below the
test suite's (14, 15) that holds no keys. It is flushed at exit only if the sandbox's own marker key is
still there. Media, the Celery filesystem broker and every other file go under the temporary folder — or,
for a kept database, under ``var/bench/<database>/`` beside the checkout, so its files outlive the run too.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BENCH_MARK = "physalign-bench sandbox: created by a benchmark; safe to drop"
REDIS_MARKER_KEY = "physalign-bench:owner"
REDIS_CANDIDATE_DBS = range(7, 1, -1)  # 8–15 are the test suite's workers' (2 each); 0/1 what deployments use
DEFAULT_POSTGRES_SERVER = "postgres://postgres@127.0.0.1:5432"
DEFAULT_REDIS_SERVER = "redis://127.0.0.1:6379"


class SandboxRefused(SystemExit):
    """The benchmark would have written somewhere it did not create."""


def add_sandbox_arguments(parser: argparse.ArgumentParser, *, database: str = "sqlite") -> None:
    group = parser.add_argument_group("sandbox (where the benchmark writes; never the app's data)")
    group.add_argument(
        "--database",
        choices=["sqlite", "postgres"],
        default=database,
        help=f"a temporary SQLite file or a bench_* PostgreSQL database (default {database})",
    )
    group.add_argument(
        "--postgres-server",
        default=os.environ.get("BENCH_POSTGRES_SERVER", DEFAULT_POSTGRES_SERVER),
        help="server (no database name) on which the bench_* database is created",
    )
    group.add_argument(
        "--keep-db",
        metavar="bench_NAME",
        default=None,
        help="PostgreSQL: keep this database for later runs (reused only if a benchmark made it)",
    )
    group.add_argument("--smoke", action="store_true", help="the smallest sizes: checks the benchmark runs")


@dataclass
class Sandbox:
    name: str
    root: Path
    database_url: str
    database_name: str
    env: dict[str, str] = field(default_factory=dict)
    redis_url: str | None = None
    redis_db: int | None = None
    postgres_server: str | None = None
    keep: bool = False
    reused: bool = False

    def start_django(self, *, migrate: bool = True) -> None:
        """``django.setup()``, then check the default connection really points into the sandbox (a stray
        setting could otherwise win), then migrate the sandbox database."""
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        configured = str(connection.settings_dict["NAME"])
        if configured != self.database_name:
            raise SandboxRefused(
                f"benchmark {self.name}: Django would use database {configured!r}, not the "
                f"sandbox {self.database_name!r}; refusing to start."
            )
        if not migrate:
            return
        template = _schema_template_name() if self.postgres_server and not self.reused else None
        if template and _postgres_clone_template(self.postgres_server, self.database_name, template):
            return
        call_command("migrate", verbosity=0)
        if template:
            connection.close()
            _postgres_save_template(self.postgres_server, self.database_name, template)

    def close(self) -> None:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 — Django may never have been set up
            pass
        if self.redis_url:
            _redis_release(self.redis_url)
        if self.postgres_server and not self.keep:
            _postgres_drop(self.postgres_server, self.database_name)
        shutil.rmtree(self.root, ignore_errors=True)


def open_sandbox(
    name: str, args: argparse.Namespace | None = None, *, redis: bool = False, debug: bool = True
) -> Sandbox:
    """Create the sandbox, point this process's environment at it and register its clean-up."""
    database = getattr(args, "database", "sqlite")
    root = Path(tempfile.mkdtemp(prefix=f"physalign-bench-{name}-"))
    if database == "postgres":
        server = getattr(args, "postgres_server", DEFAULT_POSTGRES_SERVER).rstrip("/")
        keep_db = getattr(args, "keep_db", None)
        db_name = keep_db or f"bench_{name}_{os.getpid()}"
        if not db_name.startswith("bench_"):
            raise SandboxRefused(
                f"--keep-db {db_name!r}: a benchmark database name must start with 'bench_'."
            )
        reused = _postgres_claim(server, db_name)
        box = Sandbox(
            name=name,
            root=root,
            database_url=f"{server}/{db_name}",
            database_name=db_name,
            postgres_server=server,
            keep=bool(keep_db),
            reused=reused,
        )
    else:
        path = root / "bench.sqlite3"
        box = Sandbox(name=name, root=root, database_url=f"sqlite:///{path}", database_name=str(path))
    atexit.register(box.close)
    # A kept database keeps its files too (rendered views, uploads, item files live in media storage):
    # they go beside the checkout under var/bench/<name>/, not into the folder removed at exit.
    files = ROOT / "var" / "bench" / box.database_name if box.keep else root
    env = {
        "DJANGO_SETTINGS_MODULE": "physalign_site.settings",
        "DATABASE_URL": box.database_url,
        "PHYSALIGN_VAR_DIR": str(files / "var"),
        "PHYSALIGN_MEDIA_ROOT": str(files / "media"),
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_RESULT_BACKEND": "",
        "REDIS_URL": "",
    }
    if debug:
        env["DJANGO_DEBUG"] = "1"
    if redis:
        box.redis_db, box.redis_url = _redis_claim(os.environ.get("BENCH_REDIS_SERVER", DEFAULT_REDIS_SERVER))
        env["CELERY_BROKER_URL"] = env["REDIS_URL"] = box.redis_url
    os.environ.update(env)
    box.env = env
    where = (
        f"PostgreSQL {box.database_name}" + (" (kept, reused)" if box.reused else "")
        if box.postgres_server
        else f"SQLite {box.database_name}"
    )
    print(f"[sandbox] {name}: {where}" + (f", Redis db {box.redis_db}" if redis else "") + f", files {root}")
    return box


def _postgres_claim(server: str, db_name: str) -> bool:
    """Create ``db_name`` with the benchmark mark, or accept it only if it already carries the mark."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db_name,)
        ).fetchone()
        if row is not None:
            if row[0] != BENCH_MARK:
                raise SandboxRefused(
                    f"database {db_name!r} already exists and was not created by a benchmark; "
                    "refusing to write to it (drop it or pick another --keep-db name)."
                )
            return True
        conn.execute(f'CREATE DATABASE "{db_name}"')
        conn.execute(f"COMMENT ON DATABASE \"{db_name}\" IS '{BENCH_MARK}'")
    return False


def _postgres_drop(server: str, db_name: str) -> None:
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (db_name,)
        ).fetchone()
        if row is not None and row[0] == BENCH_MARK:
            conn.execute(f'DROP DATABASE "{db_name}" WITH (FORCE)')


def _redis_claim(server: str) -> tuple[int, str]:
    import redis as redis_lib

    for number in REDIS_CANDIDATE_DBS:
        client = redis_lib.Redis.from_url(f"{server}/{number}")
        # SET NX on an empty database: two benchmarks starting at once cannot pick the same number
        if client.dbsize() == 0 and client.set(REDIS_MARKER_KEY, str(os.getpid()), nx=True):
            return number, f"{server}/{number}"
    raise SandboxRefused(
        f"no empty Redis database among {list(REDIS_CANDIDATE_DBS)} on {server}; "
        "refusing to write into one that holds keys."
    )


def _redis_release(url: str) -> None:
    import redis as redis_lib

    client = redis_lib.Redis.from_url(url)
    if client.get(REDIS_MARKER_KEY) == str(os.getpid()).encode():
        client.flushdb()


SCHEMA_TEMPLATE_PREFIX = "physalign_bench_schema_"


def _schema_template_name() -> str:
    """The migrated template's name for this checkout's migrations and the installed packages' versions."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()):
        digest.update(dist.encode() + b"\n")
    return SCHEMA_TEMPLATE_PREFIX + digest.hexdigest()[:16]


def _postgres_clone_template(server: str, db_name: str, template: str) -> bool:
    """Replace the new, empty sandbox database by a copy of the migrated ``template``; False when there is no
    such template (or it is busy), and the sandbox is then migrated as before."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (template,)
        ).fetchone()
        if row is None or row[0] != BENCH_MARK:
            return False
        from django.db import connections

        connections.close_all()
        conn.execute(f'DROP DATABASE "{db_name}" WITH (FORCE)')
        try:
            conn.execute(f'CREATE DATABASE "{db_name}" TEMPLATE "{template}"')
        except psycopg.errors.ObjectInUse:  # another benchmark is copying it right now: migrate instead
            conn.execute(f'CREATE DATABASE "{db_name}"')
            conn.execute(f"COMMENT ON DATABASE \"{db_name}\" IS '{BENCH_MARK}'")
            return False
        conn.execute(f"COMMENT ON DATABASE \"{db_name}\" IS '{BENCH_MARK}'")
    return True


def _postgres_save_template(server: str, db_name: str, template: str) -> None:
    """Keep the just-migrated sandbox as the template for later benchmarks; drop the templates of older
    schemas. Best effort: a failure only means the next benchmark migrates too."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        try:
            conn.execute(f'CREATE DATABASE "{template}" TEMPLATE "{db_name}"')
            conn.execute(f"COMMENT ON DATABASE \"{template}\" IS '{BENCH_MARK}'")
        except psycopg.Error:
            return
        stale = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s AND datname <> %s "
            "AND shobj_description(oid, 'pg_database') = %s",
            (SCHEMA_TEMPLATE_PREFIX.replace("_", "\\_") + "%", template, BENCH_MARK),
        ).fetchall()
        for (name,) in stale:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
