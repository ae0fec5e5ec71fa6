"""Escape-time kernel with the device probe, compiled by NVRTC through CuPy (``RawModule``), its
probe buffers read back by ProbeReadback without synchronising the job's stream; frames with
clocks, as the C++ recorder writes them. Needs a GPU and CuPy (the ``[cupy]`` extra):

    python -m warpwatch.examples.cupy_escape --out frames.bin --n 32
    warpwatch analyze frames.bin

Without CuPy or a CUDA device it prints ``skipped: ...`` and exits 0. With them it checks that
the stored counts equal the host's reference (python/warpwatch/examples/_common.py) and that every launch was
recorded (exit 1 otherwise).
"""

from __future__ import annotations

import sys
import time
from typing import Any, Sequence

import numpy as np

from warpwatch.examples._common import cuda_escape_args, escape_reference, finish, open_recorder, run_main, skipped
from warpwatch.examples.escape_source import ESCAPE_SOURCE, EXACT_OPTIONS, launch_shape
from warpwatch.frame import Device

PROG = "python -m warpwatch.examples.cupy_escape"


def _cupy_or_reason() -> tuple[Any, str]:
    try:
        import cupy
    except Exception as error:  # noqa: BLE001 - ImportError, or a CUDA library CuPy cannot load
        return None, f"no CuPy ({type(error).__name__}: {error})"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as error:  # noqa: BLE001 - no driver
        return None, f"no CUDA device ({type(error).__name__}: {error})"
    return (cupy, "") if count > 0 else (None, "no CUDA device")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 on success or when skipped, 1 when a check fails, 2 on bad arguments."""
    args = cuda_escape_args(PROG, __doc__, "cupy-escape", argv)
    if args is None:
        return 2
    cupy, reason = _cupy_or_reason()
    if cupy is None:
        return skipped(PROG, reason)

    from warpwatch.cupy_support import CupyOps, raw_module
    from warpwatch.probe_readback import ProbeReadback

    ops = CupyOps()
    recorder = open_recorder(args, Device(), "cuda")
    readback = ProbeReadback(recorder, ops, sample_capacity=1024)
    kernel = raw_module(ESCAPE_SOURCE, options=EXACT_OPTIONS).get_function(f"ww_escape_n{args.group}")
    units = args.width * args.height
    groups = units // args.group
    blocks, threads = launch_shape(groups, args.group)
    stream = cupy.cuda.Stream(non_blocking=True)
    counts = cupy.zeros(units, dtype=cupy.uint32)
    launch_ids = []
    for _ in range(args.launches):
        ticket = readback.begin_launch(args.kernel, group_size=args.group, group_count=groups, stream=stream.ptr)
        with stream:  # CuPy launches on the current stream
            kernel((blocks,), (threads,), (counts, ticket.buffers, np.uint32(args.width), np.uint32(args.height), np.uint32(args.max_iter),
                                           np.uint64(groups)))
        readback.end_launch(ticket)  # returns at once: the read-back follows the stream
        launch_ids.append(ticket.launch_id)
    started = time.monotonic()
    closed = readback.close(timeout=30)
    stored = cupy.asnumpy(counts)  # the example's own check, after the job's work
    expected = escape_reference(args.width, args.height, args.max_iter)
    ok = closed.complete and bool(np.array_equal(stored, expected))
    stats = readback.stats()
    report = [{"launchId": str(lid), "sumCounts": int(expected.astype(np.int64).sum())} for lid in launch_ids]
    if not np.array_equal(stored, expected):
        print(f"WW_ERR_PYTHON_EXAMPLE: the kernel's counts differ from the host's reference at {int((stored != expected).sum())} pixels", file=sys.stderr)
    print(f"{PROG}: {stats.launches_recorded}/{stats.launches_begun} launches recorded, readback closed in "
          f"{time.monotonic() - started:.3f} s", file=sys.stderr)
    return finish(recorder, args, report, ok=ok and stats.launches_recorded == args.launches)


if __name__ == "__main__":
    run_main(main)
