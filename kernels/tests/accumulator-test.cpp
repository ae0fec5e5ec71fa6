// Group reductions of the CPU path (model.md §1, §3) and the bounded sample buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "warpwatch/distributions.hpp"
#include "warpwatch/launch-accumulator.hpp"

namespace ww = warpwatch;

namespace {
ww::GroupMeasurement makeGroup(std::uint64_t index, unsigned n, ww::Rng& rng) {
  ww::GroupMeasurement m;
  m.groupIndex = index;
  m.startClock = 1000 + rng.next() % 1000;
  std::uint64_t latest = m.startClock;
  for (unsigned lane = 0; lane < n; ++lane) {
    m.laneCounts[lane] = static_cast<std::uint32_t>(rng.next() % 50);
    m.laneFinishClocks[lane] = m.startClock + 10 * m.laneCounts[lane] + rng.next() % 7;
    latest = std::max(latest, m.laneFinishClocks[lane]);
  }
  m.endClock = latest + 3;
  return m;
}
}  // namespace

TEST(LaunchAccumulator, SumsMatchBruteForceOverGroups) {
  for (unsigned n : {1u, 3u, 8u, 32u}) {
    ww::Rng rng(n);
    ww::LaunchAccumulator acc(n, 42, {ww::Selection::Stride, 0}, 0);
    double countsLoss = 0, measuredLoss = 0;
    std::uint64_t simt = 0, mimd = 0, maxSum = 0, countSum = 0;
    for (std::uint64_t g = 0; g < 200; ++g) {
      const ww::GroupMeasurement m = makeGroup(g, n, rng);
      acc.addGroup(m);
      std::uint64_t mx = 0, sum = 0, groupMimd = 0;
      for (unsigned lane = 0; lane < n; ++lane) {
        mx = std::max<std::uint64_t>(mx, m.laneCounts[lane]);
        sum += m.laneCounts[lane];
        groupMimd += m.laneFinishClocks[lane] - m.startClock;
      }
      const std::uint64_t groupSimt = n * (m.endClock - m.startClock);
      countsLoss += sum == 0 ? 1.0 : static_cast<double>(n * mx) / static_cast<double>(sum);
      measuredLoss += groupMimd == 0 ? 1.0 : static_cast<double>(groupSimt) / static_cast<double>(groupMimd);
      simt += groupSimt;
      mimd += groupMimd;
      maxSum += mx;
      countSum += sum;
    }
    const ww::LaunchTotals& t = acc.totals();
    EXPECT_EQ(t.groupsCounted, 200u);
    EXPECT_EQ(t.sumSimtClocks, simt);
    EXPECT_EQ(t.sumMimdClocks, mimd);
    EXPECT_EQ(t.sumMaxCounts, maxSum);
    EXPECT_EQ(t.sumCounts, countSum);
    EXPECT_NEAR(t.sumCountsLoss, countsLoss, 1e-9 * countsLoss);
    EXPECT_NEAR(t.sumMeasuredLoss, measuredLoss, 1e-9 * measuredLoss);
  }
}

TEST(LaunchAccumulator, GroupLossConventions) {
  ww::LaunchAccumulator acc(4, 1, {ww::Selection::Stride, 0}, 0);
  ww::GroupMeasurement zero;  // all-zero counts, no elapsed time: H = 1 both ways
  acc.addGroup(zero);
  EXPECT_DOUBLE_EQ(acc.totals().sumCountsLoss, 1.0);
  EXPECT_DOUBLE_EQ(acc.totals().sumMeasuredLoss, 1.0);
  ww::GroupMeasurement one;  // counts (8,0,0,0): H = 4*8/8 = 4 = n, the worst case
  one.laneCounts[0] = 8;
  one.startClock = 100;
  one.laneFinishClocks[0] = 180;
  one.laneFinishClocks[1] = one.laneFinishClocks[2] = one.laneFinishClocks[3] = 100;
  one.endClock = 180;
  acc.addGroup(one);
  EXPECT_DOUBLE_EQ(acc.totals().sumCountsLoss, 1.0 + 4.0);
  EXPECT_DOUBLE_EQ(acc.totals().sumMeasuredLoss, 1.0 + 4.0 * 80.0 / 80.0);
  EXPECT_EQ(ww::groupLossFromCounts(10, 40, 4), 1.0);
}

TEST(LaunchAccumulator, RejectsGroupSizeOutsideOneToThirtyTwo) {
  EXPECT_THROW(ww::LaunchAccumulator(0, 1, {}, 1), std::invalid_argument);
  EXPECT_THROW(ww::LaunchAccumulator(33, 1, {}, 1), std::invalid_argument);
}

TEST(SampleBuffer, OverflowIsCountedAndNeverWritesPastCapacity) {
  ww::Rng rng(3);
  ww::LaunchAccumulator acc(8, 9, {ww::Selection::Stride, 2}, 3);
  for (std::uint64_t g = 0; g < 20; ++g) acc.addGroup(makeGroup(g, 8, rng));
  // Stride 2 selects groups 0, 2, ..., 18: 10 groups; 3 fit, 7 are counted as dropped.
  EXPECT_EQ(acc.samples().size(), 3u);
  EXPECT_EQ(acc.totals().sampleSlotsClaimed, 10u);
  EXPECT_EQ(acc.totals().droppedSamples, 7u);
  EXPECT_EQ(acc.samples()[0].groupIndex, 0u);
  EXPECT_EQ(acc.samples()[2].groupIndex, 4u);
  EXPECT_LE(acc.samples().capacity(), 4096u);
}

TEST(SampleBuffer, HashSelectionFollowsSplitmix64) {
  ww::Rng rng(5);
  const std::uint64_t launchId = 0xDEADBEEFull;
  ww::LaunchAccumulator acc(2, launchId, {ww::Selection::Hash, 4}, 10000);
  std::uint64_t expected = 0;
  for (std::uint64_t g = 0; g < 2000; ++g) {
    acc.addGroup(makeGroup(g, 2, rng));
    if (ww::splitmix64(launchId ^ g) % 4 == 0) ++expected;
  }
  EXPECT_EQ(acc.samples().size(), expected);
  EXPECT_NEAR(static_cast<double>(expected), 500.0, 5 * std::sqrt(2000 * 0.25 * 0.75));  // binomial(2000, 1/4), 5 sigma
  EXPECT_EQ(acc.totals().droppedSamples, 0u);
}

TEST(SampleBuffer, FitSamplingStrideThinsOnlyWhenTheSelectionWouldOverflow) {
  using ww::Selection;
  // Fits: the requested stride stays (and 0 = off stays off).
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 1, 2048, 4096), 1u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Stride, 1, 4096, 4096), 1u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 0, 1u << 20, 4096), 0u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 64, 1u << 20, 4096), 291u);  // 2^20 / 3615 = 290.06
  // Stride: ceil(groups / capacity); ceil(groups / stride) then never exceeds the capacity.
  EXPECT_EQ(ww::fitSamplingStride(Selection::Stride, 1, 4097, 4096), 2u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Stride, 1, 8192, 4096), 2u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Stride, 1, 8193, 4096), 3u);
  // Hash: mu + 8 sqrt(mu) <= 4096 <=> sqrt(mu) <= (-8 + sqrt(16448)) / 2, mu <= 3615.0; 8192 / 3615 -> 3.
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 1, 3615, 4096), 1u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 1, 3616, 4096), 2u);
  EXPECT_EQ(ww::fitSamplingStride(Selection::Hash, 1, 8192, 4096), 3u);
  // Capped at the largest stride a frame holds.
  EXPECT_EQ(ww::fitSamplingStride(Selection::Stride, 1, std::uint64_t{1} << 52, 1), 4294967295u);
  // Every stride selection at the fitted stride fits, over a range of group counts.
  for (std::uint64_t groups = 1; groups < 20000; groups += 37) {
    const std::uint32_t k = ww::fitSamplingStride(Selection::Stride, 1, groups, 1000);
    EXPECT_LE((groups + k - 1) / k, 1000u) << groups;
  }
}

TEST(SampleBuffer, HashAtTheFittedStrideDoesNotOverflowTheBuffer) {
  // 8192 groups at rate 1 into 4096 slots: thinned to 3, about 2731 sampled, nothing dropped.
  const std::uint32_t stride = ww::fitSamplingStride(ww::Selection::Hash, 1, 8192, 4096);
  ww::LaunchAccumulator acc(4, 0x1234, {ww::Selection::Hash, stride}, 4096);
  for (std::uint64_t g = 0; g < 8192; ++g) {
    ww::GroupMeasurement m;
    m.groupIndex = g;
    m.laneCounts[0] = 1;
    acc.addGroup(m);
  }
  EXPECT_EQ(acc.totals().droppedSamples, 0u);
  EXPECT_EQ(acc.samples().size(), acc.totals().sampleSlotsClaimed);
  EXPECT_GT(acc.samples().size(), 2400u);
  EXPECT_LT(acc.samples().size(), 3100u);
}
