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
# Debian's Chromium drives the browser tests; the baseline-ocr-nearest provider reads anchors with Debian's
# tesseract (scripts/system_packages.sh, shared with `make run`). A test lacking either fails, so both must be here.
source scripts/system_packages.sh
ensure_debian_package chromium chromium "the browser tests"
ensure_debian_package tesseract tesseract-ocr "the OCR baseline model and the debate's local OCR"

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
