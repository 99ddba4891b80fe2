#!/usr/bin/env bash
# mypy, strict, on the Django-free cores ([tool.mypy] in pyproject.toml). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# The django-stubs plugin imports physalign_site.settings, which refuses to load without
# DJANGO_SECRET_KEY unless DEBUG is on; the settings are only read for types here.
export DJANGO_DEBUG=1
exec .venv/bin/mypy kit probes/compiler probes/release_layout.py evaluation/parsing.py \
  evaluation/scoring.py evaluation/metrics.py evaluation/conditions.py solving/debate \
  review/kit_decisions.py review/audit_stats.py llm physalign_studio evaluation/inspect_outputs.py
