// The frames behind protocol/vectors/cpp-*.bin. protocol/golden-vectors.test.ts checks the decoded
// values field by field against literals, so change both together (and regenerate with
// `ww_vectors write protocol/vectors`).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "warpwatch/frame.hpp"

namespace warpwatch::golden {

inline FrameIdentity cpuIdentity(std::uint32_t frameSequence) {
  FrameIdentity id;
  id.job = "golden-job";
  id.kernel = "matpow";
  id.launchId = 0x0123456789ABCDEFull;
  id.frameSequence = frameSequence;
  id.source = Source::Cpu;
  id.groupSize = 4;
  id.sync = true;
  id.device.name = "cpu-lockstep";
  for (std::uint8_t i = 0; i < 16; ++i) id.device.uuid[i] = i;
  id.device.computeCapabilityMajor = 0;
  id.device.computeCapabilityMinor = 0;
  id.device.clockHz = 1000000000;
  id.startUnixNanos = 1700000000000000000ull;
  id.endUnixNanos = 1700000000123456789ull;
  return id;
}

// Three groups of 4 lanes, counts {1,2,3,4}, {0,0,0,0}, {5,1030,2000,5}.
inline LaunchSummary launchSummary() {
  LaunchSummary f;
  f.identity = cpuIdentity(7);
  f.groupCount = 3;
  f.groupsCounted = 3;
  f.sumSimtClocks = 123456;
  f.sumMimdClocks = 100000;
  f.sumMeasuredLoss = 3.75;
  f.sumCountsLoss = 1.6 + 1.0 + 8000.0 / 3040.0;
  f.sumMaxCounts = 4 + 0 + 2000;
  f.sumCounts = 10 + 0 + 3040;
  f.droppedSamples = 1;
  f.histogram = {{0, 4}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 2}, {histogramBinOf(1030), 1}, {histogramBinOf(2000), 1}};
  return f;
}

inline GroupSamples groupSamples() {
  GroupSamples f;
  f.identity = cpuIdentity(8);
  f.groupCount = 3;
  f.selection = Selection::Hash;
  f.samplingStride = 2;
  GroupSample a;
  a.groupIndex = 0;
  a.startClock = 1000;
  a.endClock = 1100;
  a.laneCounts = {1, 2, 3, 4};
  a.laneFinishClocks = {1010, 1020, 1030, 1040};
  GroupSample b;
  b.groupIndex = 2;
  b.startClock = 0x8000000000000000ull;
  b.endClock = 0xFFFFFFFFFFFFFFFFull;
  b.laneCounts = {5, 1030, 2000, 0xFFFFFFFFu};
  b.laneFinishClocks = {0x8000000000000005ull, 0x8000000000000406ull, 0x80000000000007D0ull, 0xFFFFFFFFFFFFFFFEull};
  f.groups = {a, b};
  return f;
}

// Limits and non-ASCII strings: u64 max ids/clocks, 2^53-1 counts, 32 lanes, the last bin.
inline LaunchSummary extremes() {
  LaunchSummary f;
  f.identity.job = "j\xC3\xB6" "b-\xE6\x9D\xB1\xE4\xBA\xAC";  // "jöb-東京"
  f.identity.kernel = "ns::kernel<float>";
  f.identity.launchId = 0xFFFFFFFFFFFFFFFFull;
  f.identity.frameSequence = 0xFFFFFFFFu;
  f.identity.source = Source::Cuda;
  f.identity.groupSize = 32;
  f.identity.sync = false;
  f.identity.device.name = "";
  f.identity.device.uuid.fill(0xFF);
  f.identity.device.computeCapabilityMajor = 9;
  f.identity.device.computeCapabilityMinor = 0;
  f.identity.device.clockHz = 1755000000;
  f.identity.startUnixNanos = 0;
  f.identity.endUnixNanos = 0xFFFFFFFFFFFFFFFFull;
  f.groupCount = kMaxCount;
  f.groupsCounted = (std::uint64_t{1} << 48) - 1;
  f.sumSimtClocks = 0xFFFFFFFFFFFFFFFFull;
  f.sumMimdClocks = 0;
  f.sumMeasuredLoss = 1.5e300;
  f.sumCountsLoss = 0.0;
  f.sumMaxCounts = kMaxCount;
  f.sumCounts = kMaxCount;
  f.droppedSamples = kMaxCount;
  f.histogram = {{kHistogramBinCount - 1, f.groupsCounted * 32}};
  return f;
}

inline GroupSamples emptySamples() {
  GroupSamples f;
  f.identity = cpuIdentity(9);
  f.identity.groupSize = 1;
  f.groupCount = 0;
  f.selection = Selection::Stride;
  f.samplingStride = 1;
  return f;
}

// File name -> bytes of protocol/vectors/cpp-*.bin.
inline std::vector<std::pair<std::string, std::vector<std::uint8_t>>> vectorFiles() {
  std::vector<std::uint8_t> stream;
  appendFrame(stream, launchSummary());
  appendFrame(stream, groupSamples());
  appendFrame(stream, extremes());
  appendFrame(stream, emptySamples());
  return {
      {"cpp-launch-summary.bin", encodeFrame(launchSummary())},
      {"cpp-group-samples.bin", encodeFrame(groupSamples())},
      {"cpp-extremes.bin", encodeFrame(extremes())},
      {"cpp-stream.bin", stream},
  };
}

}  // namespace warpwatch::golden
