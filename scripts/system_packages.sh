# Debian packages the app calls as programs, checked or installed the same way by `make run` (scripts/run.sh)
# and `make test` (scripts/test.sh). Source this file, then: ensure_debian_package COMMAND PACKAGE WHY
#
# Prints what it did: the program found (with its path), or the package installed. Returns non-zero, after
# saying why, when the program is missing and cannot be installed (no apt-get, or not root and no password-less
# sudo); the caller decides whether that stops it.

ensure_debian_package() {
  local command=$1 package=$2 why=$3
  local found
  if found=$(command -v "$command" 2>/dev/null); then
    echo "$package: found $found ($why)."
    return 0
  fi
  local as_root=()
  if [[ $(id -u) != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      echo "$package: '$command' is missing and installing it needs root (apt-get install $package): $why." >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$package: '$command' is missing and this machine has no apt-get; install $package yourself: $why." >&2
    return 1
  fi
  echo "$package: '$command' is missing; installing Debian $package ($why)…"
  if ! { "${as_root[@]}" apt-get update -qq &&
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null; }; then
    echo "$package: apt-get install $package failed: $why." >&2
    return 1
  fi
  if ! found=$(command -v "$command" 2>/dev/null); then
    echo "$package: installed, but '$command' is still not on PATH." >&2
    return 1
  fi
  echo "$package: installed $found."
}
