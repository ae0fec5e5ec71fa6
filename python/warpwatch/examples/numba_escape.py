"""Escape-time (Mandelbrot) kernel in Numba, instrumented: per-lane iteration counts and the
group reduction (warpwatch.numba_support), frames through the recorder.

    NUMBA_ENABLE_CUDASIM=1 python -m warpwatch.examples.numba_escape --out frames.bin
    warpwatch analyze frames.bin

Pixel (x, y) of a width x height grid is unit y·width + x (one thread each, blocks of 64 threads),
c = (-2 + 2.5·x/width) + i·(-1.25 + 2.5·y/height), iterations z <- z² + c from z = 0 while
|z|² <= 4, at most --max-iter. The arithmetic is written out in reals (zr² − zi² + cr,
2·zr·zi + ci) so that any implementation reproduces the counts exactly. In the simulator (and
with Numba in general) there is no clock: the frames are counts only (SPEC.md).
"""

from __future__ import annotations

import sys
import time
from typing import Sequence

import numpy as np
import numpy.typing as npt
from numba import cuda  # module level: the simulator swaps it in kernels' globals

from warpwatch.examples._common import escape_parser, finish, grid_error, open_recorder, run_main, device_uuid_bytes
from warpwatch.frame import Device
from warpwatch.numba_support import group_reducer

THREADS_PER_BLOCK = 64


def run_escape(width: int, height: int, max_iter: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Run the kernel once; returns (per-pixel counts as uint32, device totals [Σmax, Σsum])."""
    reduce_groups = group_reducer(n, THREADS_PER_BLOCK)
    units = width * height

    @cuda.jit  # type: ignore[untyped-decorator]  # numba-cuda has no type information
    def escape(width: int, height: int, max_iter: int, counts: npt.NDArray[np.int64], totals: npt.NDArray[np.int64]) -> None:
        unit = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        w = 0
        if unit < width * height:
            x = unit % width
            y = unit // width
            cr = -2.0 + 2.5 * x / width
            ci = -1.25 + 2.5 * y / height
            zr = 0.0
            zi = 0.0
            while w < max_iter and zr * zr + zi * zi <= 4.0:
                t = zr * zr - zi * zi + cr
                zi = 2.0 * zr * zi + ci
                zr = t
                w += 1
            counts[unit] = w
        reduce_groups(w, totals)

    counts = cuda.to_device(np.zeros(units, dtype=np.int64))
    totals = cuda.to_device(np.zeros(2, dtype=np.int64))
    blocks = (units + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    escape[blocks, THREADS_PER_BLOCK](width, height, max_iter, counts, totals)
    return counts.copy_to_host().astype(np.uint32), totals.copy_to_host()


def _gpu_device() -> Device:
    """The current CUDA device as numba-cuda reports it (name, UUID, compute capability), so that the
    streams of two GPUs stay apart; ``numba-cuda`` with a zero UUID where it reports none. The
    frames are counts only, so no clock rate is needed."""
    from numba import cuda

    try:
        device = cuda.get_current_device()
        name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
        major, minor = device.compute_capability
        return Device(name=name, uuid=device_uuid_bytes(device), compute_capability=(int(major), int(minor)))
    except Exception:  # noqa: BLE001 - an older numba-cuda without these attributes
        return Device(name="numba-cuda")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; exit 0 on success, 2 on bad arguments (one WW_ERR_ line)."""
    args = escape_parser("python -m warpwatch.examples.numba_escape", __doc__, job="numba-escape").parse_args(argv)
    error = grid_error(args.width, args.height, 32, "32")
    if error:
        print(error, file=sys.stderr)
        return 2

    from warpwatch.numba_support import simulator_enabled

    simulated = simulator_enabled()
    # A simulator is not a GPU: source cpu (clocks would be host ns; there are none).
    recorder = open_recorder(args, Device(name="numba-cuda-simulator") if simulated else _gpu_device(), "cpu" if simulated else "cuda")
    report = []
    for _ in range(args.launches):
        start = time.time_ns()
        counts, totals = run_escape(args.width, args.height, args.max_iter, args.group)
        end = time.time_ns()
        groups = counts.reshape(-1, args.group).astype(np.int64)
        if int(totals[0]) != int(groups.max(axis=1).sum()) or int(totals[1]) != int(groups.sum()):
            print(f"WW_ERR_PYTHON_EXAMPLE: device totals {totals.tolist()} differ from the host's", file=sys.stderr)
            recorder.close(timeout=1)
            return 1
        launch_id = recorder.record_counts(args.kernel, counts, args.group, start_unix_nanos=start, end_unix_nanos=end)
        report.append({"launchId": str(launch_id), "sumMaxCounts": int(totals[0]), "sumCounts": int(totals[1])})
    return finish(recorder, args, report)


if __name__ == "__main__":
    run_main(main)
