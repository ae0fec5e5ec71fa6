#!/usr/bin/env bash
# The cost of other ways to read the lane clock c_i (docs/validation.md §5), in one call on the
# device machine: builds matpow from four copies of kernels/ (bench/gpu/lane-clock-variants.py:
# now, none, sampled, exit), then runs pois(30) n = 8 and geo(0.05) n = 32 (2^17 groups, one
# launch, seed 7, the default sampling of 1 group in 64) with each variant and with the probe
# compiled out, interleaved, 3 repeats. Writes each run's exit report (kernelMillis) and frames
# (measured H) under OUT_DIR/runs and the build logs under OUT_DIR. Summarise here with
# `npx tsx bench/gpu/lane-clock-summary.ts OUT_DIR`.
#
# Usage: bench/gpu/lane-clock-experiment.sh [--build-only] OUT_DIR
#   --build-only   build the four variants and stop (a compile check on a machine without a GPU)
set -uo pipefail
build_only=0
[[ "${1:-}" == --build-only ]] && { build_only=1; shift; }
out="${1:?give an output directory}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${WARPWATCH_GPU_BUILD_DIR:-/tmp/lane-clock}"
variants=(now none sampled exit)
mkdir -p "$out/runs" "$work"
started=$(date +%s)
step() { echo "==> [$(( $(date +%s) - started ))s] $*" >&2; }

python3 "$root/bench/gpu/lane-clock-variants.py" "$root/kernels" "$work/src" || exit 1
cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
cc="${cc:-${WARPWATCH_CUDA_ARCH:-90}}"
step "build ${variants[*]} for sm_$cc"
for v in "${variants[@]}"; do
  ( cmake -S "$work/src/$v/kernels" -B "$work/build/$v" -DCMAKE_BUILD_TYPE=Release -DWARPWATCH_PROTOCOL_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES="$cc" ${CUDACXX:+-DCMAKE_CUDA_COMPILER="$CUDACXX"} > "$out/build-$v.log" 2>&1 &&
    cmake --build "$work/build/$v" -j 4 --target warpwatch-matpow-cuda >> "$out/build-$v.log" 2>&1
    echo "build $v rc=$?" >&2 ) &
done
wait
for v in "${variants[@]}"; do [[ -x "$work/build/$v/warpwatch-matpow-cuda" ]] || { echo "lane-clock-experiment: $v did not build (see $out/build-$v.log)" >&2; exit 1; }; done
[[ $build_only == 1 ]] && { step "built"; exit 0; }
nvidia-smi --query-gpu=name,uuid,compute_cap,clocks.max.sm,driver_version --format=csv > "$out/device.txt" 2>&1

for repeat in 1 2 3; do
  for config in "pois(30) 8" "geo(0.05) 32"; do
    read -r dist n <<< "$config"
    tag="$(echo "$dist" | tr -c 'a-z0-9.\n' '_' | sed 's/_*$//')_n$n"
    step "$tag repeat $repeat"
    base=(--dist "$dist" --n "$n" --groups 131072 --launches 1 --seed 7)
    for v in now exit; do
      timeout 60 "$work/build/$v/warpwatch-matpow-cuda" "${base[@]}" --probe off 2> "$out/runs/${tag}_off-${v}_r$repeat.json"
    done
    for v in "${variants[@]}"; do
      timeout 60 "$work/build/$v/warpwatch-matpow-cuda" "${base[@]}" --probe on --job lane-clock --kernel "${tag}_$v" \
        --out "$out/runs/${tag}_${v}_r$repeat.wwf" 2> "$out/runs/${tag}_${v}_r$repeat.json"
    done
  done
done
step "done"
