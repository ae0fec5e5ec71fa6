#!/usr/bin/env bash
# Installs NVIDIA's CUDA compiler (nvcc 13.0) from NVIDIA's PyPI wheels into a cached virtual
# environment, for COMPILING the CUDA workloads on machines without a CUDA toolkit (CI).
# Running them still needs an NVIDIA GPU and driver >= 580 (CUDA 13 runtime).
#
#   kernels/install-nvcc.sh            # prints the nvcc path on stdout; progress on stderr
#
# Idempotent: a second run with the same pins does nothing. Cache: $WARPWATCH_CACHE_DIR, default
# <repo>/.cache/warpwatch (gitignored): nvcc-venv/ (the wheels) and cuda -> the toolkit root,
# which kernels/build.ts passes to CMake as CMAKE_CUDA_COMPILER=<cache>/cuda/bin/nvcc.
#
# Why CUDA 13: the cu12 wheels (nvidia-cuda-nvcc-cu12 <= 12.9) ship only ptxas and libnvvm,
# not the nvcc driver, cicc or the crt headers; the CUDA 13 wheels (nvidia-cuda-nvcc,
# nvidia-cuda-crt, nvidia-nvvm, nvidia-cuda-runtime, nvidia-cuda-cccl) form a complete compiler.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${WARPWATCH_CACHE_DIR:-$root/.cache/warpwatch}"
venv="$cache/nvcc-venv"
link="$cache/cuda"
pins=(
  "nvidia-cuda-nvcc==13.0.88"
  "nvidia-cuda-crt==13.0.88"
  "nvidia-nvvm==13.0.88"
  "nvidia-cuda-runtime==13.0.96"
  "nvidia-cuda-cccl==13.0.85"
)
stamp="$venv/.warpwatch-pins-$(printf '%s\n' "${pins[@]}" | cksum | cut -d' ' -f1)"

if [[ -f "$stamp" && -x "$link/bin/nvcc" ]]; then
  echo "$link/bin/nvcc"
  exit 0
fi

python="${PYTHON:-python3}"
command -v "$python" >/dev/null || { echo "install-nvcc: $python not found; nvcc wheels need Python >= 3.8" >&2; exit 1; }
mkdir -p "$cache"
echo "install-nvcc: installing ${pins[*]} into $venv" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "${pins[@]}" >&2
toolkit="$("$venv/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')"
[[ -x "$toolkit/bin/nvcc" ]] || { echo "install-nvcc: the wheels installed no $toolkit/bin/nvcc" >&2; exit 1; }
# nvcc.profile links against $(TOP)/lib64; the wheels ship lib/.
[[ -e "$toolkit/lib64" ]] || ln -s lib "$toolkit/lib64"
ln -sfn "$toolkit" "$link"
"$link/bin/nvcc" --version | tail -n 2 >&2
touch "$stamp"
echo "$link/bin/nvcc"
