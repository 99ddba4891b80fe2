"""How big and how slow the harness exports of a release are, on the demo and at the paper's scale.

Run from the project root::

    .venv/bin/python bench/export_bench.py --keep-db bench_exports     # 986 parents (built once, then reused)
    .venv/bin/python bench/export_bench.py --demo                      # the demo release (25 parents)
    .venv/bin/python bench/export_bench.py --smoke                     # 40 parents: checks it runs

It builds, on its own PostgreSQL database (``bench/_sandbox.py``) with the app's own services: generated
parents (seed 2027), ``import_kit_workspace``, one compile run, then a Kit release of the test split (the
probes are approved first with their prospective packets through ``probe_record_review``; an export's cost
depends on the probes and views, not on who approved them). ``--demo`` instead loads the demo data
(``manage.py load_demo``) and releases its development split.

Then each export runs in a fresh child process and reports its wall time, peak RSS (VmHWM) and the bytes it
wrote: the Hugging Face dataset (``probes.exports.hf.export_hf``: parquet shards + card, with the leakage
scan on the written files and on the rows read back), the VLMEvalKit TSVs and the lmms-eval task folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._sandbox import add_sandbox_arguments, open_sandbox  # noqa: E402
from bench.paper_scale import _peak_rss_mb  # noqa: E402

KINDS = ("hf", "vlmevalkit", "lmms_eval")


def _build(count: int, seed: int, *, demo: bool) -> dict[str, float]:
    from annotation.models import ParentProblem
    from probes.services import compile_run_create, compile_run_execute

    timings: dict[str, float] = {}
    if ParentProblem.objects.exists():
        return timings
    started = time.perf_counter()
    if demo:
        from django.core.management import call_command

        call_command("load_demo", verbosity=0)
    else:
        from annotation.demo import generate_workspace
        from annotation.importers import import_kit_workspace

        with tempfile.TemporaryDirectory() as tmp:
            generate_workspace(Path(tmp) / "ws", count=count, seed=seed)
            import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
    timings["import_s"] = time.perf_counter() - started
    from probes.models import Probe

    if not Probe.objects.exists():
        started = time.perf_counter()
        compile_run_execute(run_id=compile_run_create(actor=None, seed=seed, enqueue=False).pk)
        timings["compile_s"] = time.perf_counter() - started
    return timings


def _release(split: str, out: Path) -> tuple[Any, float]:
    from probes.models import Release
    from probes.releases import RELEASE_SPLITS, release_export

    found = Release.objects.filter(split=split).order_by("-pk").first()
    if found is not None and Path(found.path).exists():
        return found, 0.0
    from physalign_site.errors import ApplicationError
    from probes.models import Probe

    _approve(split)
    started = time.perf_counter()
    try:
        release = release_export(split=split, output=out, actor=None)
    except ApplicationError as exc:
        # the release's own leakage scan refused some parents (e.g. a generated answer that a reading repeats):
        # leave those parents out, as a release manager would, and say so
        refused = {
            m.group(1)
            for e in exc.extra.get("errors", [])
            if (m := re.search(r"\((PAQ-[0-9a-f]+)\)", e["detail"]))
        }
        if exc.code != "RELEASE_SELF_VALIDATION_FAILED" or not refused:
            raise
        parents = set(
            Probe.objects.filter(logical_probe_id__in=refused).values_list("parent__problem_id", flat=True)
        )
        kept = (
            set(
                Probe.objects.filter(split=RELEASE_SPLITS[split]).values_list("parent__problem_id", flat=True)
            )
            - parents
        )
        print(
            f"  the release scan refused {len(refused)} probes of {len(parents)} parents: left out",
            flush=True,
        )
        started = time.perf_counter()
        release = release_export(split=split, output=out, actor=None, problem_ids=kept)
    return release, time.perf_counter() - started


def _approve(split: str) -> None:
    """Approve every pending probe of the split with its prospective packet (as a reviewer would), once."""
    from probes.models import Probe
    from probes.releases import RELEASE_SPLITS
    from probes.services import probe_record_review

    pending = Probe.objects.filter(split=RELEASE_SPLITS[split]).exclude(
        state__in=[Probe.State.APPROVED, Probe.State.SUPERSEDED, Probe.State.REJECTED]
    )
    started = time.perf_counter()
    n = 0
    for probe in pending.select_related("key").iterator(chunk_size=500):
        ids = probe.key.key["packet_plan"]["observation_ids"]
        probe_record_review(
            probe=probe,
            actor=None,
            state="approved",
            packet_state="approved_nonempty" if ids else "approved_empty",
            review_target_root=probe.review_target_root,
        )
        n += 1
    if n:
        print(
            f"  approved {n:,} probes of the {split} split ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


def _size(path: Path) -> int:
    return (
        sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        if path.is_dir()
        else path.stat().st_size
    )


def child_main(kind: str, release_pk: int, output: str) -> None:
    import django

    django.setup()
    from probes.exports.hf import export_hf, release_sources
    from probes.exports.lmms_eval import write_lmms_eval
    from probes.exports.public import read_public
    from probes.exports.vlmevalkit import write_vlmevalkit
    from probes.models import Release

    release = Release.objects.get(pk=release_pk)
    out = Path(output)
    started = time.perf_counter()
    if kind == "hf":
        export_hf(release=release, output=out)
    elif kind == "vlmevalkit":
        write_vlmevalkit(read_public(Path(release.path)), out)
    else:
        write_lmms_eval(read_public(Path(release.path)), out, release_sources(release))
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "bytes": _size(out), "rss_mb": _peak_rss_mb()}))


def _child(kind: str, release_pk: int, output: Path) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--release", str(release_pk), "--output", str(output)],
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"child {kind} failed:\n{done.stdout}\n{done.stderr}")
    report: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    report["process_s"] = time.perf_counter() - started
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=986)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--demo", action="store_true", help="the demo data's development release instead")
    parser.add_argument("--json", help="also write the measurements to this file")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--release", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    add_sandbox_arguments(parser, database="postgres")
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.release, args.output)
        return
    if args.smoke:
        args.count = 40
    box = open_sandbox("exports", args)
    box.start_django()
    built = _build(args.count, args.seed, demo=args.demo)
    from probes.models import Probe

    split = "development" if args.demo else "test"
    release_dir = Path(box.env["PHYSALIGN_VAR_DIR"]) / "bench-releases" / f"{split}-{int(time.time())}"
    release, release_s = _release(split, release_dir)
    kit_bytes = _size(Path(release.path))
    print(
        f"release {release.release_id}: {split}, {release.items.count():,} probes ({release.counts}); "
        f"{Probe.objects.exclude(state__in=['superseded', 'rejected']).count():,} live probes in all"
    )
    for name, value in built.items():
        print(f"  build {name}: {value:,.1f}")
    results: dict[str, Any] = {"release": release.release_id, "kit_bytes": kit_bytes, "release_s": release_s}
    results["counts"] = release.counts
    print(f"{'export':20} {'seconds':>9} {'process s':>10} {'MB written':>11} {'peak RSS MB':>12}")
    if release_s:
        print(f"{'Kit layout (release)':20} {release_s:>9.2f} {'':>10} {kit_bytes / 1e6:>11.1f} {'':>12}")
    else:
        print(f"{'Kit layout (release)':20} {'(reused)':>9} {'':>10} {kit_bytes / 1e6:>11.1f} {'':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            report = _child(kind, release.pk, Path(tmp) / kind)
            results[kind] = report
            print(
                f"{kind:20} {report['seconds']:>9.2f} {report['process_s']:>10.2f} "
                f"{report['bytes'] / 1e6:>11.1f} {report['rss_mb']:>12.0f}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
