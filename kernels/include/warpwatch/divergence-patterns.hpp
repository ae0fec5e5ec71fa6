// The divergence micro-benchmark patterns (model.md §4, Bialas & Strzelecki): one warp of 32
// lanes, lane loop bounds (32, ..., 32, 31, 30, ..., 32-k) for k = 0..31 -- the first 32-k
// lanes run 32 iterations, the last k lanes 31, 30, ..., 32-k -- in a single loop and in two
// nested loops with the same per-lane bound:
//   single: for (i = 0; i < b[lane]; ++i) body;                                  w = b
//   nested: for (i = 0; i < b[lane]; ++i) for (j = 0; j < b[lane]; ++j) body;    w = b*b
// CSV written by both backends (read by `warpwatch divergence fit`, model/ divergence fit):
//   pattern,loop,k,bounds,cycles,clock_hz,source,repetition
// one row per repetition; `cycles` = ticks of clock_hz for the whole loop of the warp
// (clock64() cycles on CUDA; steady-clock ns on the CPU, clock_hz = 1e9); `bounds` is empty
// (the k pattern applies).
#pragma once

#include <cstdint>
#include <string>

namespace warpwatch {

constexpr unsigned kDivergenceLanes = 32;

/// Loop bound of `lane` in pattern k (0..31).
inline constexpr std::uint32_t divergenceBound(unsigned k, unsigned lane) {
  return lane < kDivergenceLanes - k ? 32u : 32u - (lane - (kDivergenceLanes - k) + 1u);
}

/// CSV header line of the divergence output (no trailing newline).
inline const char* divergenceCsvHeader() { return "pattern,loop,k,bounds,cycles,clock_hz,source,repetition"; }

/// One CSV row (no trailing newline).
inline std::string divergenceCsvRow(bool nested, unsigned k, std::uint64_t ticks, std::uint64_t clockHz, const char* source, unsigned repetition) {
  const std::string loop = nested ? "nested" : "single";
  return loop + "-k" + std::to_string(k) + "," + loop + "," + std::to_string(k) + ",," + std::to_string(ticks) + "," +
         std::to_string(clockHz) + "," + source + "," + std::to_string(repetition);
}

}  // namespace warpwatch
