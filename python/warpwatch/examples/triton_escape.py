"""Escape-time (Mandelbrot) kernel in Triton, instrumented with per-element counts.

    TRITON_INTERPRET=1 python -m warpwatch.examples.triton_escape --out frames.bin
    warpwatch analyze frames.bin

Same pixels, same real arithmetic as warpwatch.examples.numba_escape. Each Triton program
handles BLOCK consecutive pixels as one tensor and loops while any of its elements is still
iterating (a masked, data-dependent while-loop): the program's elements advance in lockstep, so
they are the group, and n = BLOCK (1..32, the frame format's limit). A program costs
BLOCK · max(w) element-iterations for Σ w useful ones: H = n·max/Σ, as for a warp's lanes.
Each element's iteration count is stored, and the host builds the frames from them.

No clock: the interpreter does not run ``inline_asm`` (the only clock, ``%clock64``), so the
frames are counts only (SPEC.md "Counts-only frames"). On a GPU the same kernel runs as
written (with torch or any array the launcher accepts).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Sequence

import numpy as np
import triton  # type: ignore[import-untyped]
import triton.language as tl  # type: ignore[import-untyped]

from warpwatch.triton_support import HostArray


@triton.jit
def escape_kernel(counts_ptr, width, height, max_iter, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
    pid = tl.program_id(0)
    unit = pid * BLOCK + tl.arange(0, BLOCK)
    inside = unit < width * height
    x = (unit % width).to(tl.float64)
    y = (unit // width).to(tl.float64)
    cr = -2.0 + 2.5 * x / width
    ci = -1.25 + 2.5 * y / height
    zr = tl.zeros([BLOCK], dtype=tl.float64)
    zi = tl.zeros([BLOCK], dtype=tl.float64)
    w = tl.zeros([BLOCK], dtype=tl.int32)
    active = inside & (w < max_iter)
    while tl.max(active.to(tl.int32), axis=0) > 0:
        t = zr * zr - zi * zi + cr
        nzi = 2.0 * zr * zi + ci
        zr = tl.where(active, t, zr)
        zi = tl.where(active, nzi, zi)
        w = tl.where(active, w + 1, w)
        active = inside & (w < max_iter) & (zr * zr + zi * zi <= 4.0)
    tl.store(counts_ptr + unit, w, mask=inside)


def run_escape(width: int, height: int, max_iter: int, block: int) -> np.ndarray:
    """Run the kernel once (interpreter: numpy arrays); returns per-pixel counts (uint32)."""
    units = width * height
    counts = np.zeros(units, dtype=np.int32)
    grid = (triton.cdiv(units, block),)
    escape_kernel[grid](HostArray(counts), width, height, max_iter, BLOCK=block)
    return counts.astype(np.uint32)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; exit 0 on success, 2 on bad arguments (one WW_ERR_ line)."""
    parser = argparse.ArgumentParser(prog="python -m warpwatch.examples.triton_escape", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where the frames go: a file, unix:PATH (collector socket) or - (stdout)")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--height", type=int, default=64)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--block", type=int, default=16, help="elements per program = n (a power of two, 1..32)")
    parser.add_argument("--launches", type=int, default=1)
    parser.add_argument("--job", default="triton-escape")
    parser.add_argument("--kernel", default="escape")
    parser.add_argument("--sampling-stride", type=int, default=4)
    args = parser.parse_args(argv)
    if args.block not in (1, 2, 4, 8, 16, 32):
        print(f"WW_ERR_PYTHON_EXAMPLE: --block must be a power of two 1..32 (it is n), got {args.block}", file=sys.stderr)
        return 2
    if args.width < 1 or args.height < 1 or args.width * args.height % args.block != 0:
        print(f"WW_ERR_PYTHON_EXAMPLE: width·height must be a positive multiple of --block, got {args.width}x{args.height}", file=sys.stderr)
        return 2

    import os

    from warpwatch.frame import Device
    from warpwatch.recorder import Recorder

    interpreted = os.environ.get("TRITON_INTERPRET", "0") == "1"
    device = Device(name="triton-interpreter" if interpreted else "triton")
    recorder = Recorder(args.out, job=args.job, device=device, source="cpu" if interpreted else "cuda", sampling_stride=args.sampling_stride)
    report = []
    for _ in range(args.launches):
        start = time.time_ns()
        counts = run_escape(args.width, args.height, args.max_iter, args.block)
        end = time.time_ns()
        launch_id = recorder.record_counts(args.kernel, counts, args.block, start_unix_nanos=start, end_unix_nanos=end)
        report.append({"launchId": str(launch_id), "sumCounts": int(counts.astype(np.int64).sum())})
    result = recorder.close(timeout=10)
    stats = recorder.stats()
    summary = {"launches": report, "written": stats.written, "dropped": stats.dropped, "complete": result.complete}
    print(json.dumps(summary), file=sys.stderr if args.out in ("-", "stdout") else sys.stdout)
    return 0 if result.complete and stats.dropped == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
