"""The commands' shared progress display and worker check (physalign_site/cli.py)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.core.management.base import BaseCommand

from annotation.models import DraftRun, LLMDraft
from models_registry.models import ModelConfig
from physalign_site.celery import app as celery_app
from physalign_site.cli import progress, require_worker
from solving.models import SolveResponse, SolveRun
from tests.factories import ParentProblemFactory
from tests.integration.conftest import celery_worker_process  # noqa: F401  (a fixture)

ROOT = Path(__file__).resolve().parent.parent


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_progress_prints_plain_lines_first_and_last():
    out = io.StringIO()
    command = BaseCommand(stdout=out)
    with progress(command, 3, "Solving") as bar:
        for done in range(4):  # quicker than the 5 s between lines: only the first and the last are printed
            bar.update(done, status="running" if done < 3 else "completed")
    assert out.getvalue() == "Solving: 0/3 (0%) · status running\nSolving: 3/3 (100%) · status completed\n"


def test_plain_progress_prints_each_change_once_the_interval_has_passed():
    out = io.StringIO()
    command = BaseCommand(stdout=out)
    with progress(command, None, "Compiling", interval=0) as bar:
        bar.update(1, total=2)
        bar.update(1, total=2)  # nothing moved and no heartbeat is due: no line
        bar.update(2, rate="1.5/s", ETA="0s", note="a\rb\x1b[2Kc")
    assert out.getvalue().splitlines() == [
        "Compiling: 1/2 (50%)",
        "Compiling: 2/2 (100%) · rate 1.5/s · ETA 0s · note a b [2Kc",
    ]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_on_a_terminal_progress_is_a_rich_bar(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("TTY_INTERACTIVE", raising=False)
    out = _Terminal()
    with progress(BaseCommand(stdout=out), 4, "Drafting") as bar:
        bar.update(4, drafted=3, failed=1, cost="$[0.10]")
    printed = out.getvalue()
    assert "\x1b[" in printed and "━" in printed  # drawn in place, with rich's bar
    assert "4/4" in printed and "drafted 3 · failed 1 · cost $[0.10]" in printed  # no markup is read


def test_with_eager_celery_there_is_nothing_to_check(monkeypatch):
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    started = time.monotonic()
    require_worker(queued="solve run 1", follow="/solve-runs/1/", timeout=5)
    assert time.monotonic() - started < 1


@pytest.fixture
def broker(monkeypatch):
    """``broker(url, **transport_options)``: Celery as outside the tests (not eager), on that broker."""

    def use(url: str, **transport_options: str) -> None:
        monkeypatch.setenv("CELERY_BROKER_URL", url)  # Celery reads the variable before its own setting
        monkeypatch.setitem(celery_app.conf, "broker_transport_options", transport_options)
        monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
        # A ping is published through the app's pools, made once for the broker of the time: fresh ones here,
        # and the others back afterwards, so that no later test publishes to this broker.
        monkeypatch.setattr(celery_app, "_pool", None)
        monkeypatch.setattr(celery_app.amqp, "_producer_pool", None)

    return use


@pytest.fixture
def no_worker_broker(broker, settings):
    """The test's own Redis db, where no worker listens."""
    url = django_settings.REDIS_URL or "redis://127.0.0.1:6379/11"
    client = redis.Redis.from_url(url)
    keys_before = set(client.keys())
    settings.CELERY_BROKER_URL = url
    broker(url)
    yield url
    for key in set(client.keys()) - keys_before:  # only what the ping left behind
        if key.startswith(b"_kombu.") or b"pidbox" in key:
            client.delete(key)


def _solve_command() -> list[str]:
    ModelConfig.objects.create(name="cli-sim", provider="simulated", model="sim", extra={"seed": 3})
    ParentProblemFactory(problem_id="CLI_FILL", answer_type="fill", answer="3 m/s")
    return ["solve", "--parents", "CLI_FILL", "--model", "cli-sim"]


def _draft_command() -> list[str]:
    ModelConfig.objects.create(name="cli-sim", provider="simulated", model="sim", extra={"seed": 3})
    ParentProblemFactory(problem_id="CLI_FILL")
    return ["draft", "--pass", "1", "--parent", "CLI_FILL", "--model", "cli-sim"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("make_command", "queued", "page"),
    [
        (_solve_command, "solve run {pk} is queued", "/solve-runs/{pk}/"),
        (_draft_command, "Draft run #{pk} is queued", "/drafts/runs/{pk}/"),
    ],
)
def test_a_queued_command_without_a_worker_stops_and_says_how_to_start_one(
    no_worker_broker, make_command, queued, page
):
    args = make_command()
    out = io.StringIO()
    started = time.monotonic()
    with pytest.raises(CommandError) as error:
        call_command(*args, "--worker-timeout", "0.5", stdout=out)
    assert time.monotonic() - started < 10
    run = (SolveRun if args[0] == "solve" else DraftRun).objects.get()
    message = str(error.value)
    assert queued.format(pk=run.pk) in message
    assert f"no Celery worker answered on {no_worker_broker} within 0.5 s" in message
    assert "stays queued and runs as soon as a worker starts" in message
    assert "make run" in message and ".venv/bin/celery -A physalign_site worker -l info" in message
    assert f"follow it at {page.format(pk=run.pk)}" in message
    # nothing ran: the run and its rows wait for a worker, and no progress was shown
    assert run.status == "queued"
    rows = SolveResponse.objects.filter(run=run) if args[0] == "solve" else LLMDraft.objects.filter(run=run)
    assert set(rows.values_list("status", flat=True)) == {"pending"}
    assert "Solving" not in out.getvalue() and "Drafting" not in out.getvalue()


def test_an_unreachable_broker_is_named_in_the_message(broker):
    broker("redis://:secret@127.0.0.1:1/0")  # nothing listens on port 1
    unreachable = r"solve run 7 is queued, but the broker redis://:\*\*@127.0.0.1:1/0 could not be reached"
    with pytest.raises(CommandError, match=unreachable) as error:
        require_worker(queued="solve run 7", follow="/solve-runs/7/", timeout=0.5)
    assert "secret" not in str(error.value)


def test_a_worker_timeout_of_zero_follows_without_asking(broker):
    broker("redis://127.0.0.1:1/0")
    require_worker(queued="solve run 7", follow="/solve-runs/7/", timeout=0)


def _filesystem_broker(broker, folder: Path, **control_folder: str) -> None:
    queue = folder / "var" / "broker" / "queue"
    queue.mkdir(parents=True, exist_ok=True)
    broker("filesystem://", data_folder_in=str(queue), data_folder_out=str(queue), **control_folder)


def test_on_the_filesystem_broker_without_a_shared_control_folder_nothing_is_checked(broker, tmp_path):
    # kombu's default control folder is relative to each process's working directory: a ping may miss a worker
    for control_folder in ({}, {"control_folder": "control"}):
        _filesystem_broker(broker, tmp_path, **control_folder)
        started = time.monotonic()
        require_worker(queued="solve run 7", follow="/solve-runs/7/", timeout=2)
        assert time.monotonic() - started < 1


@pytest.mark.integration
def test_on_the_filesystem_broker_with_a_shared_control_folder_the_ping_finds_a_worker(broker, tmp_path):
    control = tmp_path / "var" / "broker" / "control"  # where the settings put it for PHYSALIGN_VAR_DIR below
    _filesystem_broker(broker, tmp_path, control_folder=str(control))
    with pytest.raises(CommandError, match="no Celery worker answered on filesystem://"):
        require_worker(queued="solve run 7", follow="/solve-runs/7/", timeout=0.5)

    # The settings name the control folder by its absolute path under the var folder, so a worker started
    # anywhere shares it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "DATABASE_URL"))}
    env.update(
        CELERY_BROKER_URL="filesystem://",
        PHYSALIGN_VAR_DIR=str(tmp_path / "var"),
        PYTHONPATH=str(ROOT),
        DJANGO_SETTINGS_MODULE="physalign_site.settings",
        DJANGO_SECRET_KEY=django_settings.SECRET_KEY,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "physalign_site",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "-n",
            f"fs-{os.getpid()}@localhost",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while f"fs-{os.getpid()}@localhost".encode() not in _read(control / "celery.pidbox.exchange"):
            if worker.poll() is not None or time.monotonic() > deadline:
                worker.kill()
                pytest.fail(f"the worker never registered: {worker.communicate(timeout=20)[0]}")
            time.sleep(0.2)
        started = time.monotonic()
        require_worker(queued="solve run 7", follow="/solve-runs/7/", timeout=10)
        assert time.monotonic() - started < 5  # the first answer ends the wait
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def _read(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


@pytest.mark.integration
def test_solve_follows_a_run_that_a_real_worker_completes(celery_worker_process):  # noqa: F811
    args = _solve_command()
    out = io.StringIO()
    call_command(*args, "--name", "cli-worker", stdout=out)
    run = SolveRun.objects.get(name="cli-worker")
    printed = out.getvalue()
    assert run.status == "completed", printed
    assert f"solve run {run.pk}: 1 planned responses" in printed
    assert "Solving: 1/1 (100%)" in printed and "\r" not in printed
    assert f"solve run {run.pk}: completed; statuses" in printed
