#!/usr/bin/env bash
# The GPU validation batch (bench/gpu/README.md), in one call on the device machine (no Node needed there):
# builds the CUDA workloads with CMake + nvcc, runs matpow (five families × n ∈ {2,4,8,16,32} ×
# sync on/off, 2^18 groups, 256 threads per block), the probe-overhead pairs (probe off / on
# without sampling / on with sampling), the divergence micro-benchmark and escape plain vs sorted,
# the Python producer's checks and GPU examples (when a Python with numpy is there), and writes frame
# files, exit reports, the divergence CSV and the Python logs under OUT_DIR. Summarise them on the
# development machine with `npx tsx bench/gpu/summarize.ts OUT_DIR` (bench/gpu/README.md).
#
# Usage: bench/gpu/run-on-device.sh [--quick] [--backend cuda|cpu] OUT_DIR
#   --quick         2^12 groups and fewer repetitions (a smoke test of the batch, seconds)
#   --backend cpu   run the CPU lockstep programs instead (dry run of the batch on any machine;
#                   the probe-overhead pairs need CUDA and are skipped)
set -euo pipefail

quick=0
backend=cuda
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --backend) backend="${2:?--backend needs cuda or cpu}"; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "run-on-device.sh: unknown flag '$1'" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done
[[ -n "$out" ]] || { echo "run-on-device.sh: give an output directory (e.g. \$OUT)" >&2; exit 2; }
[[ "$backend" == cuda || "$backend" == cpu ]] || { echo "run-on-device.sh: --backend must be cuda or cpu, got '$backend'" >&2; exit 2; }

root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${WARPWATCH_GPU_BUILD_DIR:-$root/.cache/warpwatch/gpu-build}"
groups=$((1 << 18)); launches=2; overhead_groups=$((1 << 17)); overhead_repeats=3; div_repetitions=51
if [[ $quick == 1 ]]; then groups=$((1 << 12)); launches=1; overhead_groups=$((1 << 12)); overhead_repeats=2; div_repetitions=5; fi
mkdir -p "$out/matpow" "$out/overhead" "$out/escape" "$out/divergence"
started=$(date +%s)
step() { echo "==> [$(( $(date +%s) - started ))s] $*" >&2; }

step "build ($backend) in $build"
configure=(-S "$root/kernels" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWARPWATCH_PROTOCOL_TESTS=OFF)
if [[ $backend == cuda ]]; then
  command -v nvcc >/dev/null || [[ -n "${CUDACXX:-}" ]] || { echo "run-on-device.sh: nvcc not found (PATH or CUDACXX)" >&2; exit 1; }
  # The device's own GPU architecture (sm_XX from nvidia-smi), so no PTX JIT at start-up.
  cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
  [[ -n "$cc" ]] && configure+=("-DCMAKE_CUDA_ARCHITECTURES=$cc")
fi
cmake "${configure[@]}" > "$out/build.log" 2>&1
cmake --build "$build" -j "$(nproc)" >> "$out/build.log" 2>&1
bin() { echo "$build/warpwatch-$1-$backend"; }
[[ -x "$(bin matpow)" ]] || { echo "run-on-device.sh: $(bin matpow) was not built (see $out/build.log)" >&2; exit 1; }

{
  echo "backend=$backend groups=$groups launches=$launches quick=$quick date=$(date -u +%FT%TZ) host=$(hostname)"
  if [[ $backend == cuda ]]; then
    nvidia-smi --query-gpu=name,uuid,compute_cap,clocks.max.sm,clocks.sm,driver_version,memory.total --format=csv
    nvcc --version | tail -2
  else
    grep -m1 'model name' /proc/cpuinfo
  fi
} > "$out/device.txt" 2>&1

# matpow: frames with every launch summary and 1 in 1024 groups sampled (256 per launch: enough
# for the ICC and the divergence fit, a few hundred kB per run).
families=("binom(60,0.5)" "geo(0.05)" "pois(30)" "unif(10,50)" "nbinom(5,0.15)")
for dist in "${families[@]}"; do
  tag="$(echo "$dist" | tr -c 'a-z0-9.\n' '_' | sed 's/_*$//')"
  for n in 2 4 8 16 32; do
    for sync in on off; do
      name="matpow_${tag}_n${n}_sync${sync}"
      step "matpow $dist n=$n sync=$sync"
      "$(bin matpow)" --dist "$dist" --n "$n" --groups "$groups" --launches "$launches" --sync "$sync" --seed 1 \
        --sample-rate 0.0009765625 --job gpuval --kernel "$name" --out "$out/matpow/$name.wwf" 2> "$out/matpow/$name.json"
    done
  done
done

# Probe overhead (CUDA only): the same kernel and inputs (same seed) without the probe, with the
# probe and no sampling, with the probe and the default sampling (1/64); kernel time from CUDA
# events in the exit report (kernelMillis), repeated and interleaved. 2^17 groups and one launch:
# on an H100 the full size took 20-36 s per repeat at n = 32 and the batch ran past 8 minutes;
# the repeats of the smaller size agree within 0.7 %.
if [[ $backend == cuda ]]; then
  for dist in "pois(30)" "geo(0.05)"; do
    tag="$(echo "$dist" | tr -c 'a-z0-9.\n' '_' | sed 's/_*$//')"
    for n in 8 32; do
      for repeat in $(seq 1 "$overhead_repeats"); do
        step "overhead $dist n=$n repeat $repeat"
        base=(--dist "$dist" --n "$n" --groups "$overhead_groups" --launches 1 --seed 7)
        "$(bin matpow)" "${base[@]}" --probe off 2> "$out/overhead/${tag}_n${n}_off_r${repeat}.json"
        "$(bin matpow)" "${base[@]}" --probe on --sample-rate 0 --out "$out/overhead/${tag}_n${n}_on_r${repeat}.wwf" 2> "$out/overhead/${tag}_n${n}_on_r${repeat}.json"
        "$(bin matpow)" "${base[@]}" --probe on --out "$out/overhead/${tag}_n${n}_sampled_r${repeat}.wwf" 2> "$out/overhead/${tag}_n${n}_sampled_r${repeat}.json"
      done
    done
  done
fi

step "divergence micro-benchmark"
"$(bin divergence)" --repetitions "$div_repetitions" --csv "$out/divergence/divergence.csv" --out "$out/divergence/divergence.wwf" \
  2> "$out/divergence/divergence.json"

for n in 8 32; do
  for variant in plain sorted; do
    step "escape n=$n $variant"
    extra=(); [[ $variant == sorted ]] && extra=(--sorted)
    "$(bin escape)" --n "$n" --seed 1 --job gpuval --kernel "escape_n${n}_${variant}" "${extra[@]}" \
      --out "$out/escape/escape_n${n}_${variant}.wwf" 2> "$out/escape/escape_n${n}_${variant}.json"
  done
done

# The Python producer on the GPU (docs/python.md): the NVRTC check of the device header, the Numba
# example on the device (no simulator), and the CuPy and PyTorch load_inline examples. They need a
# Python with numpy and the [nvrtc]/[numba]/[cupy] wheels, or torch (WARPWATCH_PYTHON, default
# python3; the package itself comes from this checkout): each writes its log and frames under
# OUT_DIR/python, a missing framework is one "skipped:" line, and no failure here stops the batch.
python="${WARPWATCH_PYTHON:-python3}"
mkdir -p "$out/python"
if "$python" -c 'import numpy' 2> /dev/null; then
  py_step() {  # name, then the arguments of python
    local name="$1"; shift
    step "python $name"
    if WARPWATCH_TRACEBACK=1 PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" "$python" "$@" > "$out/python/$name.log" 2>&1; then
      echo "exit 0" >> "$out/python/$name.log"
    else
      echo "exit $?" >> "$out/python/$name.log"
    fi
  }
  py_step nvrtc_check -m warpwatch.nvrtc_check
  py_step numba_escape -m warpwatch.examples.numba_escape --out "$out/python/numba_escape.wwf" --n 8 --launches 2
  # numba-cuda 0.30.4 cannot import with numpy >= 2.5 (numpy.row_stack is gone): run the example
  # again with the alias put back (numpy-row-stack-shim/), to check warpwatch's own Numba path.
  if grep -q "row_stack" "$out/python/numba_escape.log"; then
    PYTHONPATH="$root/bench/gpu/numpy-row-stack-shim${PYTHONPATH:+:$PYTHONPATH}" \
      py_step numba_escape_shim -m warpwatch.examples.numba_escape --out "$out/python/numba_escape_shim.wwf" --n 8 --launches 2
  fi
  py_step cupy_escape -m warpwatch.examples.cupy_escape --out "$out/python/cupy_escape.wwf" --n 32 --launches 2
  py_step triton_escape -m warpwatch.examples.triton_escape --out "$out/python/triton_escape.wwf" --block 32 --launches 2
  py_step torch_escape -m warpwatch.examples.torch_escape --out "$out/python/torch_escape.wwf" --n 32 --launches 2
else
  echo "skipped: $python has no numpy" > "$out/python/skipped.txt"
fi

step "done: $(du -sh "$out" | cut -f1) in $out"
