// Launch totals and group samples: the per-launch aggregate that the probe (GPU) or the CPU
// lockstep backend fills, and that the recorder turns into frames (protocol/SPEC.md).
//
// Plain C++17 and CUDA-compatible (every function is __host__ __device__ under nvcc), so the
// device probe and the CPU backend compute bins, hashes and per-group losses with the same code.
#pragma once

#include <cmath>

#include "frame.hpp"  // constants, histogramBinOf, splitmix64, Selection (protocol helper's header)

#if defined(__CUDACC__)
#define WW_HD __host__ __device__
#else
#define WW_HD
#endif

namespace warpwatch {

/// Whether group `groupIndex` of launch `launchId` is sampled at one in `stride` groups (stride,
/// hash) or blocks of `groupsPerBlock` consecutive groups (block) (SPEC.md GroupSamples
/// `selection`); stride 0 = sampling off. Block with groupsPerBlock 0 samples nothing.
WW_HD inline bool isGroupSampled(Selection selection, std::uint64_t launchId, std::uint64_t groupIndex, std::uint32_t stride,
                                 std::uint32_t groupsPerBlock = 0) {
  if (stride == 0) return false;
  if (selection == Selection::Stride) return groupIndex % stride == 0;
  if (selection == Selection::Block) return groupsPerBlock != 0 && splitmix64(launchId ^ (groupIndex / groupsPerBlock)) % stride == 0;
  return splitmix64(launchId ^ groupIndex) % stride == 0;
}

/// The sampling stride a launch of `groupCount` groups uses so that its sampled groups fit a
/// buffer of `capacity` slots without overflow (SPEC.md GroupSamples `samplingStride`): the
/// requested `stride` when it fits, else the smallest larger one that does. Without it a launch
/// that selects more groups than fit keeps the groups that claim a slot first (on the CPU the
/// lowest indices, on a GPU the earliest-finishing groups): a biased sample (sorted escape would
/// keep its cheapest groups). Thinning the rate instead keeps selection unbiased, and the frame
/// records the stride actually used, so every reader weights the samples right.
///   stride selection: ceil(groupCount / stride) groups are sampled, so stride >= ceil(groupCount / capacity)
///     never overflows;
///   hash selection: the count is Binomial(groupCount, 1/stride); the stride is raised until its
///     mean mu satisfies mu + 8*sqrt(mu) <= capacity (an overflow is then a > 8-sigma event; one
///     that still happens is counted in droppedSamples as before).
/// stride 0 (sampling off) stays 0; the result is at most 2^32-1.
/// Example: fitSamplingStride(Selection::Hash, 1, 16384, 4096) == 5 (mean 3277 groups sampled).
inline std::uint32_t fitSamplingStride(Selection selection, std::uint32_t stride, std::uint64_t groupCount, std::uint64_t capacity,
                                       std::uint32_t groupsPerBlock = 0) {
  if (stride == 0 || groupCount == 0) return stride;
  if (capacity == 0) return stride;  // nothing fits whatever the rate: every claim is counted as dropped
  // Block: the same rule over blocks (units of groupsPerBlock groups) and the capacity in blocks.
  const bool block = selection == Selection::Block && groupsPerBlock > 0;
  const double units = block ? std::ceil(static_cast<double>(groupCount) / groupsPerBlock) : static_cast<double>(groupCount);
  const double slots = block ? std::floor(static_cast<double>(capacity) / groupsPerBlock) : static_cast<double>(capacity);
  if (slots < 1) return 4294967295u;  // not even one block fits: sample (almost) none rather than a partial block
  double fits = slots;
  if (selection == Selection::Hash || block) {
    const double root = (-8.0 + std::sqrt(64.0 + 4.0 * slots)) / 2.0;  // sqrt(mu) of mu + 8 sqrt(mu) = slots
    fits = root * root;
  }
  const double needed = std::ceil(units / fits);
  if (needed <= static_cast<double>(stride)) return stride;
  return needed >= 4294967295.0 ? 4294967295u : static_cast<std::uint32_t>(needed);
}

/// H(w) = n*max(w)/sum(w) of one group (model.md §1); an all-zero group has H = 1.
WW_HD inline double groupLossFromCounts(std::uint64_t maxCount, std::uint64_t sumCounts, unsigned groupSize) {
  if (sumCounts == 0) return 1.0;
  return static_cast<double>(groupSize) * static_cast<double>(maxCount) / static_cast<double>(sumCounts);
}

/// Measured H = C_SIMT/C_MIMD = n*(c_end - c0) / sum_i (c_i - c0) (model.md §3); C_MIMD = 0 counts 1.
WW_HD inline double measuredGroupLoss(std::uint64_t simtClocks, std::uint64_t mimdClocks) {
  if (mimdClocks == 0) return 1.0;
  return static_cast<double>(simtClocks) / static_cast<double>(mimdClocks);
}

/// Per-launch aggregate. `unsigned long long` so CUDA atomicAdd applies directly. Zero it
/// before a launch (all-zero bytes is the empty state).
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

/// One sampled group (SPEC.md GroupSamples sample). Lanes >= groupSize are unused.
struct GroupSampleSlot {
  unsigned long long groupIndex;
  unsigned long long startClock;                          ///< c0, ticks
  unsigned long long endClock;                            ///< c_end, ticks
  unsigned int laneCounts[kMaxGroupSize];                 ///< w_i
  unsigned long long laneFinishClocks[kMaxGroupSize];     ///< c_i, ticks
};

/// Device pointers and sampling policy of one launch (by value into the kernel; probe.cuh reads
/// it). The recorder (recorder.hpp: LaunchTicket::buffers()) fills it; `totals` must be zeroed
/// before the launch. Here, not in probe.cuh, so host code compiled without nvcc can hold one.
struct ProbeBuffers {
  LaunchTotals* totals = nullptr;
  GroupSampleSlot* samples = nullptr;
  unsigned int sampleCapacity = 0;   ///< slots in `samples`; claims past it are counted, never written
  unsigned int samplingStride = 0;   ///< one group in this many is sampled; 0 = none
  unsigned long long launchId = 0;
  Selection selection = Selection::Hash;  ///< hash (default, unbiased) or stride (aliases with row-major 2-D layouts) or block
  unsigned int groupsPerBlock = 0;        ///< Selection::Block: consecutive groups per sampled block (warps of a thread block)
};

}  // namespace warpwatch
