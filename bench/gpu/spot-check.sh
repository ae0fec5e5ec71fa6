#!/usr/bin/env bash
# A short subset of run-on-device.sh (about 2 min after the build, under 3 min in all on an H100):
# matpow for pois(30), geo(0.05), unif(10,50) at n = 8 and 32 (2^16 groups, one launch, sync on),
# the probe overhead for pois(30) n = 8 (2^17 groups, 3 interleaved repeats, without sampling),
# escape plain/sorted at n = 32, and the Python producer's NVRTC check and CuPy, Triton and PyTorch
# examples on the device. Writes the layout bench/gpu/summarize.ts reads.
#
# Usage: bench/gpu/spot-check.sh [OUT_DIR]     (default /tmp/v; build in $WARPWATCH_GPU_BUILD_DIR or /tmp/b)
set -u
B="${WARPWATCH_GPU_BUILD_DIR:-/tmp/b}"; O="${1:-/tmp/v}"; mkdir -p $O/matpow $O/overhead $O/escape $O/python
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python WARPWATCH_TRACEBACK=1
s=$(date +%s); st() { echo "==> [$(( $(date +%s) - s ))s] $*"; }
st build
cmake -S kernels -B $B -DCMAKE_BUILD_TYPE=Release -DWARPWATCH_PROTOCOL_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')" > $O/build.log 2>&1 &&
  cmake --build $B -j16 --target warpwatch-matpow-cuda warpwatch-escape-cuda >> $O/build.log 2>&1; echo "build rc=$?"
M=$B/warpwatch-matpow-cuda; E=$B/warpwatch-escape-cuda
for d in "pois(30)" "geo(0.05)" "unif(10,50)"; do
  t=$(echo "$d" | tr -c 'a-z0-9.\n' '_' | sed 's/_*$//')
  for n in 8 32; do
    st "matpow $d n=$n"
    timeout 30 $M --dist "$d" --n $n --groups 65536 --launches 1 --sync on --seed 1 --sample-rate 0.0009765625 --job gpuval \
      --kernel "matpow_${t}_n${n}_syncon" --out $O/matpow/matpow_${t}_n${n}_syncon.wwf 2> $O/matpow/matpow_${t}_n${n}_syncon.json
    tail -1 $O/matpow/matpow_${t}_n${n}_syncon.json
  done
done
for r in 1 2 3; do for p in off on; do
  st "overhead $p r$r"
  x=(); [[ $p == on ]] && x=(--sample-rate 0 --out $O/overhead/pois_30_n8_on_r$r.wwf)
  timeout 30 $M --dist "pois(30)" --n 8 --groups 131072 --launches 1 --seed 7 --probe $p "${x[@]}" 2> $O/overhead/pois_30_n8_${p}_r$r.json
done; done
for v in plain sorted; do
  x=(); [[ $v == sorted ]] && x=(--sorted)
  st "escape $v"
  timeout 30 $E --n 32 --seed 1 --job gpuval --kernel escape_n32_$v "${x[@]}" --out $O/escape/escape_n32_$v.wwf 2> $O/escape/escape_n32_$v.json
done
for spec in "nvrtc_check -m warpwatch.nvrtc_check" "cupy_escape -m warpwatch.examples.cupy_escape --n 32" "triton_escape -m warpwatch.examples.triton_escape --block 32" "torch_escape -m warpwatch.examples.torch_escape --n 32"; do
  set -- $spec; nm=$1; shift; o=(); [[ $nm != nvrtc_check ]] && o=(--out $O/python/$nm.wwf --launches 2)
  st "python $nm"
  timeout 60 python3 "$@" "${o[@]}" > $O/python/$nm.log 2>&1; echo "exit $?" >> $O/python/$nm.log; tail -3 $O/python/$nm.log
done
st done
