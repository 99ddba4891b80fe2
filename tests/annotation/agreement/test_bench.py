"""``bench/agreement_demo.py --smoke`` runs in its own sandbox and shows every perturbation caught."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_agreement_demo_bench_catches_each_perturbation():
    result = subprocess.run(
        [sys.executable, "bench/agreement_demo.py", "--smoke"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "[sandbox] agreement_demo: SQLite" in output
    assert "demo: 10 generated parents (seed 2027), all double-annotated" in output
    assert len(re.findall(r"^  caught: ", output, flags=re.M)) == 14 and "FAILED" not in output
    control = output.split("second_control (", 1)[1].split("\n\n", 1)[0]
    assert "mean IoU 1.0000" in control and "unit 1.0000" in control
    assert re.search(r"second_drop: recall 0\.\d{4} = 1 − 2/\d+", output)
    assert re.search(r"second_unit: unit 0\.\d{4} = 1 − 2/\d+", output)
