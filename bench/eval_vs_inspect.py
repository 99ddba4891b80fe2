"""Side by side with the peer (issue 32, §4): the app's evaluation run engine against ``inspect eval`` of the
exported release, the same probes, the same local OpenAI-compatible server, in one benchmark run.

Run from the project root::

    .venv/bin/python bench/eval_vs_inspect.py              # 300 generated parents' test release, 50 ms, 16
    .venv/bin/python bench/eval_vs_inspect.py --smoke      # a few seconds: checks it runs

1. builds the benchmark's own database (``bench/_sandbox.py``; never the app's) with ``--count`` generated
   parents, compiles them and exports their test release, as ``bench/export_bench.py`` does;
2. starts ``bench/_openai_server.py``: Chat Completions on loopback answering after ``--latency-ms``;
3. the app: an ``openai_compatible`` model config pointed at it, one run of the release's probes in the raw
   condition, executed by ``--workers`` Celery workers × ``--threads`` provider calls each (concurrency 16 by
   default), polled until every row is stored and scored, then finalized;
4. the peer: ``inspect eval physalign_studio/inspect_task.py@physalign`` of the same release folder and
   condition, scored with its private key, inspect's OpenAI provider at the same server (``--model-base-url``,
   ``--max-connections`` = the same concurrency, ``-M responses_api=false``: Chat Completions, as the app sends,
   where inspect would otherwise use the Responses API);
5. prints, for both, requests/s as the server saw them (completions served ÷ first arrival to last reply, one
   meter for both), the same as a share of the ideal ``concurrency / latency``, the most requests the server
   had in flight at once, and the end-to-end seconds (the app: dispatch to all rows stored, and to the run
   finalized; inspect: the command's wall time, start-up and log writing included); then the app ÷ inspect
   ratio against the goals (≥ 1.0× inspect's requests/s, ≥ 90 % of the ideal). Whichever wins is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fixtures import stop_processes  # noqa: E402
from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402
from bench.eval_throughput import _cpu_seconds, _execute, _start_workers, worker_environment  # noqa: E402
from bench.export_bench import _build, _release  # noqa: E402

MODEL = "bench-peer-model"
CONDITION = "raw"
GOAL_RATIO, GOAL_IDEAL = 1.0, 0.90


@dataclass
class Side:
    """One side's figures, read off the server's meter and the side's own clock."""

    name: str
    served: int
    window_s: float
    peak_in_flight: int
    end_to_end_s: float
    cpu_s: float  # the side's own processes (the app: its workers; inspect: the command), whole window
    server_cpu_s: float  # the local server's, over the same
    note: str = ""

    @property
    def rps(self) -> float:
        return self.served / self.window_s if self.window_s > 0 else 0.0


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=300, help="generated parents (≈3.4 probes each)")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--workers", type=int, default=2, help="celery worker commands of the app")
    parser.add_argument("--threads", type=int, default=8, help="provider calls in flight per chunk task")
    parser.add_argument(
        "--chunk-size", type=int, default=None, help="rows per chunk task (default: the app's)"
    )
    parser.add_argument("--seed", type=int, default=2027)
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.database != "postgres":
        raise SystemExit("eval_vs_inspect needs PostgreSQL (the run engine's row claims)")
    if args.smoke:
        args.count = 40  # as export_bench --smoke: enough parents for a test split
    # eval_throughput's worker starter reads these
    args.per_worker, args.pool, args.prefetch = 1, "prefork", 1
    return args


class _Server:
    """The local OpenAI-compatible server in its own process, and its meter."""

    def __init__(self, latency_ms: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "_openai_server.py"), "--latency-ms", str(latency_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("listening on "):
            self.process.kill()
            raise SystemExit(f"the local OpenAI-compatible server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[-1])}"

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path, method=method, data=b"" if method == "POST" else None
        )
        with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 — our own loopback server
            return json.loads(reply.read())

    def reset(self) -> None:
        self._call("POST", "/reset")

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/stats")

    def stop(self) -> None:
        stop_processes([self.process])


def _side(
    name: str, stats: dict[str, Any], end_to_end_s: float, cpu: tuple[float, float], note: str = ""
) -> Side:
    window = (stats["last_reply"] - stats["first_arrival"]) if stats["served"] else 0.0
    return Side(name, stats["served"], window, stats["peak_in_flight"], end_to_end_s, *cpu, note)


def _server_cpu() -> float:
    return _cpu_seconds(lambda c: "_openai_server.py" in c)


def _app_side(args: argparse.Namespace, server: _Server, release: Any, env: dict[str, str]) -> Side:
    from evaluation.models import EvalRun
    from evaluation.runs import eval_run_create
    from models_registry.models import ModelConfig
    from physalign_site.celery import app
    from run_engine.engine import chunk_ids

    ModelConfig.objects.update_or_create(
        name=MODEL,
        defaults={
            "provider": "openai_compatible",
            "model": MODEL,
            "base_url": f"{server.url}/v1",
            "api_key_env": "",
            "max_retries": 2,
            "is_active": True,
            "requests_per_minute": None,
            "max_concurrency": None,
            "extra": {},
        },
    )
    run = eval_run_create(
        model_names=[MODEL],
        conditions=[CONDITION],
        release=release,
        name="side by side",
        start=False,
        options={"chunk_size": args.chunk_size} if args.chunk_size else None,
    )
    app.control.purge()
    tag = f"peer{os.getpid()}-"
    workers = _start_workers(args, env, tag)
    try:
        server.reset()
        server_cpu = _server_cpu()
        window = _execute(run, workers, tag)
        server_cpu = _server_cpu() - server_cpu
    finally:
        stop_processes(workers)
    stats = server.stats()
    run.refresh_from_db()
    if run.status != EvalRun.Status.COMPLETED:
        raise SystemExit(f"the app's run ended {run.status}: {run.error}")
    chunks = len(chunk_ids(list(range(run.total)), int(run.options["chunk_size"])))  # as dispatch cut them
    note = f"{run.total} rows in {chunks} chunks; finalized {window.finalized - window.started:.2f} s after dispatch"
    workers_cpu = window.cpu[1][0] - window.cpu[0][0]
    return _side("app run engine", stats, window.executed - window.started, (workers_cpu, server_cpu), note)


def _inspect_side(args: argparse.Namespace, server: _Server, release: Any) -> Side:
    folder = Path(release.path).resolve()
    concurrency = args.workers * args.threads
    inspect = Path(sys.executable).with_name("inspect")
    with tempfile.TemporaryDirectory(prefix="inspect-logs-") as logs:
        command = [
            str(inspect),
            "eval",
            f"{ROOT / 'physalign_studio' / 'inspect_task.py'}@physalign",
            "-T",
            f"source={folder}",
            "-T",
            f"condition={CONDITION}",
            "-T",
            f"private={folder / 'private' / 'mappings.json'}",
            "--model",
            f"openai/{MODEL}",
            "--model-base-url",
            f"{server.url}/v1",
            "-M",
            "responses_api=false",  # Chat Completions, as the app speaks to an OpenAI-compatible server
            "--max-connections",
            str(concurrency),
            "--log-dir",
            logs,
            "--display",
            "none",
        ]
        env = {
            **os.environ,
            "OPENAI_API_KEY": "bench-not-a-key",
            "PYTHONPATH": str(ROOT),
            "INSPECT_LOG_LEVEL": "warning",
        }
        server.reset()
        server_cpu, children = _server_cpu(), resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        inspect_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        server_cpu = _server_cpu() - server_cpu
        if done.returncode != 0:
            raise SystemExit(
                f"inspect eval failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            )
        written = sorted(Path(logs).glob("*.eval"))
        from inspect_ai.log import read_eval_log

        log = read_eval_log(str(written[-1]), header_only=True) if written else None
        status = log.status if log else "no log"
        samples = log.results.total_samples if log and log.results else 0
        if status != "success":
            error = log.error.message if log and log.error else done.stderr[-3000:]
            raise SystemExit(f"inspect's log says {status}: {error}")
    return _side("inspect eval", server.stats(), elapsed, (inspect_cpu, server_cpu), f"{samples} samples")


def main() -> None:
    args = _arguments()
    box = open_sandbox("peer", args, redis=True, debug=False)
    env = worker_environment(args.threads, PHYSALIGN_MODEL_ALLOW_PRIVATE_URLS="true")  # the server: loopback
    box.start_django()
    _build(args.count, args.seed, demo=False)
    release, _ = _release(
        "test", Path(box.env["PHYSALIGN_VAR_DIR"]) / "bench-releases" / f"peer-{int(time.time())}"
    )
    server = _Server(args.latency_ms)
    try:
        app_side = _app_side(args, server, release, env)
        inspect_side = _inspect_side(args, server, release)
    finally:
        server.stop()
    _report(args, release, app_side, inspect_side)


def _report(args: argparse.Namespace, release: Any, app_side: Side, inspect_side: Side) -> None:
    concurrency = args.workers * args.threads
    ideal = concurrency / (args.latency_ms / 1000.0)
    print(
        f"release {release.release_id}: {release.items.count():,} probes, condition {CONDITION}; "
        f"server latency {args.latency_ms:.0f} ms, concurrency {concurrency} "
        f"(app: {args.workers} workers × {args.threads} threads; inspect: --max-connections {concurrency}); "
        f"ideal {ideal:.0f} requests/s"
    )
    print(
        f"{'side':16} {'served':>7} {'window s':>9} {'req/s':>8} {'of ideal':>9} {'peak':>5} {'end-to-end s':>13} "
        f"{'CPU s':>7} {'CPU ms/req':>11} {'server CPU s':>13}"
    )
    for side in (app_side, inspect_side):
        per_request = 1000 * side.cpu_s / side.served if side.served else 0.0
        print(
            f"{side.name:16} {side.served:>7} {side.window_s:>9.2f} {side.rps:>8.1f} {side.rps / ideal:>8.0%} "
            f"{side.peak_in_flight:>5} {side.end_to_end_s:>13.2f} {side.cpu_s:>7.1f} {per_request:>11.1f} "
            f"{side.server_cpu_s:>13.1f}   {side.note}"
        )
    print(f"(the machine has {os.cpu_count()} cores: CPU s ÷ window s is the cores a side kept busy)")
    ratio = app_side.rps / inspect_side.rps if inspect_side.rps else float("inf")
    faster = "the app" if ratio >= 1.0 else "inspect"
    print(f"app ÷ inspect requests/s: {ratio:.2f}× ({faster} is faster)")
    met = ratio >= GOAL_RATIO and app_side.rps >= GOAL_IDEAL * ideal
    print(
        f"goals (≥ {GOAL_RATIO:.1f}× inspect, ≥ {GOAL_IDEAL:.0%} of the ideal): {'met' if met else 'NOT met'}"
        + (" (smoke size: too few requests to judge)" if args.smoke else "")
    )


if __name__ == "__main__":
    main()
