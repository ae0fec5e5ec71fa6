// What the device probe and the host recorder share, in a form that compiles three ways: plain
// C++17 (g++/clang, no CUDA), nvcc, and NVRTC (CuPy RawKernel/RawModule, PyTorch's JIT), which
// has no C++ standard library headers. So: no <string>, <vector>, <cmath> or exceptions here,
// only <cstdint> (NVRTC: <cuda/std/cstdint> from CCCL), and every function is constexpr or
// __host__ __device__ inline.
//
// Contents: the format constants the probe needs (group size, histogram bins), the sampling
// selection rule (SPEC.md GroupSamples `selection`, splitmix64), the per-group loss formulas
// (model.md §1, §3), the launch totals and sample slot the probe writes, ProbeBuffers, and the
// probe's thread numbering (launch-shape.hpp explains it). Host-only checks (launch shape,
// sampling-stride fitting) stay in launch-shape.hpp and launch-totals.hpp; the frame codec in
// frame.hpp. probe-device.cuh adds the probe itself.
#pragma once

#if defined(__CUDACC_RTC__)
#include <cuda/std/cstdint>
namespace warpwatch {
namespace wwstd = ::cuda::std;
}  // namespace warpwatch
#else
#include <cstdint>
namespace warpwatch {
namespace wwstd = ::std;
}  // namespace warpwatch
#endif

#if defined(__CUDACC__)
#define WARPWATCH_HOST_DEVICE __host__ __device__
#else
#define WARPWATCH_HOST_DEVICE
#endif

namespace warpwatch {

// ---------------------------------------------------------------------------------------------
// Format constants the probe needs (SPEC.md "Payload", "Histogram bins"; frame.hpp has the rest).

inline constexpr unsigned kMaxGroupSize = 32;
inline constexpr wwstd::uint32_t kExactBinCount = 1024;
inline constexpr unsigned kLogSubBinBits = 6;
inline constexpr wwstd::uint32_t kHistogramBinCount = kExactBinCount + (32 - 10) * (1u << kLogSubBinBits);  // 2432

/// Which groups a GroupSamples frame carries (SPEC.md GroupSamples `selection`). Block: whole
/// runs of `groupsPerBlock` consecutive groups (the warps of one thread block, in order), block b
/// sampled iff splitmix64(launchId ^ b) % stride == 0.
enum class Selection : wwstd::uint8_t { Stride = 0, Hash = 1, Block = 2 };

// ---------------------------------------------------------------------------------------------
// Histogram bins (SPEC.md "Histogram bins"): exact below 1024, then 64 log-linear bins per octave.

namespace detail {
WARPWATCH_HOST_DEVICE constexpr unsigned floorLog2(wwstd::uint32_t v) {
  unsigned r = 0;
  if (v >= (1u << 16)) { v >>= 16; r += 16; }
  if (v >= (1u << 8)) { v >>= 8; r += 8; }
  if (v >= (1u << 4)) { v >>= 4; r += 4; }
  if (v >= (1u << 2)) { v >>= 2; r += 2; }
  if (v >= (1u << 1)) { r += 1; }
  return r;
}
}  // namespace detail

/// Histogram bin of a per-lane iteration count.
WARPWATCH_HOST_DEVICE constexpr wwstd::uint32_t histogramBinOf(wwstd::uint32_t value) {
  if (value < kExactBinCount) return value;
  const unsigned e = detail::floorLog2(value);
  const wwstd::uint32_t sub = (value >> (e - kLogSubBinBits)) & ((1u << kLogSubBinBits) - 1u);
  return kExactBinCount + (e - 10u) * (1u << kLogSubBinBits) + sub;
}

/// Smallest value in a bin (bin < kHistogramBinCount).
WARPWATCH_HOST_DEVICE constexpr wwstd::uint32_t histogramBinLow(wwstd::uint32_t bin) {
  if (bin < kExactBinCount) return bin;
  const wwstd::uint32_t k = bin - kExactBinCount;
  const unsigned e = 10u + k / (1u << kLogSubBinBits);
  const wwstd::uint32_t sub = k % (1u << kLogSubBinBits);
  return (1u << e) + (sub << (e - kLogSubBinBits));
}

/// Largest value in a bin (bin < kHistogramBinCount).
WARPWATCH_HOST_DEVICE constexpr wwstd::uint32_t histogramBinHigh(wwstd::uint32_t bin) {
  if (bin < kExactBinCount) return bin;
  const unsigned e = 10u + (bin - kExactBinCount) / (1u << kLogSubBinBits);
  return histogramBinLow(bin) + ((1u << (e - kLogSubBinBits)) - 1u);
}

/// Representative value of a bin: floor((low + high) / 2); |v − rep| / v <= 2^-7 for v in the bin.
WARPWATCH_HOST_DEVICE constexpr wwstd::uint32_t histogramBinRepresentative(wwstd::uint32_t bin) {
  const wwstd::uint64_t low = histogramBinLow(bin);
  const wwstd::uint64_t high = histogramBinHigh(bin);
  return static_cast<wwstd::uint32_t>((low + high) / 2);
}

/// splitmix64 finaliser, used by Selection::Hash: group g sampled iff splitmix64(launchId ^ g) % stride == 0.
WARPWATCH_HOST_DEVICE constexpr wwstd::uint64_t splitmix64(wwstd::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// Sampling selection and per-group losses.

/// Whether group `groupIndex` of launch `launchId` is sampled at one in `stride` groups (stride,
/// hash) or blocks of `groupsPerBlock` consecutive groups (block) (SPEC.md GroupSamples
/// `selection`); stride 0 = sampling off. Block with groupsPerBlock 0 samples nothing.
WARPWATCH_HOST_DEVICE inline bool isGroupSampled(Selection selection, wwstd::uint64_t launchId, wwstd::uint64_t groupIndex, wwstd::uint32_t stride,
                                                 wwstd::uint32_t groupsPerBlock = 0) {
  if (stride == 0) return false;
  if (selection == Selection::Stride) return groupIndex % stride == 0;
  if (selection == Selection::Block) return groupsPerBlock != 0 && splitmix64(launchId ^ (groupIndex / groupsPerBlock)) % stride == 0;
  return splitmix64(launchId ^ groupIndex) % stride == 0;
}

/// H(w) = n*max(w)/sum(w) of one group (model.md §1); an all-zero group has H = 1.
WARPWATCH_HOST_DEVICE inline double groupLossFromCounts(wwstd::uint64_t maxCount, wwstd::uint64_t sumCounts, unsigned groupSize) {
  if (sumCounts == 0) return 1.0;
  return static_cast<double>(groupSize) * static_cast<double>(maxCount) / static_cast<double>(sumCounts);
}

/// Measured H = C_SIMT/C_MIMD = n*(c_end - c0) / sum_i (c_i - c0) (model.md §3); C_MIMD = 0 counts 1.
WARPWATCH_HOST_DEVICE inline double measuredGroupLoss(wwstd::uint64_t simtClocks, wwstd::uint64_t mimdClocks) {
  if (mimdClocks == 0) return 1.0;
  return static_cast<double>(simtClocks) / static_cast<double>(mimdClocks);
}

// ---------------------------------------------------------------------------------------------
// What the probe writes (byte layout fixed: the Python host glue reads it back, python/warpwatch/probe_buffers.py).

/// Per-launch aggregate. `unsigned long long` so CUDA atomicAdd applies directly. Zero it
/// before a launch (all-zero bytes is the empty state). 19 528 bytes.
struct LaunchTotals {
  unsigned long long histogram[kHistogramBinCount];  ///< lanes per count bin
  unsigned long long groupsCounted;                  ///< groups aggregated below
  unsigned long long sumSimtClocks;                  ///< sum of n*(c_end - c0), ticks
  unsigned long long sumMimdClocks;                  ///< sum of sum_i (c_i - c0), ticks
  unsigned long long sumMaxCounts;                   ///< sum of max_i w_i
  unsigned long long sumCounts;                      ///< sum of sum_i w_i
  unsigned long long droppedSamples;                 ///< sampled groups that did not fit the sample buffer
  double sumMeasuredLoss;                            ///< sum of measured H
  double sumCountsLoss;                              ///< sum of H from counts
  unsigned int sampleSlotsClaimed;                   ///< slots claimed (may exceed capacity; min(capacity, this) are valid)
  unsigned int reserved;
};

/// One sampled group (SPEC.md GroupSamples sample). Lanes >= groupSize are unused. 408 bytes.
struct GroupSampleSlot {
  unsigned long long groupIndex;
  unsigned long long startClock;                          ///< c0, ticks
  unsigned long long endClock;                            ///< c_end, ticks
  unsigned int laneCounts[kMaxGroupSize];                 ///< w_i
  unsigned long long laneFinishClocks[kMaxGroupSize];     ///< c_i, ticks
};

/// Device pointers and sampling policy of one launch (by value into the kernel; probe.cuh reads
/// it). The recorder (recorder.hpp: LaunchTicket::buffers()) fills it; `totals` must be zeroed
/// before the launch. Here, not in probe-device.cuh, so host code compiled without nvcc can hold one.
struct ProbeBuffers {
  LaunchTotals* totals = nullptr;
  GroupSampleSlot* samples = nullptr;
  unsigned int sampleCapacity = 0;   ///< slots in `samples`; claims past it are counted, never written
  unsigned int samplingStride = 0;   ///< one group in this many is sampled; 0 = none
  unsigned long long launchId = 0;
  Selection selection = Selection::Hash;  ///< hash (default, unbiased) or stride (aliases with row-major 2-D layouts) or block
  unsigned int groupsPerBlock = 0;        ///< Selection::Block: consecutive groups per sampled block (warps of a thread block)
};

// ---------------------------------------------------------------------------------------------
// Thread numbering (launch-shape.hpp explains it and checks launch shapes on the host).

/// Where a thread sits for the probe: its global warp and its lane (0..31) in that warp.
struct ProbeThreadPosition {
  wwstd::uint64_t globalWarp;
  unsigned lane;
};

/// The probe's numbering of one thread (the hardware's warp formation, see launch-shape.hpp)
/// from CUDA's blockIdx (bx, by, bz), gridDim (gx, gy), threadIdx (tx, ty, tz) and blockDim
/// (dx, dy, dz). Needs a block of a whole number of warps (checkProbeLaunchShape).
///
/// Example: probeThreadPosition(1, 0, 0, 4, 1, 5, 1, 0, 16, 16, 1) == {8, 21}   // block 1 (8 warps before it), thread 5 + 16·1
WARPWATCH_HOST_DEVICE inline ProbeThreadPosition probeThreadPosition(unsigned bx, unsigned by, unsigned bz, unsigned gx, unsigned gy, unsigned tx, unsigned ty,
                                                                     unsigned tz, unsigned dx, unsigned dy, unsigned dz) {
  const wwstd::uint64_t block = static_cast<wwstd::uint64_t>(bx) + static_cast<wwstd::uint64_t>(gx) * (static_cast<wwstd::uint64_t>(by) + static_cast<wwstd::uint64_t>(gy) * bz);
  const unsigned threadsPerBlock = dx * dy * dz;
  const unsigned thread = tx + dx * (ty + dy * tz);
  const wwstd::uint64_t global = block * threadsPerBlock + thread;
  return ProbeThreadPosition{global >> 5, static_cast<unsigned>(global & 31u)};
}

}  // namespace warpwatch
