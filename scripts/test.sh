#!/usr/bin/env bash
# The whole test suite against real PostgreSQL, Redis and Celery, and Debian Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/physalign}"
export CELERY_BROKER_URL="${TEST_CELERY_BROKER_URL:-redis://127.0.0.1:6379/15}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/14}"
export DJANGO_SECRET_KEY="${DJANGO_SECRET_KEY:-test-only-secret-key-not-for-production}"
export DJANGO_SECURE_SSL=false
export CELERY_TASK_ALWAYS_EAGER=true
export PHYSALIGN_REQUIRE_SERVICES=1   # a test that lacks PostgreSQL, Redis or Chromium fails, never skips
# Debian's Chromium drives the browser tests; tesseract-ocr arrives with the model-provider issue.
if ! command -v chromium >/dev/null 2>&1; then
  echo "Installing Debian chromium for the browser tests…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# The baseline-ocr-nearest provider reads anchors with Debian's tesseract.
if ! command -v tesseract >/dev/null 2>&1; then
  echo "Installing Debian tesseract-ocr for the OCR baseline…"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr >/dev/null
fi

.venv/bin/python manage.py makemigrations --check --dry-run >/dev/null

# In parallel on the machine's cores (at most 4: physalign_site/test_settings.py gives each pytest-xdist worker
# its own Redis databases; pytest-django gives each its own test database, tests/conftest.py its own media
# root per test). PYTEST_WORKERS=1 runs in one process; an explicit -n or -p no:xdist in the arguments wins.
parallel=()
if [[ " $* " != *" -n "* && " $* " != *" -n="* && " $* " != *"no:xdist"* ]]; then
  workers="${PYTEST_WORKERS:-$(nproc)}"
  (( workers > 4 )) && workers=4
  (( workers > 1 )) && parallel=(-n "$workers" --dist worksteal)
fi
exec .venv/bin/pytest "${parallel[@]}" "$@"
