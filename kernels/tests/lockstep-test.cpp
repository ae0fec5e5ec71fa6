// Workload helpers shared by the CPU and CUDA programs: divergence patterns, escape geometry,
// the sorted unit order, the grid shape, the relax field and the banded matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "warpwatch/divergence-patterns.hpp"
#include "warpwatch/banded-matrix.hpp"
#include "warpwatch/escape-geometry.hpp"
#include "warpwatch/relax-field.hpp"

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

TEST(GridShape, SquareishFromGroupsOrTheDefaultSide) {
  ww::WorkloadOptions options;
  options.groupSize = 8;
  EXPECT_EQ(ww::gridShapeFor(options, 64).width, 64u);
  EXPECT_EQ(ww::gridShapeFor(options, 64).groups, 64u * 64u / 8u);
  options.groups = 300;  // 2400 units: ceil(sqrt(2400)) = 49 columns, 49 rows
  const ww::GridShape grid = ww::gridShapeFor(options, 512);
  EXPECT_EQ(grid.width, 49u);
  EXPECT_EQ(grid.height, 49u);
  EXPECT_EQ(grid.groups, 300u);
}

TEST(RelaxField, CountsFollowTheFixedPointIteration) {
  // Brute force in double: u <- b + rho (u - u^3/3) from 0 until the step is <= 1e-5.
  for (const float rate : {0.5f, 0.7f, 0.9f, 0.97f}) {
    const double b = 0.3 * (1.0 - rate);
    double u = 0, step = 0;
    unsigned expected = 0;
    do {
      const double next = b + rate * (u - u * u * u / 3.0);
      step = std::fabs(next - u);
      u = next;
      ++expected;
    } while (step > 1e-5 && expected < 1000);
    EXPECT_NEAR(ww::relaxCount(rate, 1e-5f, 1000), expected, 2u) << "rate " << rate;
  }
  EXPECT_EQ(ww::relaxCount(0.97f, 1e-5f, 20), 20u);  // the cap
  // A slower contraction takes more iterations: ln(tol)/ln(rho') grows with rho.
  EXPECT_LT(ww::relaxCount(0.5f, 1e-5f, 256), ww::relaxCount(0.9f, 1e-5f, 256));
}

TEST(RelaxField, RatesAreASmoothFieldPlusSmallNoiseFixedByTheSeed) {
  const ww::GridShape grid{256, 256, 2048};
  const auto rates = ww::relaxRates(grid, 1);
  ASSERT_EQ(rates.size(), 256u * 256u);
  EXPECT_EQ(rates, ww::relaxRates(grid, 1));
  EXPECT_NE(rates, ww::relaxRates(grid, 2));
  double low = 1, high = 0, neighbourStep = 0;
  for (std::size_t cell = 0; cell < rates.size(); ++cell) {
    low = std::min(low, static_cast<double>(rates[cell]));
    high = std::max(high, static_cast<double>(rates[cell]));
    if (cell % 256 != 255) neighbourStep = std::max(neighbourStep, std::fabs(static_cast<double>(rates[cell + 1]) - rates[cell]));
  }
  EXPECT_GE(low, 0.495 - 1e-6);
  EXPECT_LE(high, 0.975 + 1e-6);
  EXPECT_GT(high - low, 0.3);  // the field spans most of its range
  // Horizontal neighbours: the smooth part moves by at most 0.47 · 0.5 · 2π · 3 / 256 ≈ 0.0173
  // (|∂s/∂x| ≤ 0.5 · 2π · max|k| for the normalised waves), the noise by at most 0.01.
  EXPECT_LT(neighbourStep, 0.0173 + 0.01 + 1e-4);
}

TEST(BandedMatrix, RowsAreContiguousBandsWithSlowlyVaryingLengths) {
  const std::uint64_t rows = 4096;
  const ww::BandedMatrix m = ww::makeBandedMatrix(rows, 8, 3);
  EXPECT_EQ(m.groups, rows / 8);
  ASSERT_EQ(m.rowStart.size(), rows + 1);
  EXPECT_EQ(m.rowStart.back(), m.columnIndex.size());
  double sumLength = 0, sumJump = 0;
  std::uint32_t shortest = 1000, longest = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::uint32_t length = m.rowLength(r);
    shortest = std::min(shortest, length);
    longest = std::max(longest, length);
    sumLength += length;
    if (r + 1 < rows) sumJump += std::fabs(static_cast<double>(m.rowLength(r + 1)) - length);
    // Consecutive columns, in range, holding the diagonal.
    const std::uint32_t first = m.columnIndex[m.rowStart[r]];
    for (std::uint32_t k = 0; k < length; ++k) EXPECT_EQ(m.columnIndex[m.rowStart[r] + k], first + k);
    EXPECT_LT(first + length - 1, rows);
    EXPECT_LE(first, r);
    EXPECT_GE(first + length - 1, r);
    for (std::uint32_t k = 0; k < length; ++k) {
      EXPECT_GE(m.values[m.rowStart[r] + k], 0.5f);
      EXPECT_LT(m.values[m.rowStart[r] + k], 1.5f);
    }
  }
  // Bandwidth 4..64 with ±15 % noise: lengths 3..74 (round(4·0.85) = 3, round(64·1.15) = 74).
  EXPECT_GE(shortest, 3u);
  EXPECT_LE(longest, 74u);
  EXPECT_GT(longest - shortest, 30u);
  // Neighbouring rows: the mean jump is the noise's (about 0.1 of the mean length), far below
  // the mean jump between rows taken at random (seed 3: 3.3 against 15.4, mean length 33.9).
  EXPECT_LT(sumJump / (rows - 1), 0.15 * sumLength / rows);
  const ww::BandedMatrix again = ww::makeBandedMatrix(rows, 8, 3);
  EXPECT_EQ(again.rowStart, m.rowStart);
  EXPECT_EQ(again.values, m.values);
  EXPECT_NE(ww::makeBandedMatrix(rows, 8, 4).rowStart, m.rowStart);
}

TEST(BandedMatrix, RejectsMoreRowsThanItsOffsetsHold) {
  EXPECT_THROW(ww::makeBandedMatrix((std::uint64_t{1} << 26) + 1, 8, 1), std::invalid_argument);
  EXPECT_THROW(ww::makeBandedMatrix(0, 8, 1), std::invalid_argument);
}

TEST(BandedMatrix, SortedOrderIsAPermutationWithNonDecreasingLengths) {
  const ww::BandedMatrix m = ww::makeBandedMatrix(2000, 8, 5);  // 250 groups
  const auto plain = ww::bandedUnitOrder(m, 8, false);
  auto sorted = ww::bandedUnitOrder(m, 8, true);
  ASSERT_EQ(plain.size(), 2000u);
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(plain[i], i);
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    EXPECT_LE(m.rowLength(sorted[i - 1]), m.rowLength(sorted[i]));
    if (m.rowLength(sorted[i - 1]) == m.rowLength(sorted[i])) {
      EXPECT_LT(sorted[i - 1], sorted[i]);  // stable
    }
  }
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, plain);
}
