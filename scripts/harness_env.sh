#!/usr/bin/env bash
# The harness environment: a venv, apart from the app's .venv, with the evaluation harnesses our exports are
# read by (lmms-eval 0.7.3 and VLMEvalKit, both needing torch, which the app never installs), for
#   PHYSALIGN_HARNESS_PYTHON=DIR/bin/python scripts/test.sh tests/probes/test_exports_in_harnesses.py
# (tests/probes/harness_probe.py runs inside it). Everything comes from PyPI by name:
#   lmms-eval==0.7.3      lmms-eval's TaskManager, request building and simple_evaluate.
#   nvidia-vlmeval==26.3  VLMEvalKit (package `vlmeval`, its build_dataset, datasets and inference loop) as NVIDIA
#                         publishes it on PyPI; the upstream project is not on PyPI (the `*-vlmevalkit` names
#                         there are placeholders: never install them).
#   filelock<4            lmms-eval 0.7.3's evaluator imports filelock._api, gone in filelock 4.
# About 7.5 GB (torch and its CUDA wheels) and 12 minutes on an empty pip cache.
#
# Usage: scripts/harness_env.sh [DIR]   (default var/harness-venv; run again to update, nothing else is touched)
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-var/harness-venv}"
python="${HARNESS_BASE_PYTHON:-}"
if [[ -z "$python" ]]; then
  # the interpreter the app's venv was made from (Python 3.12), else python3.12 on PATH
  base=$(.venv/bin/python -c 'import sys; print(sys.base_prefix)' 2>/dev/null || true)
  if [[ -n "$base" && -x "$base/bin/python3.12" ]]; then
    python="$base/bin/python3.12"
  else
    python=$(command -v python3.12 || true)
  fi
fi
if [[ -z "$python" ]]; then
  echo "harness_env: no Python 3.12 found (set HARNESS_BASE_PYTHON)" >&2
  exit 1
fi

if [[ ! -x "$target/bin/python" ]]; then
  echo "harness_env: creating $target with $python"
  "$python" -m venv "$target"
fi
started=$SECONDS
"$target/bin/python" -m pip install --quiet --upgrade pip
"$target/bin/python" -m pip install --quiet "lmms-eval==0.7.3" "nvidia-vlmeval==26.3" "filelock<4"
# (no `pip check`: it flags decord's wheel, which VLMEvalKit imports only for video datasets, as "not supported on
# this platform"; the imports below are the check that matters)
"$target/bin/python" - <<'EOF'
import importlib.metadata as md

import lmms_eval.evaluator  # noqa: F401
from lmms_eval.tasks import TaskManager  # noqa: F401
from vlmeval.dataset import build_dataset  # noqa: F401
from vlmeval.inference import infer_data  # noqa: F401

print("harness_env:", ", ".join(f"{p} {md.version(p)}" for p in ("lmms_eval", "nvidia-vlmeval", "torch", "datasets")))
EOF
echo "harness_env: ready in $((SECONDS - started)) s ($(du -sh "$target" | cut -f1)); run the harness tests with"
echo "  PHYSALIGN_HARNESS_PYTHON=$(cd "$target" && pwd)/bin/python scripts/test.sh tests/probes/test_exports_in_harnesses.py"
