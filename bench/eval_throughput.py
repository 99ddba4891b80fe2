"""Evaluation throughput on real PostgreSQL + Redis + Celery workers with the simulated provider.

Run from the project root: ``.venv/bin/python bench/eval_throughput.py [--keep-db bench_eval_fixture]``.
Defaults: 5,000 requests, 50 ms simulated latency, chunks of the app's default size (``DEFAULT_OPTIONS``;
the last ones smaller), 2 prefork workers × 1 process × 8 call threads per chunk task
(``EVAL_CHUNK_THREADS``) = concurrency 16, i.e. at most 16 provider requests in flight at any moment; the
ideal rate is ``concurrency / latency`` = 320 requests/s. Needs a local PostgreSQL on which
``--postgres-server`` may create databases, and Redis on 127.0.0.1:6379. It never touches the app's data
(``bench/_sandbox.py``). The script

1. creates its own database ``bench_eval_<pid>`` (dropped at exit; ``--keep-db bench_NAME`` keeps it, and
   a later run reuses it only if a benchmark created it) and migrates it;
2. generates and compiles synthetic parents until there are enough probes (a kept database keeps them);
3. starts ``--workers`` Celery worker commands (``--pool``, ``--per-worker`` processes each, ``--threads``
   provider calls in flight per chunk task) on a Redis database the sandbox picks (one that holds no
   keys; flushed at exit);
4. creates one run of exactly ``--requests`` rows (``--models`` simulated configs × raw + no_image ×
   probes) — rows are planned up front as in production — dispatches it and polls the database;
5. calibrates, in the same run, what this machine allows right now: the same processes × threads, with no
   database, broker or scoring, doing bare sleeps of the latency and then the simulated provider's calls
   (``llm.generate`` on the run's own requests) — the latter just before and just after the run, so a
   loaded machine lowers the bar it is compared with (``--calibration-requests 0`` skips it);
6. prints the achieved requests/s against the ideal ``concurrency / latency`` and against the
   calibration, the overhead per request and where it went: idle concurrency slots at the start, in the
   middle (chunk hand-overs, late refills) and in the tail, from the stored attempt timestamps; the peak
   number of provider calls actually in flight (swept from the same timestamps, so the concurrency claim
   is checked, not assumed) and the CPU seconds of the workers, of PostgreSQL and of Redis over the
   execution window.

Nothing here is mocked: every chunk is claimed with a lease, its requests built (images read from
storage or the per-process content-addressed cache), answered by the simulated provider with a fixed
sleep, written back and scored in bulk, and the run is finalized with metrics (``--resamples``;
finalization is timed separately from request execution).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fixtures import ensure_probes, stop_processes  # noqa: E402
from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402


def _cpu_seconds(match) -> float:
    """User+system CPU seconds of live processes whose command line satisfies ``match``, plus the CPU of
    their children that already exited (``cutime``/``cstime``: PostgreSQL backends of closed connections,
    recycled prefork children)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if not match(cmd):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15]) / tick
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
    return total


def _peak_in_flight(run) -> int:
    """The most provider attempts that overlapped in time, from each attempt's stored wall-clock start and
    latency. Those are taken a few ms apart (rounded latency; the GIL may hand over between reading the
    two clocks), so an attempt counts as ended 5 ms early: a thread's next call right after it is not
    counted as overlapping it."""
    events = []
    for attempts in run.requests.values_list("attempts", flat=True):
        for attempt in attempts or []:
            start = float(attempt["started_at"])
            events += [(start, 1), (start + (attempt["latency_ms"] - 5) / 1000.0, -1)]
    peak = live = 0
    for _, step in sorted(events):  # an end sorts before a start at the same instant
        live += step
        peak = max(peak, live)
    return peak


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def _calibration_requests(run, count: int) -> list[tuple[Any, Any]]:
    """(LLMRequest, ProviderConfig) of the run's first ``count`` rows (cycled), built exactly as the chunk
    executor builds them (same messages, same attachments, same provider configs)."""
    from evaluation.models import EvalRequest
    from evaluation.runs.attachments import attachments_load
    from evaluation.runs.execution import _DEFERRED
    from evaluation.runs.request import build_request
    from models_registry.providers import provider_config_for

    configs = {c.pk: provider_config_for(c) for c in run.model_configs.all()}
    rows = list(
        EvalRequest.objects.filter(run=run)
        .order_by("pk")
        .select_related("probe", "probe__key")
        .defer(*_DEFERRED)[:count]
    )
    images = attachments_load(list({r.probe.pk: r.probe for r in rows if r.condition != "no_image"}.values()))
    built = [
        (
            build_request(r, run.seed, images.get(r.probe.pk, ()) if r.condition != "no_image" else ()),
            configs[r.model_id],
        )
        for r in rows
    ]
    return [built[i % len(built)] for i in range(count)]


def _calibration_child(work: list[Any], threads: int, provider: bool, ready: Any, go: Any, out: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import llm

    def one(item: Any) -> None:
        if provider:
            llm.generate(item[0], item[1])
        else:
            time.sleep(item)

    ready.wait()
    go.wait()
    started = time.time()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for _ in pool.map(one, work):
            pass
    out.put((started, time.time()))


def _calibrate(work: list[Any], processes: int, threads: int, *, provider: bool) -> float:
    """Requests/s of ``processes`` forked processes × ``threads`` threads doing only ``work`` — each item a
    simulated-provider call (``llm.generate``: the sleep plus building the answer, fingerprints, attempt
    records) or, without ``provider``, a bare sleep of that many seconds — with no database, broker or
    scoring: what this machine, as loaded as it is right now, allows the same concurrency to reach. Items
    are dealt out round-robin, as evenly as the chunks' rows."""
    import multiprocessing

    from django.db import connections

    connections.close_all()  # the children inherit no open connection
    context = multiprocessing.get_context("fork")
    ready, go, out = context.Barrier(processes + 1), context.Event(), context.Queue()
    children = [
        context.Process(
            target=_calibration_child,
            args=(work[i::processes], threads, provider, ready, go, out),
            daemon=True,
        )
        for i in range(processes)
    ]
    for child in children:
        child.start()
    ready.wait()
    go.set()
    spans = [out.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    return len(work) / (max(end for _, end in spans) - min(start for start, _ in spans))


def _idle_slots(run, concurrency: int, t0: float, t1: float) -> dict[str, float]:
    """Slot-seconds no provider call ran in, over the execution window [t0, t1] (wall clock), split into the
    start (before the first ``concurrency`` calls were in flight), the tail (after the last moment they all
    were) and the middle (chunk hand-overs, refills that came late), from the stored attempt timestamps."""
    events = []
    for attempts in run.requests.values_list("attempts", flat=True):
        for attempt in attempts or []:
            start = float(attempt["started_at"])
            events += [(start, 1), (start + attempt["latency_ms"] / 1000.0, -1)]
    events.sort()
    live, at, idle, full = 0, t0, [], []
    for when, step in events:
        idle.append((at, when, concurrency - live))
        live += step
        at = when
        if live >= concurrency:
            full.append(when)
    idle.append((at, t1, concurrency - live))
    first_full, last_full = (full[0], full[-1]) if full else (t1, t1)
    split = {"start": 0.0, "middle": 0.0, "tail": 0.0}
    for a, b, free in idle:
        for name, lo, hi in (
            ("start", t0, first_full),
            ("middle", first_full, last_full),
            ("tail", last_full, t1),
        ):
            overlap = min(b, hi) - max(a, lo)
            if overlap > 0:
                split[name] += overlap * max(free, 0)
    return split


def _start_workers(args: argparse.Namespace, env: dict[str, str], tag: str) -> list[subprocess.Popen]:
    from physalign_site.celery import app

    workers = []
    for i in range(args.workers):
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "physalign_site.celery",
            "worker",
            f"--pool={args.pool}",
            f"--concurrency={args.per_worker}",
            "-n",
            f"{tag}{i}@localhost",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel=WARNING",
            f"--prefetch-multiplier={args.prefetch}",
        ]
        # Worker logs go to a file: a pipe nobody reads would fill up and block the worker mid-run.
        log = open(WORKER_LOG_DIR / f"{tag}{i}.log", "w")  # noqa: SIM115 — closed when the worker exits
        workers.append(
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
        )
    names = [f"{tag}{i}@localhost" for i in range(args.workers)]
    deadline = time.monotonic() + 90
    while True:
        answered = {
            name for reply in (app.control.ping(destination=names, timeout=1.0) or []) for name in reply
        }
        if answered >= set(names):
            return workers
        dead = [w for w in workers if w.poll() is not None]
        if dead or time.monotonic() > deadline:
            stop_processes(workers)
            errors = _log_tail()
            raise SystemExit(f"Celery workers did not start ({sorted(answered)} answered):\n{errors}")


WORKER_LOG_DIR = Path(tempfile.mkdtemp(prefix="eval-bench-logs-"))


def worker_environment(threads: int, **extra: str) -> dict[str, str]:
    """Set, in this process's environment, what the benchmark's Django and its Celery workers run with (real
    workers, ``threads`` provider calls per chunk task, plain HTTP, ``extra``), and return it for the workers."""
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-not-for-production")
    os.environ.update(
        {
            "DJANGO_SECURE_SSL": "false",
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "EVAL_CHUNK_THREADS": str(threads),
        }
    )
    os.environ.update(extra)
    return dict(os.environ)


def _log_tail(chars: int = 3000) -> str:
    return "\n".join(
        f"--- {path.name}\n{path.read_text(errors='replace')[-chars:]}"
        for path in sorted(WORKER_LOG_DIR.glob("*.log"))
    )


CONDITIONS = ["raw", "no_image"]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--workers", type=int, default=2, help="celery worker commands")
    parser.add_argument("--per-worker", type=int, default=1, help="--concurrency (processes) of each worker")
    parser.add_argument("--threads", type=int, default=8, help="provider calls in flight per chunk task")
    parser.add_argument("--pool", default="prefork", choices=["prefork", "threads", "gevent", "eventlet"])
    parser.add_argument("--models", type=int, default=2, help="simulated model configs in the run")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=None,
        help="rows per chunk task (default: the app's DEFAULT_OPTIONS)",
    )
    parser.add_argument("--prefetch", type=int, default=1, help="--prefetch-multiplier of each worker")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument(
        "--calibration-requests",
        type=int,
        default=None,
        help="simulated calls of each calibration (default --requests; 0 skips calibrating)",
    )
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.database != "postgres":
        raise SystemExit("eval_throughput needs PostgreSQL (row claims use SELECT … FOR UPDATE SKIP LOCKED)")
    if args.smoke:
        args.requests, args.models, args.chunk_size, args.resamples = 40, 2, 10, 20
    if args.calibration_requests is None:
        args.calibration_requests = args.requests
    per_model = args.requests // args.models
    if per_model * args.models != args.requests or per_model % len(CONDITIONS):
        raise SystemExit("--requests must divide by --models × 2 conditions")
    return args


def _bench_models(args: argparse.Namespace) -> list[str]:
    """The run's simulated model configs (created or reset), by name."""
    from models_registry.models import ModelConfig

    names = []
    for m in range(args.models):
        name = f"bench-sim-{m}"
        ModelConfig.objects.update_or_create(
            name=name,
            defaults={
                "provider": "simulated",
                "model": "simulated-bench",
                "max_retries": 2,
                "is_active": True,
                "requests_per_minute": None,
                "max_concurrency": None,
                "extra": {"seed": 100 + m, "latency_ms": args.latency_ms},
            },
        )
        names.append(name)
    return names


@dataclass
class _Window:
    """The execution window of the run: its moments (``perf_counter``, and wall clock for the stored
    timestamps) and what the meters read at both ends."""

    started: float
    started_wall: float
    dispatched: float
    first_done: float | None
    executed: float
    executed_wall: float
    finalized: float
    cpu: tuple[
        tuple[float, ...], tuple[float, ...]
    ]  # (workers, PostgreSQL, Redis, this poller) before, after
    busy: tuple[tuple[float, float], tuple[float, float]]  # _machine_busy() before, after


def _cpu_meters(tag: str) -> tuple[float, ...]:
    """CPU seconds so far of the workers, of PostgreSQL, of Redis and of this poller."""
    return (
        _cpu_seconds(lambda c: "celery" in c and tag in c),
        _cpu_seconds(lambda c: c.startswith("postgres:") or c.split(" ", 1)[0].endswith("/postgres")),
        _cpu_seconds(lambda c: c.startswith("redis-server") or "/redis-server" in c),
        time.process_time(),
    )


def _wait_for_rows(run, workers: list[subprocess.Popen]) -> float | None:
    """Poll the database until every row is terminal; the moment the first one was. Stops the benchmark
    when a worker exits or nothing progresses for 60 s."""
    from evaluation.models import EvalRequest

    terminal = EvalRequest.TERMINAL
    done, first_done, last_change, last_done = 0, None, time.perf_counter(), -1
    while done < run.total:
        time.sleep(0.2)
        done = run.requests.filter(status__in=terminal).count()
        if done and first_done is None:
            first_done = time.perf_counter()
        if done != last_done:
            last_done, last_change = done, time.perf_counter()
        if any(w.poll() is not None for w in workers):
            raise SystemExit(f"a worker exited during the run\n{_log_tail()}")
        if time.perf_counter() - last_change > 60:
            raise SystemExit(
                f"no progress for 60 s at {done}/{run.total}; worker logs ({WORKER_LOG_DIR}):\n{_log_tail()}"
            )
    return first_done


def _execute(run, workers: list[subprocess.Popen], tag: str) -> _Window:
    """Dispatch the run, wait for its rows, then for its finalization."""
    from evaluation.models import EvalRun
    from evaluation.runs import eval_run_dispatch

    cpu0 = _cpu_meters(tag)
    busy0 = _machine_busy()
    started, started_wall = time.perf_counter(), time.time()
    eval_run_dispatch(run_id=run.pk)
    dispatched = time.perf_counter()
    first_done = _wait_for_rows(run, workers)
    executed, executed_wall = time.perf_counter(), time.time()
    cpu1 = _cpu_meters(tag)
    busy1 = _machine_busy()
    while EvalRun.objects.get(pk=run.pk).status not in (EvalRun.Status.COMPLETED, EvalRun.Status.FAILED):
        time.sleep(0.1)
    finalized = time.perf_counter()
    return _Window(
        started,
        started_wall,
        dispatched,
        first_done,
        executed,
        executed_wall,
        finalized,
        (cpu0, cpu1),
        (busy0, busy1),
    )


@dataclass
class _Calibration:
    """What this machine allowed around the run: bare sleeps, and the simulated calls before and after."""

    calls: int
    processes: int
    sleeps: float | None
    before: float | None
    after: float | None


def main() -> None:
    args = _arguments()
    probes_needed = args.requests // args.models // len(CONDITIONS)

    sandbox = open_sandbox("eval", args, redis=True, debug=False)
    env = worker_environment(args.threads)
    sandbox.start_django()
    from evaluation.runs import eval_run_create
    from evaluation.runs.tables import DEFAULT_OPTIONS
    from physalign_site.celery import app

    if args.chunk_size is None:
        args.chunk_size = int(DEFAULT_OPTIONS["chunk_size"])

    ensure_probes(probes_needed, args.seed)
    run = eval_run_create(
        model_names=_bench_models(args),
        conditions=CONDITIONS,
        probe_filter={"limit": probes_needed},
        name=f"throughput {args.requests}",
        start=False,
        options={"chunk_size": args.chunk_size, "resamples": args.resamples},
    )
    assert run.total == args.requests, (run.total, args.requests)

    processes = args.workers * args.per_worker
    calibration = _calibration_requests(run, args.calibration_requests) if args.calibration_requests else []

    def calibrate() -> float | None:
        return _calibrate(calibration, processes, args.threads, provider=True) if calibration else None

    app.control.purge()
    tag = f"bench{os.getpid()}-"
    workers = _start_workers(args, env, tag)
    # the ideal as this machine allows it right now: the same processes × threads doing only the
    # simulated calls (and bare sleeps), just before and just after the run
    sleeps = (
        _calibrate([args.latency_ms / 1000.0] * len(calibration), processes, args.threads, provider=False)
        if calibration
        else None
    )
    calibrated_before = calibrate()
    try:
        window = _execute(run, workers, tag)
    finally:
        stop_processes(workers)
    calibrated = _Calibration(len(calibration), processes, sleeps, calibrated_before, calibrate())

    run.refresh_from_db()
    _report(args, sandbox, run, window, calibrated)


def _report(args: argparse.Namespace, sandbox: Any, run, window: _Window, calibration: _Calibration) -> None:
    from django.db.models import Avg, Count

    from run_engine.engine import chunk_ids

    concurrency = args.workers * args.per_worker * args.threads
    started, executed = window.started, window.executed
    wall = executed - started
    rate = run.total / wall
    ideal = concurrency / (args.latency_ms / 1000.0)
    stats = run.requests.aggregate(latency=Avg("latency_ms"), claims=Avg("claims"))
    by_status = dict(run.requests.values_list("status").annotate(n=Count("pk")).order_by())
    duplicates = run.requests.filter(claims__gt=1).count()
    slot_ms = 1000.0 * wall * concurrency / run.total
    cores = os.cpu_count() or 1
    cpu0, cpu1 = window.cpu
    workers_s, pg_s, redis_s, me_s = (b - a for a, b in zip(cpu0, cpu1, strict=True))
    (busy0, all0), (busy1, all1) = window.busy
    machine = (busy1 - busy0) / max(all1 - all0, 1)
    latency = stats["latency"] or 0

    print(
        f"eval throughput: {run.total} requests, simulated latency {args.latency_ms:.0f} ms, "
        f"concurrency {concurrency} ({args.workers} × {args.pool} {args.per_worker} × {args.threads} threads), "
        f"chunk {args.chunk_size}, "
        f"{cores} cores, PostgreSQL db {sandbox.database_name}, Redis broker db {sandbox.redis_db}"
    )
    print(
        f"  execution wall {wall:.2f} s (dispatch of {len(chunk_ids(list(range(run.total)), args.chunk_size))} tasks "
        f"{window.dispatched - started:.2f} s, first result after {((window.first_done or executed) - started):.2f} s)"
    )
    print(
        f"  achieved {rate:.1f} requests/s vs ideal {ideal:.0f} requests/s = {100 * rate / ideal:.1f}% of ideal"
    )
    _report_calibration(args, calibration, rate, ideal)
    print(f"  peak provider calls in flight {_peak_in_flight(run)} (limit {concurrency})")
    print(
        f"  finalize (metrics, {args.resamples} resamples, snapshots) {window.finalized - executed:.2f} s; "
        f"run status {run.status}; statuses {by_status}; rows claimed more than once {duplicates}"
    )
    print(
        f"  per request: {slot_ms:.1f} ms of a concurrency slot = {latency:.1f} ms provider "
        f"latency + {slot_ms - latency:.1f} ms overhead (claim, build, write, score, queue)"
    )
    idle = _idle_slots(run, concurrency, window.started_wall, window.executed_wall)
    print(
        f"  idle slots per request: {1000 * sum(idle.values()) / run.total:.1f} ms = "
        f"{1000 * idle['start'] / run.total:.1f} ms start (until {concurrency} calls first run) + "
        f"{1000 * idle['middle'] / run.total:.1f} ms middle (chunk hand-overs, late refills) + "
        f"{1000 * idle['tail'] / run.total:.1f} ms tail (after the last moment all {concurrency} ran); "
        f"the rest of the overhead is inside the calls ({latency - args.latency_ms:.1f} ms "
        f"beyond the {args.latency_ms:.0f} ms sleep: scheduling, GIL)"
    )
    print(
        f"  CPU over the execution window ({wall:.1f} s × {cores} cores = {wall * cores:.1f} core-s, "
        f"machine busy {100 * machine:.0f}%): workers {workers_s:.1f} s "
        f"({1000 * workers_s / run.total:.2f} ms/request), PostgreSQL {pg_s:.1f} s "
        f"({1000 * pg_s / run.total:.2f} ms/request; every database of the server, so other users' too), "
        f"Redis {redis_s:.1f} s, this poller {me_s:.1f} s"
    )


def _report_calibration(
    args: argparse.Namespace, calibration: _Calibration, rate: float, ideal: float
) -> None:
    before, after, sleeps = calibration.before, calibration.after, calibration.sleeps
    if before is None or after is None or sleeps is None:
        return  # --calibration-requests 0
    calibrated = (before + after) / 2
    print(
        f"  calibrated in this run ({calibration.calls} calls, {calibration.processes} processes × "
        f"{args.threads} threads, no database): bare sleeps {sleeps:.1f} requests/s "
        f"({100 * sleeps / ideal:.1f}% of ideal); simulated provider {before:.1f} before, {after:.1f} after "
        f"the run ({100 * calibrated / ideal:.1f}% of ideal); achieved / calibrated = {100 * rate / calibrated:.1f}%"
    )


if __name__ == "__main__":
    main()
