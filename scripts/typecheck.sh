#!/usr/bin/env bash
# mypy over every app ([tool.mypy] in pyproject.toml). CI runs exactly this (via scripts/lint.sh).
#
# One run covers both checks: the Django-free cores (kit, llm, physalign_studio, probes.compiler, ...; the first
# [[tool.mypy.overrides]]) are held to --strict's flags, flag by flag; every other module is checked non-strictly,
# so a call to a function or a use of an attribute that does not exist fails in every module, not only in a core.
set -euo pipefail
cd "$(dirname "$0")/.."

# The django-stubs plugin imports physalign_site.settings, which refuses to load without
# DJANGO_SECRET_KEY unless DEBUG is on; the settings are only read for types here.
export DJANGO_DEBUG=1
exec .venv/bin/mypy annotation audit evaluation home models_registry physalign_site physalign_root probes review run_engine \
  solving kit llm physalign_studio
