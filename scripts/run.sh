#!/usr/bin/env bash
# Run PhysAlign Studio with the staged demo on embedded defaults: SQLite, Celery on kombu's
# filesystem:// broker (a real worker, no server), the offline models. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p var/log
scripts/local_env.sh  # .env with a generated secret key: the server, the worker and every manage.py command read it
export DJANGO_DEBUG="${DJANGO_DEBUG:-0}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"

# What the demo calls as programs, checked or installed as `make test` does (scripts/system_packages.sh). Without
# tesseract the demo still runs, and a run with the OCR baseline is refused at launch with that reason.
source scripts/system_packages.sh
ensure_debian_package tesseract tesseract-ocr "the OCR baseline model (baseline-ocr-nearest) and the debate's local OCR" ||
  echo "  → the demo runs without it; a run with baseline-ocr-nearest is refused at launch until it is installed." >&2

.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py collectstatic --noinput >/dev/null
# The staged demo: compiled probes, a signed release, finished evaluation and debate runs, and work waiting for
# every role on its first login (home/demo_stage.py). Each step is skipped when its result is there.
.venv/bin/python manage.py load_demo --stage

.venv/bin/celery -A physalign_site.celery worker --loglevel=INFO --concurrency=2 \
  >var/log/worker.log 2>&1 &
WORKER_PID=$!
trap 'kill $WORKER_PID 2>/dev/null || true; wait $WORKER_PID 2>/dev/null || true' EXIT INT TERM

cat <<MSG

  PhysAlign Studio is running at http://$HOST:$PORT/
  Celery worker log: var/log/worker.log

  Demo logins (password = username + "-demo"; local demo only):
    annotator         / annotator-demo
    source_reviewer   / source_reviewer-demo
    probe_reviewer    / probe_reviewer-demo
    probe_reviewer2   / probe_reviewer2-demo
    annotator2        / annotator2-demo   (second annotator: Annotation → Independent annotation)
    adjudicator       / adjudicator-demo
    admin             / admin-demo

  Waiting on first login: the annotator's problems to start (diagrams) and a rejected pass; the source
  reviewer's submitted passes; a claimed review slot each for probe_reviewer, probe_reviewer2 and the
  adjudicator (a dispute); the admin's pipeline board with a signed release, a finished evaluation run
  (Evaluation → Runs) and a finished debate run (Evaluation → Debate runs).

MSG
.venv/bin/gunicorn physalign_site.wsgi:application --bind "$HOST:$PORT" --workers 2 --threads 4 \
  --access-logfile - --log-level warning
