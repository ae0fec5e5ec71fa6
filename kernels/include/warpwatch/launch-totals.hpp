// Launch totals and group samples: the per-launch aggregate that the probe (GPU) or the CPU
// lockstep backend fills, and that the recorder turns into frames (protocol/SPEC.md).
//
// The structs and the per-group functions (bins, hashes, losses) are in device-common.hpp, plain
// C++17, nvcc- and NVRTC-compatible, so the device probe and the CPU backend use the same code;
// this header adds the host-side sampling-stride fit.
#pragma once

#include <cmath>

#include "device-common.hpp"  // constants, bins, splitmix64, Selection, LaunchTotals, ProbeBuffers
#include "frame.hpp"

namespace warpwatch {

// isGroupSampled, groupLossFromCounts, measuredGroupLoss, LaunchTotals, GroupSampleSlot and
// ProbeBuffers are in device-common.hpp (shared with the device probe and NVRTC).

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

}  // namespace warpwatch
