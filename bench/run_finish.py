"""Finishing a large evaluation run, downloading its item file, and the run pages at that size.

Run from the project root: ``.venv/bin/python bench/run_finish.py [--requests 76068] [--keep-db bench_NAME]``
(``--smoke``: 300 requests, SQLite). It writes only to its sandbox (``bench/_sandbox.py``; PostgreSQL by
default, as measured in the issue). The script

1. generates and compiles synthetic parents until there are ``requests / (models × 3)`` probes (a kept
   database keeps them), and plans one run of ``--models`` simulated models × raw, no_image, reordered on
   them (the paper's 6 models × 3 conditions × 4,226 probes = 76,068 requests) through ``eval_run_create``;
2. ends every row without calling a model: each row gets a raw output (the gold answer, a wrong one, one
   that does not parse, or none: infra_missing), is scored by the real scorer and stored in chunks by the
   chunk executor's own store (``_store_results``: rows, scores and progress counters in one transaction);
   then ``ANALYZE`` (PostgreSQL);
3. in a fresh process, times ``eval_run_finalize`` (items streamed once into the metrics and the item file;
   snapshots) and reports that process's peak RSS;
4. in fresh processes, times downloads of the item file and a rescore: served after the finish, the rescore
   (every score, the counters, the metrics and the item file again), then, with the run's file cleared as
   for a run scored before item files were kept, built on the first download and served on the second
   (time, bytes, peak RSS of each);
5. prints the median server time (test client, ``--repeat`` times) and query count of the runs list, the run
   detail, the progress fragment, the run items page (first page and a late one, by key), and the API list
   and detail.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._fixtures import ensure_probes  # noqa: E402
from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402

CONDITIONS = ["raw", "no_image", "reordered"]
RUN_NAME = "bench run finish"
STORE_CHUNK = 2000


def _answers(probe) -> tuple[str, str]:
    """A probe's gold answer and a wrong one (another candidate), as a model would write them."""
    key = probe.key.key
    binding = key["response_contract"]["binding_key"]
    gold = probe.key.gold_aliases
    wrong = [a for a in sorted(key["candidate_map"]) if a not in gold] or gold
    read = {"read": key["read_targets"][0]["expected"]} if key.get("read_targets") else {}
    return json.dumps({binding: gold[0], **read}), json.dumps({binding: wrong[0], **read})


def _end_rows(run) -> float:
    """End every row of ``run`` with a scored raw output through the executor's store; returns seconds."""
    from decimal import Decimal

    from django.db import transaction

    from evaluation.models import EvalRequest
    from evaluation.runs.execution import _store_results
    from evaluation.runs.scores import score_of

    started = time.perf_counter()
    ids = list(run.requests.order_by("pk").values_list("pk", flat=True))
    answers: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), STORE_CHUNK):
        rows = list(
            EvalRequest.objects.filter(pk__in=ids[start : start + STORE_CHUNK])
            .select_related("probe__key")
            .defer("probe__raw_view", "probe__gold_view", "probe__raw_messages", "probe__gold_messages")
            .order_by("pk")
        )
        done = []
        for row in rows:
            if row.probe_id not in answers:
                answers[row.probe_id] = _answers(row.probe)
            good, wrong = answers[row.probe_id]
            kind = (row.pk * 2654435761) % 100  # a fixed mix: 60 % right, 25 % wrong, 10 % garbage, 5 % lost
            row.attempts, row.finish_reason, row.latency_ms, row.request_hash = [], "stop", 50, ""
            if kind < 95:
                row.status, row.provider_status = EvalRequest.Status.COMPLETED, "completed"
                row.raw_output = (
                    good if kind < 60 else wrong if kind < 85 else "I think it is the second one."
                )
                row.input_tokens, row.output_tokens = 900 + kind, 12
                row.cost_usd = Decimal("0.00283") + Decimal(kind) / Decimal(10**6)
            else:
                row.status, row.provider_status, row.raw_output = (
                    EvalRequest.Status.INFRA_MISSING,
                    "failed",
                    None,
                )
                row.error = "HTTP 503"
            done.append((row, score_of(row)))
        with transaction.atomic():
            _store_results(done, token=None)
        print(f"  ended {min(start + STORE_CHUNK, len(ids)):,} / {len(ids):,} rows", end="\r", flush=True)
    print()
    return time.perf_counter() - started


def _analyze() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table in ("evaluation_evalrequest", "evaluation_itemscore", "evaluation_evalrun", "probes_probe"):
            cursor.execute(f"ANALYZE {table}")


def _admin():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission

    user, _ = get_user_model().objects.get_or_create(username="bench-boss")
    user.groups.add(Group.objects.get_or_create(name="admin")[0])
    # the item file tells each probe's target: a key holder downloads it
    user.user_permissions.add(Permission.objects.get(codename="view_private_mapping"))
    return get_user_model().objects.get(pk=user.pk)


def build(args: argparse.Namespace) -> int:
    """The run of ``--requests`` ended rows (reused when a kept database already has it)."""
    from evaluation.models import EvalRequest, EvalRun
    from evaluation.runs import eval_run_create
    from models_registry.models import ModelConfig

    per_model = len(CONDITIONS)
    probes = -(-args.requests // (args.models * per_model))
    existing = EvalRun.objects.filter(name=RUN_NAME, total=probes * args.models * per_model).first()
    if existing is not None and not existing.requests.exclude(status__in=EvalRequest.TERMINAL).exists():
        print(f"reusing run {existing.pk} ({existing.total:,} ended requests)")
        return existing.pk
    EvalRun.objects.filter(name=RUN_NAME).delete()
    ensure_probes(probes, args.seed)
    names = []
    for m in range(args.models):
        config, _ = ModelConfig.objects.update_or_create(
            name=f"bench-sim-{m}",
            defaults={"provider": "simulated", "model": "simulated-bench", "extra": {"seed": 100 + m}},
        )
        names.append(config.name)
    started = time.perf_counter()
    run = eval_run_create(
        model_names=names,
        conditions=CONDITIONS,
        probe_filter={"limit": probes},
        name=RUN_NAME,
        start=False,
        options={"resamples": args.resamples},
    )
    planned = time.perf_counter() - started
    ended = _end_rows(run)
    EvalRun.objects.filter(pk=run.pk).update(status=EvalRun.Status.RUNNING)
    _analyze()
    print(
        f"built run {run.pk}: {run.total:,} requests on {probes:,} probes (plan {planned:.1f} s, end rows {ended:.1f} s)"
    )
    return run.pk


# ------------------------------------------------------------------------------------------------ children
def _child(kind: str, run_id: int) -> dict[str, float]:
    """``kind`` in a fresh process (this sandbox's environment), its report with its peak RSS."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--run", str(run_id)],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"child {kind} failed:\n{out.stdout}\n{out.stderr}")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["process_s"] = time.perf_counter() - started
    return report


def _rss_mb(field: str = "VmHWM") -> float:
    """This process's peak (``VmHWM``) or current (``VmRSS``) resident set in MB. Not ``ru_maxrss``: Linux
    keeps that across exec, so a child would report at least the parent's peak (the fixture build)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_main(kind: str, run_id: int) -> None:
    import django

    django.setup()
    from django.test import Client

    from evaluation.models import EvalRun
    from evaluation.runs import eval_run_finalize

    report: dict[str, float] = {"rss_start_mb": _rss_mb("VmRSS")}
    if kind == "finalize":
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.RUNNING)
        started = time.perf_counter()
        run = eval_run_finalize(run_id=run_id)
        report["seconds"] = time.perf_counter() - started
        assert run is not None and run.status == EvalRun.Status.COMPLETED, run and run.status
        report["file_bytes"] = float(run.items_file.size)
    elif kind == "rescore":
        from evaluation.runs import eval_run_rescore

        run = EvalRun.objects.get(pk=run_id)
        started = time.perf_counter()
        result = eval_run_rescore(run=run)
        report["seconds"] = time.perf_counter() - started
        report["changed"] = float(result["changed_items"])
        report["file_bytes"] = float(EvalRun.objects.get(pk=run_id).items_file.size)
    else:  # download
        client = Client()
        client.force_login(_admin())
        client.get(f"/runs/{run_id}/progress/")  # warm: URL conf, templates (not the runs list: it plans)
        started = time.perf_counter()
        response = client.get(f"/runs/{run_id}/download/items/")
        assert response.status_code == 200, response.status_code
        size = sum(len(chunk) for chunk in response) if response.streaming else len(response.content)
        report["seconds"] = time.perf_counter() - started
        report["bytes"] = float(size)
    report["rss_mb"] = _rss_mb()
    print(json.dumps(report))


# ------------------------------------------------------------------------------------------------ pages
def _pages(run_id: int) -> list[tuple[str, str]]:
    from evaluation.models import EvalRequest

    pks = list(EvalRequest.objects.filter(run_id=run_id).order_by("pk").values_list("pk", flat=True))
    late = pks[int(len(pks) * 0.985)]  # about page 1,500 of 50 at 76k rows
    return [
        ("runs list", "/runs/"),
        ("run detail (results)", f"/runs/{run_id}/"),
        ("progress fragment", f"/runs/{run_id}/progress/"),
        ("run items, first page", f"/runs/{run_id}/items/"),
        (f"run items, late page (after={late})", f"/runs/{run_id}/items/?after={late}"),
        ("run items, filtered", f"/runs/{run_id}/items/?condition=no_image&status=unparseable"),
        ("API runs list", "/api/eval/runs/"),
        ("API run detail", f"/api/eval/runs/{run_id}/"),
    ]


def measure_pages(run_id: int, repeat: int) -> list[tuple[str, float, int, int]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(_admin())
    rows = []
    for label, url in _pages(run_id):
        client.get(url)  # warm
        times, queries, size = [], 0, 0
        for _ in range(repeat):
            with CaptureQueriesContext(connection) as ctx:
                started = time.perf_counter()
                response = client.get(url)
                times.append(1000 * (time.perf_counter() - started))
            assert response.status_code == 200, (url, response.status_code)
            queries, size = len(ctx.captured_queries), len(response.content)
        rows.append((label, statistics.median(times), queries, size))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=76068)
    parser.add_argument("--models", type=int, default=6)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7, help="page requests per page (median)")
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, default=0, help=argparse.SUPPRESS)
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.run)
        return
    if args.smoke:
        args.requests, args.models, args.resamples, args.repeat = 300, 2, 50, 2
        if "--database" not in sys.argv:
            args.database = "sqlite"

    sandbox = open_sandbox("finish", args)
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-not-for-production")
    os.environ.update(
        {
            "DJANGO_SECURE_SSL": "false",
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "DJANGO_ALLOWED_HOSTS": "testserver",
        }
    )
    sandbox.start_django()
    from evaluation.models import EvalRun

    run_id = build(args)
    run = EvalRun.objects.get(pk=run_id)
    finish = _child("finalize", run_id)
    served = _child("download", run_id)
    rescore = _child("rescore", run_id)
    EvalRun.objects.get(pk=run_id).items_file.delete(save=False)
    EvalRun.objects.filter(pk=run_id).update(items_file="")  # as a run scored before item files were kept
    built = _child("download", run_id)
    again = _child("download", run_id)
    pages = measure_pages(run_id, args.repeat)

    print(
        f"run finish: {run.total:,} requests, {args.models} models × {len(CONDITIONS)} conditions, "
        f"{args.resamples} resamples, {sandbox.database_name}, {os.cpu_count()} cores, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"  finish (eval_run_finalize: items → metrics + item file, snapshots) {finish['seconds']:.2f} s, "
        f"peak RSS {finish['rss_mb']:.0f} MB (after start-up {finish['rss_start_mb']:.0f} MB), "
        f"item file {finish['file_bytes'] / 1e6:.1f} MB"
    )
    print(
        f"  rescore (every item score, counters, metrics, item file rebuilt) {rescore['seconds']:.2f} s, "
        f"{rescore['changed']:.0f} scores changed, peak RSS {rescore['rss_mb']:.0f} MB, "
        f"item file {rescore['file_bytes'] / 1e6:.1f} MB"
    )
    for label, report in (
        ("download, served after the finish", served),
        ("download #1, built (run scored before item files)", built),
        ("download #2, served", again),
    ):
        print(
            f"  {label}: {report['seconds'] * 1000:.0f} ms, {report['bytes'] / 1e6:.1f} MB, "
            f"peak RSS {report['rss_mb']:.0f} MB (after start-up {report['rss_start_mb']:.0f} MB)"
        )
    print(f"  pages (median of {args.repeat}, server time, test client, DEBUG on):")
    for label, ms, queries, size in pages:
        print(f"    {label:<42} {ms:7.1f} ms  {queries:3d} queries  {size / 1000:7.1f} KB")


if __name__ == "__main__":
    main()
