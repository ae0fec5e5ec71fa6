// Histogram bins as the probe and the CPU backend fill them (SPEC.md "Histogram bins").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>

#include "warpwatch/launch-accumulator.hpp"

namespace ww = warpwatch;

namespace {
// Independent bin definition: floating-point log2 instead of bit tricks.
std::uint32_t referenceBin(std::uint32_t v) {
  if (v < 1024) return v;
  const int e = static_cast<int>(std::floor(std::log2(static_cast<double>(v))));
  const double width = std::ldexp(1.0, e - 6);
  const auto sub = static_cast<std::uint32_t>(std::floor((static_cast<double>(v) - std::ldexp(1.0, e)) / width));
  return 1024u + static_cast<std::uint32_t>(e - 10) * 64u + sub;
}
}  // namespace

TEST(HistogramBins, ExactBelow1024AndLogLinearAbove) {
  for (std::uint32_t v = 0; v < 70000; ++v) ASSERT_EQ(ww::histogramBinOf(v), referenceBin(v)) << v;
  for (std::uint32_t v : {1u << 20, (1u << 20) + 12345u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    EXPECT_EQ(ww::histogramBinOf(v), referenceBin(v)) << v;
  }
  EXPECT_EQ(ww::histogramBinOf(0xFFFFFFFFu), ww::kHistogramBinCount - 1);
}

TEST(HistogramBins, RelativeWidthBelowOneSixtyFourth) {
  for (std::uint32_t bin = 1024; bin < ww::kHistogramBinCount; bin += 37) {
    const double low = ww::histogramBinLow(bin);
    const double high = ww::histogramBinHigh(bin);
    EXPECT_LT((high - low) / low, 1.0 / 64.0) << bin;
    EXPECT_EQ(ww::histogramBinOf(static_cast<std::uint32_t>(low)), bin);
    EXPECT_EQ(ww::histogramBinOf(static_cast<std::uint32_t>(high)), bin);
  }
}

TEST(LaunchAccumulatorHistogram, CountsEveryLaneOfEveryGroupOnce) {
  ww::LaunchAccumulator acc(4, 7, {ww::Selection::Stride, 0}, 16);
  const std::uint32_t groups[3][4] = {{0, 5, 5, 2000}, {1023, 1024, 1039, 1040}, {7, 7, 7, 7}};
  std::map<std::uint32_t, std::uint64_t> expected;
  for (std::uint64_t g = 0; g < 3; ++g) {
    ww::GroupMeasurement m;
    m.groupIndex = g;
    for (int lane = 0; lane < 4; ++lane) {
      m.laneCounts[lane] = groups[g][lane];
      expected[referenceBin(groups[g][lane])] += 1;
    }
    acc.addGroup(m);
  }
  std::uint64_t total = 0;
  for (std::uint32_t bin = 0; bin < ww::kHistogramBinCount; ++bin) {
    const auto it = expected.find(bin);
    EXPECT_EQ(acc.totals().histogram[bin], it == expected.end() ? 0u : it->second) << bin;
    total += acc.totals().histogram[bin];
  }
  EXPECT_EQ(total, 12u);
  // 1024 and 1039 share the first log-linear bin (width 16); 1040 starts the next.
  EXPECT_EQ(acc.totals().histogram[1024], 2u);
  EXPECT_EQ(acc.totals().histogram[1025], 1u);
}
