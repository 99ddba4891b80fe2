#!/usr/bin/env bash
# Keeps the tree from drifting: style and complexity (ruff), the import contracts (lint-imports: the layers of
# DESIGN.md §2, and the pure cores free of Django and of the apps), and types (mypy, strict on the pure cores).
# .pre-commit-config.yaml runs these same four commands, one hook each: a change here is a change there.
set -euo pipefail
cd "$(dirname "$0")/.."

.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/lint-imports
scripts/typecheck.sh
