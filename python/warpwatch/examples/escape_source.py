"""The escape-time kernel in CUDA C++ with the device probe, for the NVRTC (CuPy) and
``load_inline`` (PyTorch) examples: one kernel per group size, ``extern "C"`` names
``ww_escape_n<N>`` for N in :data:`GROUP_SIZES`.

Kernel arguments: ``(unsigned* counts, warpwatch::ProbeBuffers buffers, unsigned width,
unsigned height, unsigned maxIter, unsigned long long groups)``; unit u = groupIndex·N + rank
(the probe's numbering) is pixel (u mod width, u div width), as in python/warpwatch/examples/_common.py. Each lane
counts its iterations with the probe and stores them in ``counts[u]``, so the host can check the
frames against the counts. Compile with ``--fmad=false`` (NVRTC and nvcc alike) so the counts equal
the host's reference exactly.
"""

from __future__ import annotations

#: The group sizes the source instantiates.
GROUP_SIZES: tuple[int, ...] = (8, 32)

#: Options beyond the include path: exact IEEE arithmetic (no fused multiply-adds).
EXACT_OPTIONS: tuple[str, ...] = ("--fmad=false",)

ESCAPE_SOURCE = r"""
#include <warpwatch/probe-device.cuh>

template <unsigned N>
__device__ void wwEscape(unsigned* counts, warpwatch::ProbeBuffers buffers, unsigned width, unsigned height, unsigned maxIter,
                         unsigned long long groups) {
  warpwatch::GroupProbe<N> probe(buffers, false);
  if (!probe.active(groups)) return;
  const unsigned long long unit = probe.unitIndex();
  const double x = static_cast<double>(unit % width), y = static_cast<double>(unit / width);
  const double cr = -2.0 + 2.5 * x / width, ci = -1.25 + 2.5 * y / height;
  double zr = 0.0, zi = 0.0;
  unsigned w = 0;
  probe.begin();
  while (w < maxIter && zr * zr + zi * zi <= 4.0) {
    const double t = zr * zr - zi * zi + cr;
    zi = 2.0 * zr * zi + ci;
    zr = t;
    ++w;
    probe.iteration();
  }
  probe.finish();
  probe.end();
  counts[unit] = w;
}

extern "C" __global__ void ww_escape_n8(unsigned* counts, warpwatch::ProbeBuffers b, unsigned width, unsigned height, unsigned maxIter,
                                        unsigned long long groups) { wwEscape<8>(counts, b, width, height, maxIter, groups); }
extern "C" __global__ void ww_escape_n32(unsigned* counts, warpwatch::ProbeBuffers b, unsigned width, unsigned height, unsigned maxIter,
                                         unsigned long long groups) { wwEscape<32>(counts, b, width, height, maxIter, groups); }
"""


def launch_shape(groups: int, n: int, threads_per_block: int = 256) -> tuple[int, int]:
    """(blocks, threads per block) that cover ``groups`` groups of ``n`` lanes (32 // n groups per warp)."""
    warps = -(-groups // (32 // n))
    return -(-warps * 32 // threads_per_block), threads_per_block
