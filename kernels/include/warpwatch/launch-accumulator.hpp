// Host-side launch accumulator: the CPU backend's equivalent of the device probe's atomics.
// It fills the same LaunchTotals / GroupSampleSlot structures, so the frame builder and the
// tests treat both sources alike. Plain C++17, no CUDA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch-totals.hpp"

namespace warpwatch {

/// What one group measured (model.md §3): counts w_i, start clock c0, finish clocks c_i, end clock c_end.
struct GroupMeasurement {
  std::uint64_t groupIndex = 0;
  std::uint64_t startClock = 0;
  std::uint64_t endClock = 0;
  std::uint32_t laneCounts[kMaxGroupSize] = {};
  std::uint64_t laneFinishClocks[kMaxGroupSize] = {};
};

/// Which groups go into GroupSamples frames: one in `stride` (0 = none), chosen by `selection`.
struct SamplingPolicy {
  Selection selection = Selection::Hash;  ///< default hash: stride aliases with row-major 2-D layouts
  std::uint32_t stride = 64;
  std::uint32_t groupsPerBlock = 0;  ///< Selection::Block: consecutive groups per sampled block
};

/// Aggregates the groups of one launch into LaunchTotals and a bounded sample buffer.
/// The sample buffer never grows past `sampleCapacity`; a sampled group that does not fit is
/// counted in totals().droppedSamples (style.md: bounded buffers count their overflow).
///
/// Example:
///   LaunchAccumulator acc(32, launchId, {Selection::Stride, 64}, 1024);
///   acc.addGroup(measurement);           // once per group
///   encode(acc.totals(), acc.samples());  // see launch-frames.hpp
class LaunchAccumulator {
 public:
  /// Throws std::invalid_argument when groupSize is outside 1..32.
  LaunchAccumulator(unsigned groupSize, std::uint64_t launchId, SamplingPolicy sampling, size_t sampleCapacity)
      : groupSize_(groupSize), launchId_(launchId), sampling_(sampling), sampleCapacity_(sampleCapacity),
        totals_(std::make_unique<LaunchTotals>()) {
    if (groupSize < 1 || groupSize > kMaxGroupSize) {
      throw std::invalid_argument("group size must be 1..32, got " + std::to_string(groupSize));
    }
    *totals_ = LaunchTotals{};
    samples_.reserve(std::min<size_t>(sampleCapacity, 4096));
  }

  /// Adds one group: histogram of its lane counts, C_SIMT, C_MIMD, both H values, and a sample when selected.
  void addGroup(const GroupMeasurement& group) {
    LaunchTotals& t = *totals_;
    std::uint64_t maxCount = 0;
    std::uint64_t sumCounts = 0;
    std::uint64_t mimdClocks = 0;
    for (unsigned lane = 0; lane < groupSize_; ++lane) {
      const std::uint32_t count = group.laneCounts[lane];
      t.histogram[histogramBinOf(count)] += 1;
      maxCount = std::max<std::uint64_t>(maxCount, count);
      sumCounts += count;
      // A finish clock before the start (impossible with a monotonic clock) counts as zero time.
      if (group.laneFinishClocks[lane] > group.startClock) mimdClocks += group.laneFinishClocks[lane] - group.startClock;
    }
    const std::uint64_t span = group.endClock > group.startClock ? group.endClock - group.startClock : 0;
    const std::uint64_t simtClocks = static_cast<std::uint64_t>(groupSize_) * span;
    t.groupsCounted += 1;
    t.sumSimtClocks += simtClocks;
    t.sumMimdClocks += mimdClocks;
    t.sumMaxCounts += maxCount;
    t.sumCounts += sumCounts;
    t.sumMeasuredLoss += measuredGroupLoss(simtClocks, mimdClocks);
    t.sumCountsLoss += groupLossFromCounts(maxCount, sumCounts, groupSize_);
    if (isGroupSampled(sampling_.selection, launchId_, group.groupIndex, sampling_.stride, sampling_.groupsPerBlock)) {
      t.sampleSlotsClaimed += 1;
      if (samples_.size() < sampleCapacity_) {
        GroupSampleSlot slot{};
        slot.groupIndex = group.groupIndex;
        slot.startClock = group.startClock;
        slot.endClock = group.endClock;
        for (unsigned lane = 0; lane < groupSize_; ++lane) {
          slot.laneCounts[lane] = group.laneCounts[lane];
          slot.laneFinishClocks[lane] = group.laneFinishClocks[lane];
        }
        samples_.push_back(slot);
      } else {
        t.droppedSamples += 1;
      }
    }
  }

  unsigned groupSize() const { return groupSize_; }
  std::uint64_t launchId() const { return launchId_; }
  const SamplingPolicy& sampling() const { return sampling_; }
  const LaunchTotals& totals() const { return *totals_; }
  /// The samples that fit, in the order groups were added (at most sampleCapacity).
  const std::vector<GroupSampleSlot>& samples() const { return samples_; }

 private:
  unsigned groupSize_;
  std::uint64_t launchId_;
  SamplingPolicy sampling_;
  size_t sampleCapacity_;
  std::unique_ptr<LaunchTotals> totals_;  // ~20 KB: on the heap
  std::vector<GroupSampleSlot> samples_;
};

}  // namespace warpwatch
