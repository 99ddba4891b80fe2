"""Benchmarks never touch a user's data: ``make bench``'s loop after ``load_demo`` leaves the demo as it was.

The demo lives where ``make run`` puts it (the default SQLite file under the var folder). The benchmarks
run with ``DATABASE_URL``/``REDIS_URL``/``CELERY_BROKER_URL`` pointing straight at the user's data, the
way a user's shell or ``.env`` might; each must still pick its own throwaway database and Redis db.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
POSTGRES = "postgres://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379"
USER_REDIS_DB = 7  # the sandbox's first choice: it must notice the user's key and move on

SNAPSHOT = """
import json
from django.contrib.auth import get_user_model
from audit.models import Event
from annotation.models import ParentProblem, PassDocument, ProblemImage
print(json.dumps({
    "parents": sorted(ParentProblem.objects.values_list("problem_id", "version", "status", "answer", "domain")),
    "passes": sorted(PassDocument.objects.values_list("parent__problem_id", "pass_no", "version", "status",
                                                      "document_sha256", "approved_sha256")),
    "images": sorted(ProblemImage.objects.values_list("parent__problem_id", "image_id", "sha256", "file")),
    "users": sorted((u.username, u.password, u.is_active, sorted(u.groups.values_list("name", flat=True)))
                    for u in get_user_model().objects.all()),
    "events": Event.objects.count(),
}))
"""

pytestmark = pytest.mark.integration


def _app_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "REDIS_URL"))}
    env.update(
        PHYSALIGN_VAR_DIR=str(var_dir),
        DJANGO_DEBUG="1",
        DJANGO_SETTINGS_MODULE="physalign_site.settings",
        DJANGO_SECRET_KEY="test-only-secret-key-not-for-production",
        DJANGO_SECURE_SSL="false",
    )
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def _snapshot(env: dict[str, str]) -> dict:
    return json.loads(_manage(env, "shell", "-v", "0", "-c", SNAPSHOT).strip().splitlines()[-1])


def _files(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*") if p.is_file())


def _bench_databases() -> set[str]:
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        return {
            row[0] for row in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'bench\\_%'")
        }


def test_make_bench_loop_leaves_the_demo_data_alone(tmp_path):
    var_dir = tmp_path / "var"
    env = _app_env(var_dir)
    _manage(env, "migrate", "--noinput", "-v", "0")
    _manage(env, "load_demo")
    before = _snapshot(env)
    media_before = _files(var_dir / "media")
    assert (
        len(before["parents"]) == 26 + 40 + 20 and len(before["passes"]) >= 160 and len(before["users"]) >= 6
    )
    user_redis = redis.Redis.from_url(f"{REDIS}/{USER_REDIS_DB}")
    user_redis.flushdb()
    user_redis.set("users-own-key", "keep me")
    databases_before = _bench_databases()

    hostile = {
        **env,
        "DATABASE_URL": f"sqlite:///{var_dir / 'physalign.sqlite3'}",
        "REDIS_URL": f"{REDIS}/{USER_REDIS_DB}",
        "CELERY_BROKER_URL": f"{REDIS}/{USER_REDIS_DB}",
    }
    try:
        result = subprocess.run(
            ["scripts/bench.sh", "--smoke"],
            cwd=ROOT,
            env=hostile,
            capture_output=True,
            text=True,
            timeout=900,
        )
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-6000:]
        assert _snapshot(env) == before
        assert _files(var_dir / "media") == media_before
        assert user_redis.get("users-own-key") == b"keep me"
        assert user_redis.dbsize() == 1
        assert _bench_databases() == databases_before  # every bench_* database it made was dropped
        for name in (
            "agreement_demo",
            "bench_generate",
            "bench_workspace",
            "compile_bench",
            "eval_throughput",
            "eval_vs_inspect",
            "frontend_bench",
            "metrics_bench",
            "metrics_cli",
            "ocr_proposals",
            "paper_scale",
            "run_finish",
            "team_load",
        ):
            assert f"== bench/{name}.py" in output
        # the team load ran on both databases and every acknowledged save was found stored
        assert re.findall(r"acknowledged saves stored: (\d+)/(\d+)", output) and all(
            stored == acknowledged
            for stored, acknowledged in re.findall(r"acknowledged saves stored: (\d+)/(\d+)", output)
        )
        assert "\npostgres: " in output and "\nsqlite: " in output
        # the side by side ran both: the app's run and inspect eval served every probe of the release
        served = re.findall(r"^(app run engine|inspect eval) +(\d+) ", output, flags=re.M)
        assert [side for side, _ in served] == ["app run engine", "inspect eval"] and served[0][1] == served[
            1
        ][1]
        assert "app ÷ inspect requests/s: " in output
        assert f"Redis db {USER_REDIS_DB}," not in output  # the user's Redis db was passed over
        assert str(var_dir) not in output.split("== bench/bench_generate.py", 1)[1]
    finally:
        user_redis.flushdb()


def test_a_benchmark_refuses_a_database_it_did_not_create(tmp_path):
    name = f"bench_intruder_{os.getpid()}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(f"{POSTGRES}/{name}", autocommit=True) as conn:
            conn.execute("CREATE TABLE precious (v text)")
            conn.execute("INSERT INTO precious VALUES ('a user row')")
        env = _app_env(tmp_path / "var")
        for keep_db, message in (
            (name, "was not created by a benchmark"),
            ("physalign", "must start with 'bench_'"),
        ):
            result = subprocess.run(
                [PYTHON, "bench/bench_workspace.py", "--smoke", "--keep-db", keep_db],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert result.returncode != 0
            assert message in result.stdout + result.stderr
        with psycopg.connect(f"{POSTGRES}/{name}", autocommit=True) as conn:
            assert conn.execute("SELECT v FROM precious").fetchall() == [("a user row",)]
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()[0]
            assert tables == 1  # no migration ran
    finally:
        with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
