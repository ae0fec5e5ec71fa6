// Spec parsing and sampling of the workload count distributions (model.md §2d families).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "warpwatch/distributions.hpp"

namespace ww = warpwatch;

namespace {
// Monte Carlo mean with a fixed seed; the tolerance is 6 standard errors of the mean.
void expectMean(const std::string& spec, double mean, double variance) {
  const ww::CountDistribution d = ww::CountDistribution::parse(spec);
  ww::Rng rng(12345);
  const int draws = 200000;
  double sum = 0;
  for (int i = 0; i < draws; ++i) sum += d.sample(rng);
  EXPECT_NEAR(sum / draws, mean, 6 * std::sqrt(variance / draws)) << spec;
  EXPECT_NEAR(d.mean(), mean, 1e-6 * (1 + mean)) << spec;
}
}  // namespace

TEST(CountDistribution, SampleMeansMatchClosedForms) {
  expectMean("binom(40,0.5)", 20, 10);
  expectMean("pois(30)", 30, 30);
  expectMean("geo(0.05)", 1 / 0.05, (1 - 0.05) / (0.05 * 0.05));    // on {1, 2, ...}
  expectMean("nbinom(5,0.3)", 5 * 0.7 / 0.3, 5 * 0.7 / (0.3 * 0.3));  // failures before 5th success
  expectMean("unif(1,60)", 30.5, (60.0 * 60.0 - 1) / 12);
  expectMean("cat(1:3, 10:1)", 0.75 * 1 + 0.25 * 10, 0.75 * 1 + 0.25 * 100 - std::pow(3.25, 2));
}

TEST(CountDistribution, SupportsFollowTheProjectConventions) {
  EXPECT_EQ(ww::CountDistribution::parse("geo(0.5)").values().front(), 1u);
  EXPECT_EQ(ww::CountDistribution::parse("nbinom(2,0.5)").values().front(), 0u);
  EXPECT_EQ(ww::CountDistribution::parse("unif(3,5)").values(), (std::vector<std::uint32_t>{3, 4, 5}));
  EXPECT_EQ(ww::CountDistribution::parse(" binom( 3 , 0.5 ) ").values().back(), 3u);
}

TEST(CountDistribution, RejectsBadSpecsWithAMessage) {
  for (const char* bad : {"pois", "pois()", "pois(-1)", "geo(0)", "geo(1.5)", "unif(5,3)", "zipf(2)", "cat()", "cat(1)", "cat(1:0)",
                          "binom(3.5,0.5)", "nbinom(5)", "pois(abc)"}) {
    EXPECT_THROW(ww::CountDistribution::parse(bad), std::invalid_argument) << bad;
  }
  try {
    ww::CountDistribution::parse("zipf(2)");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: binom, geo, pois, unif, nbinom, cat"), std::string::npos);
  }
}
