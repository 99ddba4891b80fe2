"""What several benchmarks share: a probe fixture compiled from generated parents, and stopping worker processes.

Call these only after ``open_sandbox(...).start_django()`` (``bench/_sandbox.py``): they write to the sandbox.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path


def ensure_probes(needed: int, seed: int) -> None:
    """Compile generated parents until the database holds ``needed`` live probes (a kept database keeps them)."""
    from annotation.demo import generate_workspace
    from annotation.importers import import_kit_workspace
    from probes.models import Probe
    from probes.services import compile_run_create, compile_run_execute

    have = Probe.objects.exclude(state__in=["superseded", "rejected"]).count()
    if have >= needed:
        return
    count = int((needed - have) / 3.0) + 20  # the generator yields ≈3.4 probes per parent
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        generate_workspace(Path(tmp) / "ws", count=count, seed=seed + have)
        import_kit_workspace(workspace=Path(tmp) / "ws", dataset_root=None)
    compile_run_execute(run_id=compile_run_create(actor=None, seed=seed, enqueue=False).pk)
    have = Probe.objects.exclude(state__in=["superseded", "rejected"]).count()
    print(
        f"fixture: {have} probes ({time.perf_counter() - started:.0f} s; --keep-db keeps them for later runs)",
        flush=True,
    )
    if have < needed:
        raise SystemExit(f"only {have} probes after compiling; need {needed}")


def stop_processes(processes: Iterable[subprocess.Popen]) -> None:
    """Terminate each process still running, wait up to 30 s for each, then kill what is left."""
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
