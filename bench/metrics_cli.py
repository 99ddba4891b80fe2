"""``manage.py metrics --items`` as a whole process on a paper-sized item file.

Run from the project root: ``.venv/bin/python bench/metrics_cli.py [--repeat 5] [--smoke]``. Writes a
76,068-item file — what a run of 6 models × 3 conditions (raw, no_image, reordered: each on every probe)
× 4,226 probes over 986 parents gives — into its sandbox folder (``bench/_sandbox.py``; the command needs
no database, the sandbox only points the settings at a throwaway SQLite file), then times:

- the whole ``manage.py metrics --items ITEMS --output OUT`` process, wall clock like ``time`` (target
  < 2 s), best and median of ``--repeat`` runs;
- one instrumented process that does what ``manage.py`` does, phase by phase: interpreter start-up and
  ``django.setup()``, loading the command, the system checks the command asks for (none when it declares
  ``requires_system_checks = []``), reading the file, computing, writing the output.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402

CONDITIONS = ("raw", "no_image", "reordered")

# One child process that replays execute_from_command_line(["manage.py", "metrics", ...]) with timings.
PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import django
django.setup()
t_setup = time.perf_counter()
from django.core.management import load_command_class
command = load_command_class("evaluation", "metrics")
t_load = time.perf_counter()
tags = command.requires_system_checks
if tags:
    command.check() if tags == "__all__" else command.check(tags=tags)
t_checks = time.perf_counter()
from evaluation.metrics import compute_metrics, read_items
import gc
gc.disable()  # as the command does around reading and computing
items = read_items(sys.argv[1])
t_read = time.perf_counter()
result = compute_metrics(items, resamples=int(sys.argv[3]))
t_compute = time.perf_counter()
gc.enable()
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    json.dump(result, handle, indent=1, sort_keys=True, ensure_ascii=False)
    handle.write("\n")
t_write = time.perf_counter()
print(json.dumps({
    "setup": t_setup - t0, "load": t_load - t_setup, "checks": t_checks - t_load,
    "read": t_read - t_checks, "compute": t_compute - t_read, "write": t_write - t_compute,
    "inside": t_write - t0, "items": len(items),
}))
"""


def paper_items(*, models: int = 6, probes: int = 4226, parents: int = 986, seed: int = 16) -> list[dict]:
    """Item-file records (``evaluation.metrics.ITEM_FIELDS``, in ``run_items()`` order of keys)."""
    rng = random.Random(seed)
    catalogue = []
    for n in range(probes):
        parent = f"PA-{n:05d}" if n < parents else f"PA-{rng.randrange(parents):05d}"
        task = "T02" if rng.random() < 0.55 else "T03"
        interface = "T02-single" if task == "T02" else rng.choice(["T03-image", "T03-text"])
        in_l = interface == "T03-image" and rng.random() < 0.45
        in_p = in_l and rng.random() < 0.6
        pools = ["B"] + (["L"] if in_l else []) + (["P"] if in_p else [])
        k = rng.randint(2, 6)
        nearest = rng.choice(["correct", "wrong", "wrong", "not_applicable"])
        catalogue.append(
            (f"PAQ-{n:06d}", parent, task, interface, pools, in_l, k, rng.randint(1, k), nearest)
        )
    items = []
    for m in range(models):
        skill = 0.4 + 0.08 * m
        for condition in CONDITIONS:
            for probe_id, parent, task, interface, pools, in_l, k, aliases, nearest in catalogue:
                roll = rng.random()
                status = (
                    "infra_missing"
                    if roll < 0.002
                    else "unparseable"
                    if roll < 0.01
                    else "refusal"
                    if roll < 0.012
                    else "truncated"
                    if roll < 0.015
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
                        "model": f"sim-model-{m}",
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
                        "gold_alias_count": aliases,
                        "nearest": nearest,
                    }
                )
    return items


def write_items(path: Path, items: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="project tree whose manage.py is timed, e.g. an earlier commit unpacked with "
        "`git archive COMMIT | tar -x -C DIR` (before/after on the same machine and load)",
    )
    add_sandbox_arguments(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    box = open_sandbox("metrics_cli", args)
    items = paper_items(probes=300, parents=80) if args.smoke else paper_items()
    items_path, out_path = box.root / "items.jsonl", box.root / "metrics.json"
    write_items(items_path, items)
    print(
        f"items: {len(items):,} (6 models × {len(CONDITIONS)} conditions × "
        f"{len(items) // 6 // len(CONDITIONS):,} probes), {items_path.stat().st_size / 1e6:.1f} MB; "
        f"load {os.getloadavg()[0]:.2f} / {os.cpu_count()} cores"
    )
    python = sys.executable
    command = [python, "manage.py", "metrics", "--items", str(items_path), "--output", str(out_path)]
    command += ["--resamples", str(args.resamples)]
    walls, cpus = [], []
    for _ in range(args.repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, cwd=args.tree, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    whole = out_path.read_bytes()

    bare = []
    for _ in range(max(1, args.repeat // 2)):
        started = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    started = time.perf_counter()
    probe_out = box.root / "metrics_phases.json"
    done = subprocess.run(
        [python, "-c", PHASES, str(items_path), str(probe_out), str(args.resamples)],
        cwd=args.tree,
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    same = probe_out.read_bytes() == whole

    print(
        f"manage.py metrics, whole process: best {min(walls):.2f} s, median {statistics.median(walls):.2f} s "
        f"of {len(walls)} (target < 2 s) → {'PASS' if min(walls) < 2 else 'FAIL'}; CPU (user + sys) "
        f"best {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s; tree {args.tree}"
    )
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print("one instrumented process, by phase:")
    rows = [
        ("interpreter start-up", wall - phases["inside"], f"(bare python: {min(bare):.2f} s)"),
        ("django.setup()", phases["setup"], ""),
        ("load the command", phases["load"], ""),
        ("system checks", phases["checks"], "(none when requires_system_checks = [])"),
        ("read the item file", phases["read"], f"({phases['items']:,} items)"),
        ("compute_metrics", phases["compute"], f"({args.resamples} resamples)"),
        ("write the output", phases["write"], ""),
        ("total", wall, ""),
    ]
    for name, seconds, note in rows:
        print(f"  {name:<22} {seconds:6.2f} s {note}")
    print(f"instrumented output identical to the command's: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
