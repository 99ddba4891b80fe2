"""Metrics for a paper-sized run: 6 models × 3,341 probes × 4 conditions, 2,000-resample CIs.

Run from the project root: ``.venv/bin/python bench/metrics_bench.py [--threads 2]``. Pure numpy, no
database. Prints the item count and the wall time of ``compute_metrics`` (target < 2 s on 2 cores)
and, separately, the time to read the same items back from a JSONL file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def synthetic_items(*, models: int = 6, probes: int = 3341, parents: int = 1150, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    catalogue = []
    for n in range(probes):
        parent = f"P{rng.randrange(parents):05d}" if n >= parents else f"P{n:05d}"
        task = "T02" if rng.random() < 0.55 else "T03"
        interface = "T02-single" if task == "T02" else rng.choice(["T03-image", "T03-text"])
        in_l = interface == "T03-image" and rng.random() < 0.45
        in_p = rng.random() < 0.35
        pools = ["B"] + (["L"] if in_l else []) + (["P"] if in_p else [])
        k = rng.randint(2, 6)
        nearest = rng.choice(["correct", "wrong", "wrong", "not_applicable"])
        catalogue.append((f"PAQ-{n:06d}", parent, task, interface, pools, in_l, in_p, k, nearest))
    items = []
    for m in range(models):
        skill = 0.45 + 0.07 * m
        for condition in ("raw", "gold", "no_image", "reordered"):
            for probe_id, parent, task, interface, pools, in_l, in_p, k, nearest in catalogue:
                if condition == "gold" and not in_p:
                    continue
                roll = rng.random()
                status = (
                    "infra_missing"
                    if roll < 0.002
                    else "unparseable"
                    if roll < 0.01
                    else "truncated"
                    if roll < 0.013
                    else "completed"
                )
                if status == "infra_missing":
                    c = g = None
                else:
                    g = int(status == "completed" and rng.random() < skill)
                    c = (
                        int(status == "completed" and rng.random() < 0.8)
                        if condition == "raw" and in_l
                        else None
                    )
                items.append(
                    {
                        "model": f"model-{m}",
                        "condition": condition,
                        "probe_id": probe_id,
                        "parent_id": parent,
                        "task_id": task,
                        "interface": interface,
                        "pools": pools,
                        "status": status,
                        "C": c,
                        "G": g,
                        "K": k,
                        "gold_alias_count": 1,
                        "nearest": nearest,
                    }
                )
    return items


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes: checks the benchmark runs")
    args = parser.parse_args()
    if args.smoke:
        args.resamples, args.repeat = 20, 1
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    from evaluation.metrics import compute_metrics, read_items

    items = synthetic_items(probes=200, parents=80) if args.smoke else synthetic_items()
    print(
        f"items: {len(items)} (6 models × {'200' if args.smoke else '3,341'} probes × 4 conditions; gold only on P)"
    )
    timings = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = compute_metrics(items, resamples=args.resamples, seed=2027)
        timings.append(time.perf_counter() - started)
    print(
        f"parents: {result['bootstrap']['clusters']}, bootstrap scopes (each its own clusters): "
        f"{len(result['bootstrap']['scopes'])}, resamples: {args.resamples}, threads: {args.threads}"
    )
    print(
        f"compute_metrics: best {min(timings):.3f} s, mean {sum(timings) / len(timings):.3f} s "
        f"(target < 2 s) → {'PASS' if min(timings) < 2 else 'FAIL'}"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        for item in items:
            handle.write(json.dumps(item) + "\n")
    started = time.perf_counter()
    read_items(handle.name)
    print(f"read item file ({len(items)} lines): {time.perf_counter() - started:.3f} s")
    os.unlink(handle.name)
    gacc = result["models"]["model-0"]["GAcc"]
    print(
        f"example model-0 GAcc: value={gacc['value']} ci={gacc['ci']} lower={gacc['lower']:.4f} "
        f"upper={gacc['upper']:.4f}"
    )


if __name__ == "__main__":
    main()
