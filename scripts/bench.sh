#!/usr/bin/env bash
# Run every benchmark under bench/ (files starting with "_" are helpers). Each one writes only to its own
# throwaway database, Redis database and folders (bench/_sandbox.py), so nothing set here or in the
# environment can reach the app's data. Extra arguments go to every benchmark, e.g. --smoke for the
# smallest sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/services.sh
for b in bench/[!_]*.py; do
  echo "== $b"
  .venv/bin/python "$b" "$@"
done
