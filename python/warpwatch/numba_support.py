"""Numba CUDA helpers: per-lane iteration counting and the group reduction, for a real GPU (warp
intrinsics) and for Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``: no warp shuffles, votes,
``syncwarp``, ``activemask`` or clocks, so shared memory and atomics instead).

A kernel counts its loop's iterations in a local variable ``w`` and calls the reduction at the
end (every thread of the block must reach it: it synchronises the block):

    reduce_groups = group_reducer(n=8, threads_per_block=64)

    @cuda.jit
    def kernel(..., counts, totals):
        w = 0
        while ...: ...; w += 1
        unit = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        counts[unit] = w                      # per-lane counts: the host builds the frames from them
        reduce_groups(w, totals)              # totals[0] += Σ max_i w_i, totals[1] += Σ Σ_i w_i

The per-lane ``counts`` array is what :meth:`warpwatch.recorder.Recorder.record_counts` turns into
frames (histogram, per-group H, samples); ``totals`` is the device-side reduction, a check on
the host's numbers and what a job that keeps only totals would record. Groups are n consecutive
threads of a warp (the probe's numbering, launch-shape.hpp); n must divide 32 here.

No clock: Numba exposes no ``clock64``, and the simulator has none, so Numba frames are counts
only (SPEC.md "Counts-only frames").
"""

from __future__ import annotations

import os
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt

# Module-level imports: the simulator swaps the `cuda` a kernel sees through its globals.
from numba import cuda, int64


class GroupReducer(Protocol):
    """The device function :func:`group_reducer` builds: ``reduce(w, totals)``, called in a kernel by
    every thread of the block with its lane's count ``w``; adds into ``totals`` (int64, 2 elements)."""

    def __call__(self, w: int, totals: npt.NDArray[np.int64], /) -> None: ...


def simulator_enabled() -> bool:
    """Whether Numba runs kernels in its CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"


def group_reducer(n: int, threads_per_block: int, simulator: bool | None = None) -> GroupReducer:
    """A ``@cuda.jit(device=True)`` function ``reduce(w, totals)`` adding Σ max and Σ sum over the
    block's groups of ``n`` lanes into ``totals[0]`` and ``totals[1]`` (int64).

    On a GPU: xor-shuffle butterflies within each n-lane segment of the warp, one atomic per group.
    In the simulator: the block's counts in shared memory, the group's first lane reduces them.

    :raises ValueError: n does not divide 32, or the block is not a whole number of warps
    """
    if n < 1 or 32 % n != 0:
        raise ValueError(f"WW_ERR_PYTHON_GROUP_SIZE: n must divide 32 (1, 2, 4, 8, 16, 32), got {n}")
    if threads_per_block % 32 != 0 or not 32 <= threads_per_block <= 1024:
        raise ValueError(f"WW_ERR_PYTHON_GROUP_SIZE: threads per block must be a multiple of 32 in 32..1024, got {threads_per_block}")
    use_shared = simulator_enabled() if simulator is None else simulator
    group = n
    block = threads_per_block
    # numba-cuda has no type information: its decorators return Any (the override in pyproject.toml).

    if use_shared:

        @cuda.jit(device=True)  # type: ignore[untyped-decorator]
        def reduce_shared(w: int, totals: npt.NDArray[np.int64]) -> None:
            shared = cuda.shared.array(block, int64)
            tid = cuda.threadIdx.x
            shared[tid] = w
            cuda.syncthreads()
            if tid % group == 0:
                m = 0
                s = 0
                for j in range(group):
                    v = shared[tid + j]
                    s += v
                    if v > m:
                        m = v
                cuda.atomic.add(totals, 0, m)
                cuda.atomic.add(totals, 1, s)

        return cast(GroupReducer, reduce_shared)

    @cuda.jit(device=True)  # type: ignore[untyped-decorator]
    def reduce_warp(w: int, totals: npt.NDArray[np.int64]) -> None:
        m = int64(w)
        s = int64(w)
        offset = group // 2
        while offset > 0:
            other_m = cuda.shfl_xor_sync(0xFFFFFFFF, m, offset)
            other_s = cuda.shfl_xor_sync(0xFFFFFFFF, s, offset)
            if other_m > m:
                m = other_m
            s += other_s
            offset //= 2
        if cuda.laneid % group == 0:
            cuda.atomic.add(totals, 0, m)
            cuda.atomic.add(totals, 1, s)

    return cast(GroupReducer, reduce_warp)
