#!/usr/bin/env bash
# Installs the warpwatch Python package with its [nvrtc,numba,triton] extras and its [test] extra
# (pytest, mypy) into a cached virtual environment, for the Python tests (python/*.test.ts runs
# them from `npm test`).
#
#   python/install.sh        # prints the venv's python on stdout; progress on stderr
#
# Cache: $WARPWATCH_CACHE_DIR, default <repo>/.cache/warpwatch (gitignored): python-venv/.
# Idempotent and quick when done: the dependencies are installed once per python/pyproject.toml
# (network needed then, ~0.5 GB of wheels); the package itself is reinstalled, without network
# (--no-deps --no-build-isolation), whenever a file under python/warpwatch changes.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${WARPWATCH_CACHE_DIR:-$root/.cache/warpwatch}"
venv="$cache/python-venv"
py="$venv/bin/python"
deps_stamp="$venv/.warpwatch-deps-$(cksum < "$root/python/pyproject.toml" | cut -d' ' -f1)"
source_hash="$(cd "$root/python" && find warpwatch pyproject.toml -type f -not -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 cat | cksum | cut -d' ' -f1)"
source_stamp="$venv/.warpwatch-source-$source_hash"

if [[ -f "$deps_stamp" && -f "$source_stamp" && -x "$py" ]]; then
  echo "$py"
  exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/python-venv.lock"
flock 9
if [[ ! -f "$deps_stamp" || ! -x "$py" ]]; then
  python="${PYTHON:-python3}"
  command -v "$python" >/dev/null || { echo "python/install.sh: $python not found (needs Python >= 3.10)" >&2; exit 1; }
  echo "python/install.sh: installing warpwatch[nvrtc,numba,triton,test] into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "setuptools>=68" "$root/python[nvrtc,numba,triton,test]" >&2
  touch "$deps_stamp"
fi
if [[ ! -f "$source_stamp" ]]; then
  echo "python/install.sh: reinstalling warpwatch from $root/python" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps --no-build-isolation --force-reinstall "$root/python" >&2
  rm -f "$venv"/.warpwatch-source-*
  touch "$source_stamp"
fi
echo "$py"
