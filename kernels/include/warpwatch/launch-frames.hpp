// Turning one launch's totals and samples into frames (protocol/SPEC.md) and handing them to
// the writer thread. Shared by the CUDA recorder (recorder.hpp) and the CPU lockstep backend,
// so both produce identical frames apart from `source` and the clock units.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frame.hpp"
#include "launch-totals.hpp"
#include "sink.hpp"

namespace warpwatch {

/// What a launch is, apart from what its groups measured.
struct LaunchInfo {
  std::string job = "local";        ///< 1..255 bytes, no '/'
  std::string kernel = "kernel";    ///< 1..255 bytes
  Source source = Source::Cpu;
  unsigned groupSize = 32;          ///< n, 1..32
  bool sync = true;                 ///< group synchronised before its end clock
  DeviceInfo device;
  std::uint64_t launchId = 0;
  std::uint64_t groupCount = 0;         ///< groups in the launch (an aggregate: in all its launches)
  /// Groups of the launch the samples come from, when that differs from groupCount (an
  /// aggregate of several launches samples its first launch only); 0 = groupCount.
  std::uint64_t samplesGroupCount = 0;
  std::uint64_t startUnixNanos = 0;
  std::uint64_t endUnixNanos = 0;
  Selection selection = Selection::Hash;  ///< default hash (unbiased); stride aliases with 2-D layouts
  std::uint32_t samplingStride = 64;  ///< one in this many groups sampled; 0 = sampling off
  std::uint16_t groupsPerBlock = 0;   ///< Selection::Block: consecutive groups per sampled block (1..65535); else 0
};

/// Unix time now, in ns (host wall clock; for frame timestamps only, never for H).
inline std::uint64_t unixNanosNow() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

/// Builds the LaunchSummary frame of a launch (sparse histogram from the dense device bins).
inline LaunchSummary buildLaunchSummary(const LaunchInfo& info, const LaunchTotals& totals, std::uint32_t frameSequence) {
  LaunchSummary summary;
  summary.identity = {info.job, info.kernel, info.launchId, frameSequence, info.source, static_cast<std::uint8_t>(info.groupSize),
                      info.sync, info.device, info.startUnixNanos, info.endUnixNanos};
  summary.groupCount = info.groupCount;
  summary.groupsCounted = totals.groupsCounted;
  summary.sumSimtClocks = totals.sumSimtClocks;
  summary.sumMimdClocks = totals.sumMimdClocks;
  summary.sumMeasuredLoss = totals.sumMeasuredLoss;
  summary.sumCountsLoss = totals.sumCountsLoss;
  summary.sumMaxCounts = totals.sumMaxCounts;
  summary.sumCounts = totals.sumCounts;
  summary.droppedSamples = totals.droppedSamples;
  for (std::uint32_t bin = 0; bin < kHistogramBinCount; ++bin) {
    if (totals.histogram[bin] != 0) summary.histogram.push_back({bin, totals.histogram[bin]});
  }
  return summary;
}

/// Builds the GroupSamples frames of a launch: at most 4096 groups per frame; none when no sample.
/// `frameSequence` is advanced by the number of frames built.
inline std::vector<GroupSamples> buildGroupSamples(const LaunchInfo& info, const GroupSampleSlot* samples, std::size_t sampleCount,
                                                   std::uint32_t& frameSequence) {
  std::vector<GroupSamples> frames;
  for (std::size_t first = 0; first < sampleCount; first += kMaxGroupSamples) {
    GroupSamples frame;
    frame.identity = {info.job, info.kernel, info.launchId, frameSequence++, info.source, static_cast<std::uint8_t>(info.groupSize),
                      info.sync, info.device, info.startUnixNanos, info.endUnixNanos};
    frame.groupCount = info.samplesGroupCount != 0 ? info.samplesGroupCount : info.groupCount;
    frame.selection = info.selection;
    frame.groupsPerBlock = info.selection == Selection::Block ? info.groupsPerBlock : 0;
    frame.samplingStride = std::max<std::uint32_t>(info.samplingStride, 1);
    const std::size_t last = std::min<std::size_t>(sampleCount, first + kMaxGroupSamples);
    for (std::size_t i = first; i < last; ++i) {
      const GroupSampleSlot& slot = samples[i];
      GroupSample sample;
      sample.groupIndex = slot.groupIndex;
      sample.startClock = slot.startClock;
      sample.endClock = slot.endClock;
      sample.laneCounts.assign(slot.laneCounts, slot.laneCounts + info.groupSize);
      sample.laneFinishClocks.assign(slot.laneFinishClocks, slot.laneFinishClocks + info.groupSize);
      frame.groups.push_back(std::move(sample));
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

/// Encodes launches into frames and submits them to a FrameWriter (bounded queue, own thread).
/// Used by both backends; never blocks the caller on the sink.
///
/// Example:
///   LaunchRecorder recorder(openSink("frames.bin"), 256);
///   recorder.recordLaunch(info, accumulator.totals(), accumulator.samples().data(), accumulator.samples().size());
///   recorder.close();
class LaunchRecorder {
 public:
  LaunchRecorder(std::unique_ptr<Sink> sink, std::size_t queueCapacityFrames) : writer_(std::move(sink), queueCapacityFrames) {}

  /// Encodes the summary and sample frames of one launch and queues them. Returns the number of
  /// frames queued (frames refused by a full queue are counted in stats().droppedQueueFull).
  /// Throws FrameError when the launch data violates the format (a bug, not a runtime condition).
  std::size_t recordLaunch(const LaunchInfo& info, const LaunchTotals& totals, const GroupSampleSlot* samples, std::size_t sampleCount) {
    std::size_t queued = 0;
    std::uint32_t sequence = frameSequence_;
    const LaunchSummary summary = buildLaunchSummary(info, totals, sequence++);
    const std::size_t usable = std::min<std::size_t>(sampleCount, static_cast<std::size_t>(totals.sampleSlotsClaimed));
    const std::vector<GroupSamples> sampleFrames = buildGroupSamples(info, samples, usable, sequence);
    std::vector<std::vector<std::uint8_t>> encoded;
    encoded.push_back(encodeFrame(summary));
    for (const auto& frame : sampleFrames) encoded.push_back(encodeFrame(frame));
    frameSequence_ = sequence;  // only after every frame encoded: a throw leaves no gap
    for (auto& bytes : encoded) queued += writer_.submit(std::move(bytes)) ? 1 : 0;
    launches_ += 1;
    return queued;
  }
  /// Drains every queued frame into the sink (unbounded: the CPU backend's files), stops the writer.
  void close() { writer_.close(); }
  /// As close(), at most about `timeout` (FrameWriter::close(timeout)); true when every frame reached the sink.
  bool close(std::chrono::milliseconds timeout) { return writer_.close(timeout); }
  WriterStats stats() const { return writer_.stats(); }
  std::uint64_t launches() const { return launches_; }
  const Sink& sink() const { return writer_.sink(); }

 private:
  FrameWriter writer_;
  std::uint32_t frameSequence_ = 0;
  std::uint64_t launches_ = 0;
};

}  // namespace warpwatch
