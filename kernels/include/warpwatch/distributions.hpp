// Iteration-count distributions for the workloads: the spec syntax of model/ (model.md §2d)
// parsed in C++, tabulated, and sampled by inversion with a seeded xoshiro256** generator.
//
//   binom(N,p)   B(N, p) on {0..N}              geo(p)      (1-p)^(k-1) p on {1, 2, ...}
//   pois(lambda) Poisson on {0, 1, ...}          unif(a,b)   uniform on {a..b}, inclusive
//   nbinom(r,p)  failures before the r-th success: C(k+r-1,k) p^r (1-p)^k on {0, 1, ...}
//   cat(v:w,...) explicit categorical: value v with weight w (weights normalised)
//
// Infinite supports are cut where the tail mass drops below 1e-12 (far below what any
// launch can observe: 2^18 groups x 32 lanes = 8.4e6 draws).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "launch-totals.hpp"

namespace warpwatch {

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64 so any u64 seed is fine.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t z = seed;
    for (auto& word : state_) {
      z += 0x9E3779B97F4A7C15ull;
      word = splitmix64(z);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

/// A tabulated discrete distribution over non-negative integers (ascending values, cumulative weights).
class CountDistribution {
 public:
  /// Parses a spec such as "pois(30)" or "cat(1:2,5:1)". Throws std::invalid_argument with a
  /// message naming the spec, what was wrong and what is allowed.
  static CountDistribution parse(const std::string& spec) {
    std::string text;
    for (char c : spec) if (!std::isspace(static_cast<unsigned char>(c))) text.push_back(c);
    const auto open = text.find('(');
    if (open == std::string::npos || text.back() != ')') {
      throw std::invalid_argument("distribution spec '" + spec + "' must look like family(args), e.g. pois(30)");
    }
    const std::string family = text.substr(0, open);
    const std::string inner = text.substr(open + 1, text.size() - open - 2);
    std::vector<std::string> args;
    size_t start = 0;
    while (start <= inner.size()) {
      const auto comma = inner.find(',', start);
      args.push_back(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    auto number = [&](const std::string& s) {
      size_t used = 0;
      double v = 0;
      try { v = std::stod(s, &used); } catch (const std::exception&) { used = 0; }
      if (used != s.size() || !std::isfinite(v)) {
        throw std::invalid_argument("distribution spec '" + spec + "': '" + s + "' is not a finite number");
      }
      return v;
    };
    auto arity = [&](size_t k) {
      if (args.size() != k) {
        throw std::invalid_argument("distribution spec '" + spec + "': " + family + " takes " + std::to_string(k) +
                                    " argument(s), got " + std::to_string(args.size()));
      }
    };
    auto probability = [&](double p, bool allowOne) {
      if (!(p > 0.0) || p > 1.0 || (!allowOne && p == 1.0)) {
        throw std::invalid_argument("distribution spec '" + spec + "': p must be in (0,1" + (allowOne ? "]" : ")") +
                                    ", got " + std::to_string(p));
      }
    };
    auto integer = [&](double v, const char* name) {
      if (v < 0 || v != std::floor(v) || v > 4294967295.0) {
        throw std::invalid_argument("distribution spec '" + spec + "': " + name +
                                    " must be an integer 0..4294967295, got " + std::to_string(v));
      }
      return static_cast<uint64_t>(v);
    };
    std::vector<std::pair<uint64_t, double>> pmf;
    if (family == "binom") {
      arity(2);
      const uint64_t trials = integer(number(args[0]), "N");
      const double p = number(args[1]);
      if (p < 0.0 || p > 1.0) throw std::invalid_argument("distribution spec '" + spec + "': p must be in [0,1]");
      for (uint64_t k = 0; k <= trials; ++k) pmf.emplace_back(k, binomialPmf(trials, p, k));
    } else if (family == "geo") {
      arity(1);
      const double p = number(args[0]);
      probability(p, true);
      for (uint64_t k = 1;; ++k) {
        const double mass = std::exp(static_cast<double>(k - 1) * std::log1p(-p)) * p;
        pmf.emplace_back(k, mass);
        // Tail beyond k is (1-p)^k; log1p keeps it accurate for small p.
        if (p == 1.0 || static_cast<double>(k) * std::log1p(-p) < std::log(kTailMass)) break;
        guardSize(pmf.size(), spec);
      }
    } else if (family == "pois") {
      arity(1);
      const double lambda = number(args[0]);
      if (!(lambda > 0.0)) throw std::invalid_argument("distribution spec '" + spec + "': lambda must be > 0");
      double cumulative = 0;
      for (uint64_t k = 0;; ++k) {
        const double mass = std::exp(static_cast<double>(k) * std::log(lambda) - lambda - std::lgamma(static_cast<double>(k) + 1.0));
        pmf.emplace_back(k, mass);
        cumulative += mass;
        if (static_cast<double>(k) > lambda && 1.0 - cumulative < kTailMass) break;
        guardSize(pmf.size(), spec);
      }
    } else if (family == "unif") {
      arity(2);
      const uint64_t low = integer(number(args[0]), "a");
      const uint64_t high = integer(number(args[1]), "b");
      if (high < low) throw std::invalid_argument("distribution spec '" + spec + "': need a <= b");
      guardSize(high - low + 1, spec);
      for (uint64_t k = low; k <= high; ++k) pmf.emplace_back(k, 1.0);
    } else if (family == "nbinom") {
      arity(2);
      const double r = number(args[0]);
      const double p = number(args[1]);
      if (!(r > 0.0)) throw std::invalid_argument("distribution spec '" + spec + "': r must be > 0");
      probability(p, true);
      const double mean = r * (1.0 - p) / p;
      double cumulative = 0;
      for (uint64_t k = 0;; ++k) {
        const double kd = static_cast<double>(k);
        const double mass = p == 1.0 ? (k == 0 ? 1.0 : 0.0)
            : std::exp(std::lgamma(kd + r) - std::lgamma(kd + 1.0) - std::lgamma(r) + r * std::log(p) + kd * std::log1p(-p));
        pmf.emplace_back(k, mass);
        cumulative += mass;
        if (kd > mean && 1.0 - cumulative < kTailMass) break;
        guardSize(pmf.size(), spec);
      }
    } else if (family == "cat") {
      if (inner.empty()) throw std::invalid_argument("distribution spec '" + spec + "': cat needs at least one value:weight");
      for (const auto& entry : args) {
        const auto colon = entry.find(':');
        if (colon == std::string::npos) {
          throw std::invalid_argument("distribution spec '" + spec + "': cat entries are value:weight, got '" + entry + "'");
        }
        const uint64_t value = integer(number(entry.substr(0, colon)), "value");
        const double weight = number(entry.substr(colon + 1));
        if (!(weight > 0.0)) throw std::invalid_argument("distribution spec '" + spec + "': weights must be > 0");
        pmf.emplace_back(value, weight);
      }
      std::sort(pmf.begin(), pmf.end());
    } else {
      throw std::invalid_argument("distribution family '" + family + "' in '" + spec +
                                  "' is unknown; allowed: binom, geo, pois, unif, nbinom, cat");
    }
    return CountDistribution(spec, pmf);
  }

  /// Draws one count by inversion (binary search in the cumulative table).
  uint32_t sample(Rng& rng) const {
    const double u = rng.uniform() * cumulative_.back();
    const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    const size_t index = std::min<size_t>(static_cast<size_t>(it - cumulative_.begin()), values_.size() - 1);
    return values_[index];
  }

  /// Mean of the tabulated (truncated, renormalised) distribution.
  double mean() const {
    double sum = 0;
    double previous = 0;
    for (size_t i = 0; i < values_.size(); ++i) {
      sum += values_[i] * (cumulative_[i] - previous);
      previous = cumulative_[i];
    }
    return sum / cumulative_.back();
  }
  const std::string& spec() const { return spec_; }
  const std::vector<uint32_t>& values() const { return values_; }

 private:
  static constexpr double kTailMass = 1e-12;
  static constexpr size_t kMaxSupport = 10'000'000;

  static void guardSize(size_t size, const std::string& spec) {
    if (size > kMaxSupport) {
      throw std::invalid_argument("distribution spec '" + spec + "' needs more than 10^7 support values; allowed at most 10^7");
    }
  }
  static double binomialPmf(uint64_t trials, double p, uint64_t k) {
    if (p == 0.0) return k == 0 ? 1.0 : 0.0;
    if (p == 1.0) return k == trials ? 1.0 : 0.0;
    const double n = static_cast<double>(trials);
    const double kd = static_cast<double>(k);
    return std::exp(std::lgamma(n + 1) - std::lgamma(kd + 1) - std::lgamma(n - kd + 1) + kd * std::log(p) +
                    (n - kd) * std::log1p(-p));
  }

  CountDistribution(std::string spec, const std::vector<std::pair<uint64_t, double>>& pmf) : spec_(std::move(spec)) {
    double total = 0;
    for (const auto& [value, weight] : pmf) {
      if (weight <= 0) continue;  // zero-mass values (e.g. p = 0) never get drawn
      if (!values_.empty() && values_.back() == value) {
        total += weight;
        cumulative_.back() = total;
        continue;
      }
      total += weight;
      values_.push_back(static_cast<uint32_t>(value));
      cumulative_.push_back(total);
    }
    if (values_.empty()) throw std::invalid_argument("distribution spec '" + spec_ + "' has no mass");
  }

  std::string spec_;
  std::vector<uint32_t> values_;
  std::vector<double> cumulative_;
};

}  // namespace warpwatch
