// Workload helpers shared by the CPU and CUDA programs: divergence patterns, escape geometry,
// and the sorted unit order.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "warpwatch/divergence-patterns.hpp"
#include "warpwatch/escape-geometry.hpp"

namespace ww = warpwatch;

TEST(DivergencePatterns, BoundsAreThirtyTwoThenDecreasingForKLanes) {
  for (unsigned k = 0; k < 32; ++k) {
    std::set<std::uint32_t> exitsBelowMax;
    for (unsigned lane = 0; lane < 32; ++lane) {
      const std::uint32_t b = ww::divergenceBound(k, lane);
      if (lane < 32 - k) EXPECT_EQ(b, 32u);
      else EXPECT_EQ(b, 32u - (lane - (32 - k)) - 1u);
      if (b < 32) exitsBelowMax.insert(b);
    }
    EXPECT_EQ(exitsBelowMax.size(), k);  // D(w) = k distinct exits below the maximum
  }
  EXPECT_EQ(ww::divergenceBound(31, 31), 1u);
  EXPECT_EQ(ww::divergenceCsvRow(true, 3, 1234, 1000000000, "cpu", 0), "nested-k3,nested,3,,1234,1000000000,cpu,0");
}

TEST(EscapeGeometry, EscapeCountsAreDataDrivenAndBounded) {
  EXPECT_EQ(ww::escapeCount(0.0f, 0.0f, 100), 100u);  // inside the set: hits the cap
  EXPECT_EQ(ww::escapeCount(2.0f, 2.0f, 100), 1u);    // escapes at once
  EXPECT_EQ(ww::escapeCount(-2.5f, 0.0f, 100), 1u);
  // c = 0.3: z grows slowly and escapes after a few dozen steps (brute-force in double).
  double zr = 0;
  unsigned expected = 0;
  do { zr = zr * zr + 0.3; ++expected; } while (zr * zr <= 4.0 && expected < 1000);
  EXPECT_NEAR(ww::escapeCount(0.3f, 0.0f, 1000), expected, 2u);
}

TEST(EscapeGeometry, SortedOrderIsAPermutationWithNonDecreasingEstimates) {
  ww::WorkloadOptions options;
  options.groupSize = 8;
  options.groups = 300;
  options.maxIterations = 64;
  const ww::EscapeImage image = ww::escapeImageFor(options, 512);
  EXPECT_EQ(image.groups, 300u);
  EXPECT_GE(static_cast<std::uint64_t>(image.width) * image.height, 2400u);
  const auto plain = ww::escapeUnitOrder(image, 8, false);
  auto sorted = ww::escapeUnitOrder(image, 8, true);
  EXPECT_EQ(plain.size(), 2400u);
  EXPECT_NE(plain, sorted);
  std::vector<std::uint64_t> copy = sorted;
  std::sort(copy.begin(), copy.end());
  EXPECT_EQ(copy, plain);
}
