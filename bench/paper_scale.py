"""The paper's scale: build a 986-parent campaign once, then time every step a team runs at that size.

Run from the project root::

    .venv/bin/python bench/paper_scale.py --keep-db bench_paper            # build (once) and measure
    .venv/bin/python bench/paper_scale.py --keep-db bench_paper --subbenches   # … plus the other benches
    .venv/bin/python bench/paper_scale.py --smoke                           # 40 parents: checks it runs

It works on its own PostgreSQL database (``bench/_sandbox.py``; ``--keep-db bench_NAME`` keeps it, and a
later run reuses what an earlier one built). Building it, with the app's own services, nothing mocked:

1. ``generate_workspace`` (986 synthetic parents, seed 2027), ``import_kit_workspace``, one compile run
   (≈4,200 probes and ≈36,000 rendered views); timed, with probes/s;
2. blind review of every development parent (primary *alice*, secondary *dave*) through the review
   services, an audit campaign and plan, *carl* holding 25 open primary slots of it (the queue page's
   worst case in the issue), *alice* and *bob* reviewing the rest of the plan;
3. one evaluation run of 6 simulated models (no latency) × raw, no_image, reordered on every probe — 76,068
   requests at the paper's size — executed in-process through ``eval_chunk_process`` (the real claim,
   call, score and store path) and finished.

Then it measures, and prints one table:

- finishing the run (``eval_run_finalize`` in a fresh child process: wall time and the child's peak RSS)
  and downloading its item file (a child process: wall time, bytes, peak RSS), first and second time;
- each page and API list of the issue as the role that uses it: median server time of ``--repeat`` GETs
  through Django's test client (DEBUG on, as in the issue), the query count and the response size;
- ``--subbenches``: also runs ``bench/metrics_cli.py``, ``bench/compile_bench.py`` (1 and 2 workers) and
  ``bench/eval_throughput.py`` and prints their summaries.

The machine's load (``os.getloadavg``) is printed before and after: the numbers mean little on a busy box.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402

CONDITIONS = ["raw", "no_image", "reordered"]
MODELS = 6
RUN_NAME = "paper-scale"
HOLDER_SLOTS = 25  # the queue page's case in the issue: a reviewer holding 25 slots
TARGET_MS = 100.0


# ------------------------------------------------------------------------------------------------ building


def _users() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    users = {}
    for name, role in (
        ("alice", "probe_reviewer"),
        ("bob", "probe_reviewer"),
        ("carl", "probe_reviewer"),
        ("dave", "probe_reviewer"),
        ("erin", "adjudicator"),
        ("ann", "annotator"),
        ("boss", "admin"),
    ):
        user, _ = get_user_model().objects.get_or_create(username=f"bench-{name}")
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        users[name] = user
    # the boss downloads item files, which tell each probe's target: a key holder
    users["boss"].user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return users


def _build_campaign(count: int, seed: int) -> dict[str, float]:
    from annotation.demo import generate_workspace
    from annotation.importers import import_kit_workspace
    from probes.services import compile_run_create, compile_run_execute

    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        generate_workspace(Path(tmp) / "ws", count=count, seed=seed)
        timings["generate_s"] = time.perf_counter() - started
        started = time.perf_counter()
        import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
        timings["import_s"] = time.perf_counter() - started
    run = compile_run_create(actor=None, seed=seed, enqueue=False)
    started = time.perf_counter()
    run = compile_run_execute(run_id=run.pk)
    timings["compile_s"] = time.perf_counter() - started
    timings["compile_probes"] = float(run.counts.get("probes", 0))
    return timings


def _review_all(slot: Any, user: Any) -> None:
    from review import services
    from review.models import CONFIRMATION_KEYS
    from review.selectors import slot_work

    for probe in slot_work(slot):
        key = probe.key
        services.review_submit_blind(
            slot=slot,
            probe=probe,
            reviewer=user,
            given=services.BlindAnswerIn(
                binding=key.gold_aliases,
                read={r["anchor_alias"]: r["expected"] for r in key.key["read_targets"]},
            ),
        )
    for probe in slot_work(slot):
        ids = probe.key.key["packet_plan"]["observation_ids"]
        services.review_decide(
            slot=slot,
            probe=probe,
            reviewer=user,
            given=services.DecisionIn(
                status="approved",
                severity="none",
                confirmations=dict.fromkeys(CONFIRMATION_KEYS, True),
                packet_state="approved_nonempty" if ids else "approved_empty",
                packet_empty_reason="" if ids else "no_independent_readable_primitive",
            ),
        )


def _claim(user: Any, role: str, context: str) -> Any | None:
    from physalign_site.errors import ApplicationError
    from review import services

    try:
        return services.review_claim(reviewer=user, role=role, context=context)
    except ApplicationError as error:
        if error.code != "QUEUE_EMPTY":
            raise
        return None


def _build_reviews(users: dict[str, Any]) -> dict[str, float]:
    from review import services
    from review.models import Role

    started = time.perf_counter()
    for user, role in ((users["alice"], Role.PRIMARY), (users["dave"], Role.SECONDARY)):
        while (slot := _claim(user, role, services.DEVELOPMENT)) is not None:
            _review_all(slot, user)
    plan = services.audit_plan_create(campaign=services.audit_campaign_create(actor=None), actor=None)
    held = 0
    while held < HOLDER_SLOTS and _claim(users["carl"], Role.PRIMARY, plan.context) is not None:
        held += 1
    for user, role in ((users["alice"], Role.PRIMARY), (users["bob"], Role.SECONDARY)):
        while (slot := _claim(user, role, plan.context)) is not None:
            _review_all(slot, user)
    return {"review_s": time.perf_counter() - started, "holder_slots": float(held)}


def _build_run() -> dict[str, float]:
    from evaluation.models import EvalRequest
    from evaluation.runs import eval_chunk_process, eval_run_create
    from models_registry.models import ModelConfig

    names = []
    for index in range(MODELS):
        config, _ = ModelConfig.objects.get_or_create(
            name=f"bench-sim-{index}",
            defaults={
                "provider": ModelConfig.Provider.SIMULATED,
                "model": f"bench-sim-{index}",
                "extra": {"seed": 2027 + index, "latency_ms": [0, 0]},
                "requests_per_minute": 10**7,
                "max_concurrency": 16,
            },
        )
        names.append(config.name)
    started = time.perf_counter()
    run = eval_run_create(model_names=names, conditions=CONDITIONS, name=RUN_NAME, start=False)
    planned = time.perf_counter() - started
    ids = list(EvalRequest.objects.filter(run=run).order_by("pk").values_list("pk", flat=True))
    started = time.perf_counter()
    for i in range(0, len(ids), 500):
        eval_chunk_process(run_id=run.pk, request_ids=ids[i : i + 500])
        print(f"  executed {min(i + 500, len(ids)):,} / {len(ids):,} requests", end="\r", flush=True)
    print()
    return {"plan_s": planned, "execute_s": time.perf_counter() - started, "requests": float(len(ids))}


def build(args: argparse.Namespace) -> dict[str, float]:
    from annotation.models import ParentProblem
    from evaluation.models import EvalRun

    timings: dict[str, float] = {}
    if not ParentProblem.objects.exists():
        print(f"building: {args.count} parents (generate, import, compile) …", flush=True)
        timings.update(_build_campaign(args.count, args.seed))
    users = _users()
    from review.models import ReviewSlot

    if not ReviewSlot.objects.exists():
        print("building: reviews …", flush=True)
        timings.update(_build_reviews(users))
    if not EvalRun.objects.filter(name=RUN_NAME, status=EvalRun.Status.COMPLETED).exists():
        EvalRun.objects.filter(name=RUN_NAME).delete()
        print("building: the evaluation run …", flush=True)
        timings.update(_build_run())
    return timings


# ------------------------------------------------------------------------------------------------ measuring


def _child(kind: str, run_id: int) -> dict[str, float]:
    """Run ``kind`` in a fresh process (same sandbox environment) and return its report with its peak RSS."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--run", str(run_id)],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"child {kind} failed:\n{out.stdout}\n{out.stderr}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["process_s"] = wall
    return report


def _peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM). Not ``ru_maxrss``: Linux carries that across ``execve``, so a
    child forked from this big benchmark process would report the parent's peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_main(kind: str, run_id: int) -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]

    from evaluation.models import EvalRun
    from evaluation.runs import eval_run_finalize

    report: dict[str, float] = {}
    started = time.perf_counter()
    if kind == "finalize":
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.RUNNING)
        eval_run_finalize(run_id=run_id)
    else:  # download
        from django.contrib.auth import get_user_model

        client = Client()
        client.force_login(get_user_model().objects.get(username="bench-boss"))
        response = client.get(f"/runs/{run_id}/download/items/")
        assert response.status_code == 200, response.status_code
        size = sum(len(chunk) for chunk in response) if response.streaming else len(response.content)
        report["bytes"] = float(size)
    report["seconds"] = time.perf_counter() - started
    report["rss_mb"] = _peak_rss_mb()
    print(json.dumps(report))


def _pages(run_id: int) -> list[tuple[str, str]]:
    """(user, url) of each page and API list of the issue, plus the pages every role starts from."""
    from evaluation.models import EvalRequest

    pks = list(EvalRequest.objects.filter(run_id=run_id).order_by("pk").values_list("pk", flat=True))
    late = pks[int(len(pks) * 0.985)] if pks else 0  # about page 1,500 of 50 at 76k rows
    return [
        ("boss", "/"),
        ("boss", "/review/accounting/"),
        ("carl", "/review/"),
        ("boss", "/review/agreement/"),
        ("boss", f"/runs/{run_id}/items/"),
        ("boss", f"/runs/{run_id}/items/?after={late}"),
        ("boss", f"/runs/{run_id}/"),
        ("boss", f"/runs/{run_id}/progress/"),
        ("boss", "/runs/"),
        ("boss", "/api/eval/runs/"),
        ("boss", f"/api/eval/runs/{run_id}/"),
        ("boss", "/api/probes/"),
        ("boss", "/probes/"),
        ("boss", "/problems/"),
        ("ann", "/"),
        ("carl", "/"),
    ]


def measure_pages(run_id: int, repeat: int) -> list[dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    rows = []
    clients: dict[str, Client] = {}
    for user, url in _pages(run_id):
        if user not in clients:
            clients[user] = Client()
            clients[user].force_login(get_user_model().objects.get(username=f"bench-{user}"))
        client = clients[user]
        client.get(url)  # warm caches, as a user's second visit
        times = []
        for _ in range(repeat):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                body = b"".join(response) if response.streaming else response.content
                times.append((time.perf_counter() - started) * 1000)
        rows.append(
            {
                "user": user,
                "url": url,
                "status": response.status_code,
                "ms": statistics.median(times),
                "queries": len(queries),
                "kb": len(body) / 1024,
            }
        )
    return rows


def run_subbench(script: str, *extra: str) -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *extra],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")},
    )
    return (out.stdout + out.stderr).strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--subbenches", action="store_true", help="also run the other paper-scale benches")
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--child", choices=["finalize", "download"], help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.run)
        return
    if args.smoke:
        args.count, args.repeat = 40, 2  # 25 development parents, the rest audit candidates
    load_before = os.getloadavg()[0]
    open_sandbox("paper", args).start_django()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    built = build(args)
    from evaluation.models import EvalRequest, EvalRun
    from probes.models import Probe

    run = EvalRun.objects.get(name=RUN_NAME)
    print(
        f"campaign: {Probe.objects.exclude(state__in=['superseded', 'rejected']).count():,} probes, "
        f"run {run.pk}: {EvalRequest.objects.filter(run=run).count():,} requests"
    )
    for name, value in built.items():
        print(f"  build {name}: {value:,.1f}")
    if "compile_s" in built:
        print(f"  compile: {built['compile_probes'] / built['compile_s']:.1f} probes/s (one process)")
    finish = _child("finalize", run.pk)
    download_1 = _child("download", run.pk)
    download_2 = _child("download", run.pk)
    pages = measure_pages(run.pk, args.repeat)
    load_after = os.getloadavg()[0]

    print(f"\nload (1 min) before {load_before:.2f}, after {load_after:.2f} on {os.cpu_count()} cores")
    print(f"{'item':58} {'value':>22}  target")
    print(f"{'finish the run (eval_run_finalize, fresh process)':58} {finish['seconds']:>20.1f} s  < 15 s")
    print(f"{'  … its peak RSS':58} {finish['rss_mb']:>19.0f} MB  < 500 MB")
    for label, d in (("first", download_1), ("second", download_2)):
        print(f"{f'item-file download, {label} (fresh process)':58} {d['seconds']:>20.2f} s")
        print(f"{'  … bytes, peak RSS':58} {d['bytes'] / 1e6:>9.1f} MB, {d['rss_mb']:>5.0f} MB")
    print(f"\n{'page (user)':58} {'ms':>7} {'queries':>8} {'KB':>8}  < {TARGET_MS:.0f} ms")
    for row in pages:
        verdict = "ok" if row["ms"] < TARGET_MS and row["status"] == 200 else f"MISS ({row['status']})"
        print(
            f"{row['url'][:48] + ' (' + row['user'] + ')':58} {row['ms']:>7.1f} {row['queries']:>8} "
            f"{row['kb']:>8.1f}  {verdict}"
        )
    report = {"load": [load_before, load_after], "build": built, "finish": finish}
    report |= {"downloads": [download_1, download_2], "pages": pages}
    if args.subbenches:
        for script, extra in (
            ("metrics_cli.py", ["--repeat", "5"]),
            ("compile_bench.py", ["--database", "postgres", "--count", str(args.count)]),
            ("eval_throughput.py", []),
        ):
            print(f"\n=== bench/{script} {' '.join(extra)}")
            output = run_subbench(script, *extra, *(["--smoke"] if args.smoke else []))
            print(output)
            report[script] = output
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
