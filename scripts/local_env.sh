#!/usr/bin/env bash
# The local environment file of the embedded set-up (`make run`): a generated DJANGO_SECRET_KEY and plain HTTP
# on localhost, written to FILE (default .env at the project root), which settings.py reads. So every
# `manage.py` command works in the `make run` set-up as the README prints it. Values already in the file
# are kept; a missing one is appended; the file is readable by its owner only. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
file="${1:-.env}"
touch "$file"
chmod 600 "$file"
ensure() {  # NAME VALUE: append NAME=VALUE unless the file already sets NAME
  grep -q "^$1=" "$file" || printf '%s=%s\n' "$1" "$2" >>"$file"
}
if ! grep -q "^DJANGO_SECRET_KEY=" "$file"; then
  key="$(cat var/secret_key 2>/dev/null || true)"  # the key an earlier `make run` generated, if any
  [ -n "$key" ] || key="$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(50))')"
  ensure DJANGO_SECRET_KEY "$key"
fi
ensure DJANGO_SECURE_SSL false  # plain HTTP on localhost
