"""Compile generated parents and print probes/s, the render/DB split, peak RSS and the storage the views take.

Run from the project root: ``.venv/bin/python bench/compile_bench.py [--count 986] [--workers 2]
[--chunk-size 50] [--recompile]``. It generates a workspace, imports it and compiles it in its own throwaway
database and folders (``bench/_sandbox.py``), never the app's, whatever ``DATABASE_URL`` says:

- ``--workers N`` (default 2) starts N real Celery worker processes (prefork, one process each) on a Redis
  database the sandbox picks and on PostgreSQL, and compiles through the production path: the run task plans
  the chunks and queues one chunk task per ``--chunk-size`` parents; the last chunk finishes the run;
- ``--workers 0`` compiles in this process, chunk after chunk (``compile_run_execute``; SQLite allowed).

Workspace generation and import are timed but not part of the compile figures. The split sums each chunk's
stages over all workers (seconds of work, not of wall clock); "wall" runs from queueing the run until it has
succeeded, finishing step included. The machine's load average is printed with the numbers: on a shared
machine they move with it.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fixtures import stop_processes  # noqa: E402
from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def _peak_rss_mb(tag: str) -> tuple[float, int]:
    """The largest peak resident set (VmHWM) among the live processes of the workers tagged ``tag``."""
    peak, seen = 0.0, 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if "celery" not in cmd or tag not in cmd:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak, seen = max(peak, int(line.split()[1]) / 1024), seen + 1
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return peak, seen


def _cpu_seconds(match) -> float:
    """User+system CPU seconds of live processes whose command line satisfies ``match``, with their exited
    children's (PostgreSQL backends of closed connections)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if match(cmd):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(v) for v in fields[11:15]) / tick
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
    return total


def _storage(media: Path) -> tuple[int, int]:
    files = [p for p in (media / "views").rglob("*") if p.is_file()] if (media / "views").exists() else []
    return len(files), sum(p.stat().st_size for p in files)


def _table_mb() -> str:
    from django.db import connection

    if connection.vendor != "postgresql":
        return "n/a (SQLite)"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relname IN "
            "('probes_probe', 'probes_probekey', 'probes_renderedview')"
        )
        sizes = dict(cursor.fetchall())
    return ", ".join(
        f"{name.removeprefix('probes_')} {size / 2**20:.1f} MB" for name, size in sorted(sizes.items())
    )


def _compile(args: argparse.Namespace, tag: str, label: str) -> None:
    from django.conf import settings

    from probes.models import CompileRun, RenderedView
    from probes.services import compile_run_create, compile_run_execute

    files_before, bytes_before = _storage(Path(settings.MEDIA_ROOT))
    load_before = _load()
    workers_cpu = lambda: _cpu_seconds(lambda c: "celery" in c and tag in c)  # noqa: E731
    pg_cpu = lambda: (  # noqa: E731 — the whole server's: other users of it count too
        _cpu_seconds(lambda c: c.startswith("postgres:") or c.split(" ", 1)[0].endswith("/postgres"))
        if args.database == "postgres"
        else 0.0
    )
    cpu0 = (workers_cpu(), pg_cpu(), time.process_time())
    started = time.perf_counter()
    if args.workers:
        run = compile_run_create(actor=None, seed=args.seed, chunk_size=args.chunk_size)  # queued right away
        last = None
        while True:
            time.sleep(0.25)
            run.refresh_from_db()
            if run.status in (CompileRun.Status.SUCCEEDED, CompileRun.Status.FAILED):
                break
            if (run.chunks_done, run.done) != last and not args.quiet:
                last = (run.chunks_done, run.done)
                print(
                    f"  … {time.perf_counter() - started:6.1f} s: {run.done}/{run.total} parents, "
                    f"{run.chunks_done}/{run.chunks_total} chunks"
                )
            if any(w.poll() is not None for w in WORKERS):
                raise SystemExit(f"a worker exited during the compile\n{_worker_logs()}")
    else:
        run = compile_run_create(actor=None, seed=args.seed, enqueue=False, chunk_size=args.chunk_size)
        run = compile_run_execute(run_id=run.pk)
    wall = time.perf_counter() - started
    cpu1 = (workers_cpu(), pg_cpu(), time.process_time())
    if run.status != CompileRun.Status.SUCCEEDED:
        raise SystemExit(f"compile run {run.pk} {run.status}: {run.error}\n{_worker_logs()}")
    probes = run.counts.get("probes", 0)
    views = RenderedView.objects.filter(probe__compile_run=run).count()
    t = run.timings
    files, stored = _storage(Path(settings.MEDIA_ROOT))
    if args.workers:
        peak, processes = _peak_rss_mb(tag)
        rss = f"peak RSS {peak:.0f} MB (largest of {processes} worker processes)"
    else:
        rss = f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (this process)"
    where = (
        f"{args.workers} worker(s) × 1 process" if args.workers else "this process"
    ) + f", chunks of {args.chunk_size} parents ({run.chunks_total} chunks)"
    print(f"{label}: {where}")
    print(
        f"  compiled {run.counts.get('parents')} parents → {probes} probes "
        f"(T02-single {run.counts.get('T02-single', 0)}, T03-image {run.counts.get('T03-image', 0)}, "
        f"T03-text {run.counts.get('T03-text', 0)}), {views} views, "
        f"blocked groups {run.counts.get('blocked_groups', 0)}"
    )
    print(f"  wall {wall:.2f} s = {probes / wall:.1f} probes/s")
    print(
        f"  split (work seconds summed over chunks): render {t['render_s']:.2f} s · "
        f"database {t['db_s']:.2f} s · view storage {t.get('store_s', 0):.2f} s · "
        f"compile {t['compile_s']:.2f} s · source load {t['load_s']:.2f} s"
    )
    last_chunk = run.chunks.order_by("-finished_at").values_list("finished_at", flat=True).first()
    finish = (run.finished_at - last_chunk).total_seconds() if last_chunk and run.finished_at else 0.0
    print(f"  finishing step (membership, splits, counts) {finish:.2f} s after the last chunk")
    workers_s, pg_s, me_s = (b - a for a, b in zip(cpu0, cpu1, strict=True))
    compiling_s = workers_s if args.workers else me_s
    per_probe = 1000 * (compiling_s + pg_s) / max(probes, 1)
    cores = os.cpu_count() or 1
    print(
        f"  CPU: {'workers' if args.workers else 'this process'} {compiling_s:.1f} s + PostgreSQL server {pg_s:.1f} s "
        f"= {per_probe:.1f} ms per probe; {cores} idle cores would give ≈ {1000 * cores / per_probe:.0f} "
        f"probes/s if the work spreads over them ({1000 / per_probe:.0f} per core)"
    )
    print(f"  {rss}")
    print(
        f"  storage: {files} view files, {stored / 2**20:.1f} MB in the media storage "
        f"(+{files - files_before} files, +{(stored - bytes_before) / 2**20:.1f} MB by this run); "
        f"tables {_table_mb()}"
    )
    print(f"  machine: before {load_before}; after {_load()}")


WORKERS: list = []
LOG_DIR = Path(tempfile.mkdtemp(prefix="compile-bench-logs-"))


def _worker_logs(chars: int = 3000) -> str:
    return "\n".join(
        f"--- {path.name}\n{path.read_text(errors='replace')[-chars:]}"
        for path in sorted(LOG_DIR.glob("*.log"))
    )


def _start_workers(count: int, tag: str) -> None:
    import subprocess

    from physalign_site.celery import app

    names = [f"{tag}{i}@localhost" for i in range(count)]
    for name in names:
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "physalign_site.celery",
            "worker",
            "--pool=prefork",
            "--concurrency=1",
            "-n",
            name,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=WARNING",
            "--prefetch-multiplier=1",
        ]
        log = open(LOG_DIR / f"{name}.log", "w")  # noqa: SIM115 — closed when the worker exits
        WORKERS.append(
            subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=log)
        )
    deadline = time.monotonic() + 90
    while True:
        answered = {n for reply in (app.control.ping(destination=names, timeout=1.0) or []) for n in reply}
        if answered >= set(names):
            return
        if any(w.poll() is not None for w in WORKERS) or time.monotonic() > deadline:
            _stop_workers()
            raise SystemExit(f"Celery workers did not start ({sorted(answered)} answered):\n{_worker_logs()}")


def _stop_workers() -> None:
    stop_processes(WORKERS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes; 0: this process")
    parser.add_argument("--chunk-size", type=int, default=None, help="parents per chunk task (default 50)")
    parser.add_argument(
        "--recompile", action="store_true", help="compile again: unchanged views write nothing"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.smoke:
        args.count = 3
    if args.workers and args.database != "postgres":
        raise SystemExit("--workers needs PostgreSQL (chunk claims use SELECT … FOR UPDATE SKIP LOCKED)")
    sandbox = open_sandbox("compile", args, redis=bool(args.workers), debug=False)
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-not-for-production")
    os.environ.update({"DJANGO_SECURE_SSL": "false", "CELERY_TASK_ALWAYS_EAGER": "false"})
    sandbox.start_django()
    from annotation.demo import generate_workspace
    from annotation.importers import import_kit_workspace
    from annotation.models import ParentProblem
    from probes.services import COMPILE_CHUNK_SIZE

    args.chunk_size = args.chunk_size or COMPILE_CHUNK_SIZE
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        generate_workspace(Path(tmp) / "ws", count=args.count, seed=args.seed)
        generated = time.perf_counter()
        import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
        imported = time.perf_counter()
    print(
        f"setup: generate {generated - started:.1f} s, import {imported - generated:.1f} s "
        f"({ParentProblem.objects.count()} parents)"
    )
    tag = f"compilebench{os.getpid()}-"
    if args.workers:
        from physalign_site.celery import app

        app.control.purge()
        _start_workers(args.workers, tag)
    try:
        _compile(args, tag, "compile")
        if args.recompile:
            _compile(args, tag, "recompile (nothing changed)")
    finally:
        _stop_workers()


if __name__ == "__main__":
    main()
