"""Compile 986 generated parents (≈3,300 probes) and print probes/s and the compile/render/DB split.

Run from the project root: ``.venv/bin/python bench/compile_bench.py [--count 986] [--seed 2027]
[--database sqlite|postgres]``. It generates a workspace, imports and compiles it in its own throwaway
database (``bench/_sandbox.py``: a temporary SQLite file by default), never the app's, whatever
``DATABASE_URL`` says. Workspace generation and import are timed but not part of the compile figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    add_sandbox_arguments(parser, database="sqlite")
    args = parser.parse_args()
    if args.smoke:
        args.count = 3
    open_sandbox("compile", args).start_django()
    from annotation.demo import generate_workspace
    from annotation.importers import import_kit_workspace
    from annotation.models import ParentProblem
    from probes.services import compile_run_create, compile_run_execute

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
    run = compile_run_create(actor=None, seed=args.seed, enqueue=False)
    started = time.perf_counter()
    run = compile_run_execute(run_id=run.pk)
    wall = time.perf_counter() - started
    probes = run.counts.get("probes", 0)
    t = run.timings
    print(
        f"compiled {run.counts.get('parents')} parents → {probes} probes "
        f"(T02-single {run.counts.get('T02-single', 0)}, T03-image {run.counts.get('T03-image', 0)}, "
        f"T03-text {run.counts.get('T03-text', 0)}), blocked groups {run.counts.get('blocked_groups', 0)}"
    )
    print(f"wall {wall:.2f} s = {probes / wall:.1f} probes/s")
    print(
        f"split: compile {t['compile_s']:.2f} s · render {t['render_s']:.2f} s · "
        f"database {t['db_s']:.2f} s · source load {t['load_s']:.2f} s"
    )


if __name__ == "__main__":
    main()
