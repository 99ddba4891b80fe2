#!/usr/bin/env bash
# Vendor third-party browser libraries into static/vendor/ from the npm registry.
# Re-runnable: each run replaces the vendored files with the pinned versions below.
# Usage: scripts/vendor_static.sh            (needs `npm` on PATH)
set -euo pipefail

HTMX_VERSION="${HTMX_VERSION:-2.0.11}"
ANNOTORIOUS_VERSION="${ANNOTORIOUS_VERSION:-3.8.9}"
KATEX_VERSION="${KATEX_VERSION:-0.16.22}"

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

# npm_unpack <spec> <dir>: `npm pack` one package from the registry and unpack it under $WORK/<dir>.
npm_unpack() {
  local spec="$1" dir="$2"
  mkdir -p "$WORK/$dir"
  local tarball
  tarball="$(cd "$WORK/$dir" && npm pack --silent "$spec" | tail -n1)"
  tar -xzf "$WORK/$dir/$tarball" -C "$WORK/$dir"
}

vendor_annotorious() {
  local dest="$VENDOR/annotorious"
  npm_unpack "@annotorious/annotorious@${ANNOTORIOUS_VERSION}" annotorious
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$WORK/annotorious/package/dist/annotorious.js" "$dest/annotorious.js"
  cp "$WORK/annotorious/package/dist/annotorious.css" "$dest/annotorious.css"
  # no source maps are vendored: drop the comment that points at one (collectstatic's manifest storage
  # refuses references to missing files)
  sed -i '/^\/\/# sourceMappingURL=/d' "$dest/annotorious.js"
  # The npm tarball carries no licence file; the package declares BSD-3-Clause. This is the text of
  # LICENSE in github.com/annotorious/annotorious (Copyright (c) 2020, Pelagios Network).
  cat > "$dest/LICENSE" <<'LICENCE'
BSD 3-Clause License

Copyright (c) 2020, Pelagios Network
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
LICENCE
  local sha
  sha="$(sha256sum "$dest/annotorious.js" | cut -d' ' -f1)"
  cat > "$dest/VERSIONS" <<NOTE
package: @annotorious/annotorious
version: ${ANNOTORIOUS_VERSION}
source: npm registry (npm pack @annotorious/annotorious@${ANNOTORIOUS_VERSION}), files dist/annotorious.js (UMD, global Annotorious) and dist/annotorious.css
license: BSD-3-Clause (see LICENSE)
sha256(annotorious.js): ${sha}
vendored by: scripts/vendor_static.sh
NOTE
  echo "annotorious ${ANNOTORIOUS_VERSION} -> ${dest} (${sha})"
}

vendor_katex() {
  local dest="$VENDOR/katex"
  npm_unpack "katex@${KATEX_VERSION}" katex
  rm -rf "$dest"
  mkdir -p "$dest/fonts"
  cp "$WORK/katex/package/dist/katex.min.js" "$WORK/katex/package/dist/katex.min.css" "$dest/"
  cp "$WORK/katex/package/dist/fonts/"*.woff2 "$dest/fonts/"
  # only the woff2 fonts are vendored: drop the css's woff/ttf fallbacks, which would point at missing
  # files (collectstatic's manifest storage refuses those, and every current browser reads woff2)
  sed -E -i 's#,url\(fonts/[A-Za-z0-9_-]+\.(woff|ttf)\) format\("(woff|truetype)"\)##g' "$dest/katex.min.css"
  cp "$WORK/katex/package/LICENSE" "$dest/LICENSE"
  local sha
  sha="$(sha256sum "$dest/katex.min.js" | cut -d' ' -f1)"
  cat > "$dest/VERSIONS" <<NOTE
package: katex
version: ${KATEX_VERSION}
source: npm registry (npm pack katex@${KATEX_VERSION}), files dist/katex.min.{js,css} (css trimmed to its woff2 fonts) and dist/fonts/*.woff2
license: MIT (see LICENSE)
sha256(katex.min.js): ${sha}
vendored by: scripts/vendor_static.sh
NOTE
  echo "katex ${KATEX_VERSION} -> ${dest} (${sha})"
}


# Chart.js (evaluation results charts; canvas rendering, no eval, CSP-compatible). Run alone with
# `scripts/vendor_static.sh chartjs`.
CHARTJS_VERSION="${CHARTJS_VERSION:-4.4.9}"

vendor_chartjs() {
  local dest="$VENDOR/chartjs"
  npm_unpack "chart.js@${CHARTJS_VERSION}" chartjs
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$WORK/chartjs/package/dist/chart.umd.js" "$dest/chart.umd.min.js"
  # no source maps are vendored: drop the comment that points at one (collectstatic's manifest storage
  # refuses references to missing files)
  sed -i '/^\/\/# sourceMappingURL=/d' "$dest/chart.umd.min.js"
  cp "$WORK/chartjs/package/LICENSE.md" "$dest/LICENSE.md"
  local sha
  sha="$(sha256sum "$dest/chart.umd.min.js" | cut -d' ' -f1)"
  cat > "$dest/VERSIONS" <<NOTE
package: chart.js
version: ${CHARTJS_VERSION}
source: npm registry (npm pack chart.js@${CHARTJS_VERSION}), file dist/chart.umd.js
license: MIT (see LICENSE.md)
sha256(chart.umd.min.js): ${sha}
vendored by: scripts/vendor_static.sh
NOTE
  echo "chart.js ${CHARTJS_VERSION} -> ${dest}/chart.umd.min.js (${sha})"
}

if [[ "${1:-}" == "chartjs" ]]; then
  vendor_chartjs
  exit 0
fi

vendor_htmx
vendor_annotorious
vendor_katex
vendor_chartjs
