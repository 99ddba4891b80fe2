"""Time ``generate_workspace`` at the paper's size (986 parent problems).

Run from the project root: ``.venv/bin/python bench/bench_generate.py [--count 986] [--seed 2027]``. It
writes only to a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.demo import generate_workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes: checks the benchmark runs")
    args = parser.parse_args()
    if args.smoke:
        args.count = 3
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = generate_workspace(Path(tmp) / "ws", count=args.count, seed=args.seed)
        seconds = time.perf_counter() - start
    print(
        f"generate_workspace count={summary.count} seed={summary.seed}: {seconds:.2f} s, "
        f"{summary.files} files ({summary.files / seconds:.0f} files/s), "
        f"{summary.bytes_written / 1e6:.1f} MB, {summary.count / seconds:.0f} problems/s"
    )
    print(f"families: {summary.families}  languages: {summary.languages}")


if __name__ == "__main__":
    main()
