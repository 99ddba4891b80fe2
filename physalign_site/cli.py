"""What the management commands share on the command line: one progress display and the worker check.

``progress(command, total, description)`` draws a rich progress bar when the command's stdout is an
interactive terminal. Anywhere else (a pipe, a log file, CI, the tests' StringIO) it prints plain lines
without control characters: the first update, then at most one line every ``interval`` seconds while
the count moves (one every ``heartbeat`` seconds while it does not), and the last state when the block
ends.

``require_worker(...)`` is for a command that has queued work for Celery and is about to follow it: when
no worker answers a ping, it stops the command with a message saying what is queued, how to start a
worker and where to follow the work, instead of showing "0/N" for an hour.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser
from kombu.exceptions import OperationalError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from physalign_site.celery import app as celery_app

DEFAULT_WORKER_TIMEOUT = 5.0


class ProgressDisplay(Protocol):
    def update(self, done: int, *, total: int | None = None, **fields: object) -> None:
        """Show ``done`` of ``total`` (unchanged when None) and the fields, each as "name value"."""

    def close(self) -> None: ...


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _details(fields: dict[str, object]) -> str:
    return " · ".join(_printable(f"{name.replace('_', ' ')} {value}") for name, value in fields.items())


class _PlainProgress:
    def __init__(
        self,
        write: Callable[[str], Any],
        total: int | None,
        description: str,
        *,
        interval: float,
        heartbeat: float,
    ) -> None:
        self._write, self._total, self._description = write, total, _printable(description)
        self._interval, self._heartbeat = interval, heartbeat
        self._shown: tuple[int, int | None] | None = None  # (done, total) of the last line printed
        self._shown_line = ""
        self._shown_at = 0.0
        self._pending: str | None = None  # the latest line, while it is not printed yet

    def update(self, done: int, *, total: int | None = None, **fields: object) -> None:
        if total is not None:
            self._total = total
        count = f"{done}/{self._total}" if self._total is not None else f"{done}/?"
        if self._total:
            count += f" ({100 * done // self._total}%)"
        details = _details(fields)
        line = f"{self._description}: {count}" + (f" · {details}" if details else "")
        now = time.monotonic()
        since = now - self._shown_at
        moved = (done, self._total) != self._shown
        if self._shown is None or (moved and since >= self._interval) or since >= self._heartbeat:
            self._emit(line, (done, self._total), now)
        else:
            self._pending = line if line != self._shown_line else None

    def _emit(self, line: str, count: tuple[int, int | None], now: float) -> None:
        self._write(line)
        self._shown, self._shown_line, self._shown_at, self._pending = count, line, now, None

    def close(self) -> None:
        if self._pending is not None:
            self._write(self._pending)
            self._pending = None


class _RichProgress:
    def __init__(self, console: Console, total: int | None, description: str) -> None:
        # markup=False: statuses and details are data ("[0.2, 0.9]"), never rich markup
        self._progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[details]}", markup=False),
            TimeElapsedColumn(),
            console=console,
        )
        self._task = self._progress.add_task(description, total=total, details="")
        self._progress.start()

    def update(self, done: int, *, total: int | None = None, **fields: object) -> None:
        self._progress.update(self._task, completed=done, total=total, details=_details(fields))

    def close(self) -> None:
        self._progress.stop()


@contextmanager
def progress(
    command: BaseCommand,
    total: int | None,
    description: str,
    *,
    interval: float = 5.0,
    heartbeat: float = 60.0,
) -> Iterator[ProgressDisplay]:
    """A progress display on ``command.stdout`` for the duration of the block (see the module docstring).

    ``total`` may be None until the first ``update(done, total=…)``. The display ends its own lines: what
    the command writes after the block starts on a fresh line.
    """
    # OutputWrapper adds a newline to every write; rich needs the stream it wraps.
    stream = cast(IO[str], getattr(command.stdout, "_out", command.stdout))
    console = Console(file=stream)
    display: ProgressDisplay
    # Both: rich alone would animate a pipe when FORCE_COLOR is set; a TTY with TERM=dumb gets plain lines.
    if command.stdout.isatty() and console.is_interactive:
        display = _RichProgress(console, total, description)
    else:
        display = _PlainProgress(
            command.stdout.write, total, description, interval=interval, heartbeat=heartbeat
        )
    try:
        yield display
    finally:
        display.close()


def add_worker_timeout_argument(parser: CommandParser) -> None:
    parser.add_argument(
        "--worker-timeout",
        type=float,
        default=DEFAULT_WORKER_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds to wait for a Celery worker to answer before following the run (default "
        f"{DEFAULT_WORKER_TIMEOUT:g}; 0 follows without asking, e.g. for a busy --pool=solo worker)",
    )


def _broadcast_unreliable(connection: Any) -> bool:
    """True when a ping on this transport cannot tell whether a worker runs, so there is nothing to check."""
    implements = getattr(connection.transport, "implements", None)
    if "fanout" not in getattr(implements, "exchange_type", frozenset({"fanout"})):
        return True  # a transport without broadcast (e.g. SQS) cannot carry a ping
    if connection.transport_cls == "filesystem":
        # kombu's filesystem:// transport (the embedded default) does broadcast, but it keeps its table of
        # which queue is bound to which exchange in the ``control_folder`` transport option, and the default
        # "control" is relative to each process's working directory: a worker and a command started from
        # different directories never hear each other, and we would call a running worker missing. Only a
        # control folder given as an absolute path in the settings is shared, so only then do we ping.
        # (A worker that stopped stays bound there; each ping leaves it one small message file, which it reads
        # and discards when it starts again.)
        control = connection.transport_options.get("control_folder")
        return not control or not Path(control).is_absolute()
    return False


def require_worker(*, queued: str, follow: str, timeout: float = DEFAULT_WORKER_TIMEOUT) -> None:
    """Return once a Celery worker answers a ping; raise CommandError if none does within ``timeout`` s.

    ``queued`` names the queued work ("solve run 12"), ``follow`` says where to follow it (a page path).
    Nothing is checked with eager Celery (tests, ``--inline``: the work already ran here), with ``timeout``
    <= 0, or on a broker where a ping cannot answer the question (see ``_broadcast_unreliable``).
    """
    if celery_app.conf.task_always_eager or timeout <= 0:
        return
    with celery_app.connection_for_write() as connection:
        if _broadcast_unreliable(connection):
            return
        broker = connection.as_uri(include_password=not connection.password)  # a password shown as **
        try:
            connection.ensure_connection(max_retries=1)
            # limit=1: return as soon as one worker answers instead of waiting out the timeout for more
            answers = celery_app.control.ping(timeout=timeout, limit=1, connection=connection)
        except (OperationalError, OSError) as error:
            reason = f"the broker {broker} could not be reached ({error})"
        else:
            if answers:
                return
            reason = f"no Celery worker answered on {broker} within {timeout:g} s"
    raise CommandError(
        f"{queued} is queued, but {reason}.\n"
        "The work stays queued and runs as soon as a worker starts. Start one with\n"
        "  make run                                            (the app and a worker), or\n"
        "  .venv/bin/celery -A physalign_site worker -l info\n"
        f"and follow it at {follow}\n"
        "(--no-wait queues without following; --worker-timeout 0 follows without this check.)"
    )
