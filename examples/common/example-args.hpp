// Command-line flags of the example programs (CPU twins and CUDA programs alike), and a small
// deterministic random generator so that both twins build identical inputs from one seed.
//
//   --out FILE|-        frame sink: a file, '-' (stdout) or unix:PATH (a collector socket); required
//   --size S            problem size: SpMV rows / BFS vertices (rounded up to a multiple of 32)
//   --seed S            input seed (default 1)
//   --sample-rate R     fraction of groups sampled into GroupSamples, 0..1 (default 1/64)
//   --selection hash|stride   (default hash: unbiased; stride aliases with data layouts)
//   --job NAME          first part of the stream id (default examples)
//   --clock steady|thread     CPU twins: group clock (default steady)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "warpwatch/frame.hpp"  // Selection, splitmix64

namespace example {

struct Args {
  std::string out;
  std::uint64_t size = 0;
  std::uint64_t seed = 1;
  double sampleRate = 1.0 / 64.0;
  warpwatch::Selection selection = warpwatch::Selection::Hash;
  std::string job = "examples";
  std::string clock = "steady";

  /// One in samplingStride() groups is sampled; 0 = none.
  std::uint32_t samplingStride() const { return sampleRate <= 0 ? 0 : static_cast<std::uint32_t>(std::lround(1.0 / sampleRate)); }
};

/// Parses argv (after the program name); `defaultSize` when --size is absent. Throws
/// std::invalid_argument naming the flag, what arrived and what is allowed.
inline Args parseArgs(int argc, char** argv, std::uint64_t defaultSize) {
  Args a;
  a.size = defaultSize;
  for (int i = 0; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value (flags: --out --size --seed --sample-rate --selection --job --clock)");
    const std::string v = argv[++i];
    char* end = nullptr;
    if (flag == "--out") a.out = v;
    else if (flag == "--size") {
      a.size = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-' || a.size < 1 || a.size > (1ull << 28)) throw std::invalid_argument("--size must be an integer 1..2^28, got '" + v + "'");
      a.size = (a.size + 31) / 32 * 32;
    } else if (flag == "--seed") {
      a.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || v[0] == '-') throw std::invalid_argument("--seed must be a non-negative integer, got '" + v + "'");
    } else if (flag == "--sample-rate") {
      a.sampleRate = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.sampleRate >= 0.0 && a.sampleRate <= 1.0) || (a.sampleRate > 0 && a.sampleRate < 1e-9)) {
        throw std::invalid_argument("--sample-rate must be 0 or a number 1e-9..1, got '" + v + "'");
      }
    } else if (flag == "--selection") {
      if (v == "hash") a.selection = warpwatch::Selection::Hash;
      else if (v == "stride") a.selection = warpwatch::Selection::Stride;
      else throw std::invalid_argument("--selection must be hash or stride, got '" + v + "'");
    } else if (flag == "--job") {
      if (v.empty() || v.size() > 255 || v.find('/') != std::string::npos) throw std::invalid_argument("--job must be 1..255 bytes without '/', got '" + v + "'");
      a.job = v;
    } else if (flag == "--clock") {
      if (v != "steady" && v != "thread") throw std::invalid_argument("--clock must be steady or thread, got '" + v + "'");
      a.clock = v;
    } else {
      throw std::invalid_argument("unknown flag '" + flag + "' (flags: --out --size --seed --sample-rate --selection --job --clock)");
    }
  }
  if (a.out.empty()) throw std::invalid_argument("--out FILE|-|unix:PATH is required");
  return a;
}

/// Deterministic stream of uniform numbers from (seed, stream, index): the same on every
/// compiler and platform (splitmix64), so the CPU twin and the CUDA program build equal inputs.
inline double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t bits = warpwatch::splitmix64(warpwatch::splitmix64(seed ^ (stream * 0xD1B54A32D192ED03ull)) + index);
  return (static_cast<double>(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // (0, 1)
}

/// Pareto(alpha, minimum) draw, capped: heavy-tailed work sizes (row lengths, degrees).
inline std::uint32_t paretoCount(double u, double alpha, double minimum, std::uint32_t cap) {
  const double x = std::floor(minimum / std::pow(u, 1.0 / alpha));
  return x >= cap ? cap : static_cast<std::uint32_t>(x);
}

}  // namespace example
