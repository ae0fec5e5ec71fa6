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

import os
import sys
import time
from typing import Sequence

import numpy as np
import triton
import triton.language as tl

from warpwatch.examples._common import escape_parser, finish, grid_error, open_recorder, run_main, device_uuid_bytes
from warpwatch.frame import Device
from warpwatch.triton_support import HostArray


# Inside a Triton kernel the pointer and the scalars are all tl.tensor (annotations Triton reads
# as no specialisation; `int` would fix them to i32). triton has no type information (pyproject.toml).
@triton.jit  # type: ignore[untyped-decorator]
def escape_kernel(counts_ptr: tl.tensor, width: tl.tensor, height: tl.tensor, max_iter: tl.tensor, BLOCK: tl.constexpr) -> None:
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


def run_escape(width: int, height: int, max_iter: int, block: int, interpreted: bool = True) -> np.ndarray:
    """Run the kernel once; returns per-pixel counts (uint32).

    ``interpreted``: the Triton interpreter writes into a numpy array (:class:`HostArray`); on a GPU
    the counts live in a torch CUDA tensor (Triton's launcher takes device pointers only) and are
    copied back after the launch.
    """
    units = width * height
    grid = (triton.cdiv(units, block),)
    if interpreted:
        counts = np.zeros(units, dtype=np.int32)
        escape_kernel[grid](HostArray(counts), width, height, max_iter, BLOCK=block)
        return counts.astype(np.uint32)
    import torch  # Triton's own dependency on a GPU

    device_counts = torch.zeros(units, dtype=torch.int32, device="cuda")
    escape_kernel[grid](device_counts, width, height, max_iter, BLOCK=block)
    return np.asarray(device_counts.cpu().numpy(), dtype=np.uint32)


def _gpu_device() -> Device:
    """The GPU the kernel runs on (device 0, through torch, Triton's own dependency): name, UUID and
    compute capability, so that the streams of two GPUs stay apart. The frames are counts only, so
    no clock rate is needed."""
    import torch

    props = torch.cuda.get_device_properties(0)
    return Device(name=props.name, uuid=device_uuid_bytes(props), compute_capability=(props.major, props.minor))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; exit 0 on success, 2 on bad arguments (one WW_ERR_ line)."""
    args = escape_parser("python -m warpwatch.examples.triton_escape", __doc__, job="triton-escape", group_flag="--block",
                         group_help="elements per program = n (a power of two, 1..32)", group_default=16).parse_args(argv)
    if args.group not in (1, 2, 4, 8, 16, 32):
        print(f"WW_ERR_PYTHON_EXAMPLE: --block must be a power of two 1..32 (it is n), got {args.group}", file=sys.stderr)
        return 2
    error = grid_error(args.width, args.height, args.group, "--block")
    if error:
        print(error, file=sys.stderr)
        return 2

    interpreted = os.environ.get("TRITON_INTERPRET", "0") == "1"
    recorder = open_recorder(args, Device(name="triton-interpreter") if interpreted else _gpu_device(), "cpu" if interpreted else "cuda")
    report = []
    for _ in range(args.launches):
        start = time.time_ns()
        counts = run_escape(args.width, args.height, args.max_iter, args.group, interpreted)
        end = time.time_ns()
        launch_id = recorder.record_counts(args.kernel, counts, args.group, start_unix_nanos=start, end_unix_nanos=end)
        report.append({"launchId": str(launch_id), "sumCounts": int(counts.astype(np.int64).sum())})
    return finish(recorder, args, report)


if __name__ == "__main__":
    run_main(main)
