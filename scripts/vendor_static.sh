#!/usr/bin/env bash
# Vendor third-party browser libraries into static/vendor/ from the npm registry.
# Re-runnable: each run replaces the vendored files with the pinned versions below.
# Usage: scripts/vendor_static.sh            (needs `npm` on PATH)
set -euo pipefail

HTMX_VERSION="${HTMX_VERSION:-2.0.11}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENDOR="$ROOT/static/vendor"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

vendor_htmx() {
  local dest="$VENDOR/htmx"
  (cd "$WORK" && npm pack --silent "htmx.org@${HTMX_VERSION}" >/dev/null)
  local tarball
  tarball="$(ls "$WORK"/htmx.org-*.tgz)"
  mkdir -p "$WORK/htmx"
  tar -xzf "$tarball" -C "$WORK/htmx"
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$WORK/htmx/package/dist/htmx.min.js" "$dest/htmx.min.js"
  cp "$WORK/htmx/package/LICENSE" "$dest/LICENSE"
  local sha
  sha="$(sha256sum "$dest/htmx.min.js" | cut -d' ' -f1)"
  cat > "$dest/VERSIONS" <<NOTE
package: htmx.org
version: ${HTMX_VERSION}
source: npm registry (npm pack htmx.org@${HTMX_VERSION}), file dist/htmx.min.js
license: 0BSD (see LICENSE)
sha256(htmx.min.js): ${sha}
vendored by: scripts/vendor_static.sh
NOTE
  echo "htmx ${HTMX_VERSION} -> ${dest}/htmx.min.js (${sha})"
}

vendor_htmx
