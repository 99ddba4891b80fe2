#!/usr/bin/env bash
# Keeps the tree from drifting (issue 14): style, the layers contract of DESIGN.md §2, and types of the pure cores.
set -euo pipefail
cd "$(dirname "$0")/.."

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports
scripts/typecheck.sh
