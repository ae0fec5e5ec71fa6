// Pieces shared by the data-driven workloads whose work varies smoothly in space (relax, banded)
// and the escape image: the shape of a 2-D grid of units, a smooth random field drawn from a
// seed, and per-unit noise. Host only (the programs compute their inputs on the host and copy
// them to the device), deterministic given the seed, the same on every machine (double sin).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "frame.hpp"  // splitmix64
#include "workload-options.hpp"

namespace warpwatch {

/// A row-major 2-D grid of units: unit u sits at column u % width, row u / width; the first
/// `groups * n` units form the groups.
struct GridShape {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint64_t groups = 0;
};

/// Chooses the grid: --width/--height when given, else a square-ish grid with at least
/// groups*n units, else `defaultSide` squared. Groups default to all full groups of the grid.
inline GridShape gridShapeFor(const WorkloadOptions& options, std::uint32_t defaultSide) {
  GridShape grid;
  const std::uint64_t n = options.groupSize;
  if (options.width && options.height) {
    grid.width = options.width;
    grid.height = options.height;
  } else if (options.groups) {
    const std::uint64_t units = options.groups * n;
    grid.width = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(units))));
    grid.height = static_cast<std::uint32_t>((units + grid.width - 1) / grid.width);
  } else {
    grid.width = grid.height = defaultSide;
  }
  const std::uint64_t full = static_cast<std::uint64_t>(grid.width) * grid.height / n;
  grid.groups = options.groups ? std::min(options.groups, full) : full;
  return grid;
}

/// A uniform number in [0, 1) for (seed, stream, index): splitmix64 of the three, 53 bits.
inline double unitUniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t h = splitmix64(splitmix64(seed ^ (stream * 0x9E3779B97F4A7C15ull)) ^ index);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

/// A smooth random field on [0, 1)^2 with values in [0, 1]: 0.5 + 0.5·Σ_m a_m sin(2π(k_m·x +
/// l_m·y) + φ_m) / Σ_m a_m over four plane waves with a_m = 1/(m+1), integer wave numbers
/// k_m ∈ {−3..3} \ {0} and l_m ∈ {0..3} (at most 3 periods across the grid: neighbouring
/// units have nearly the same value) and phases φ_m, all drawn from the seed. A 1-D field is
/// the same with y = 0.
class SmoothField {
 public:
  static constexpr int kModes = 4;

  explicit SmoothField(std::uint64_t seed) {
    for (int m = 0; m < kModes; ++m) {
      const std::uint64_t h = splitmix64(seed ^ (static_cast<std::uint64_t>(m + 1) * 0xD1B54A32D192ED03ull));
      const int k = 1 + static_cast<int>(h % 3);
      kx_[m] = (h >> 8) & 1 ? k : -k;
      ky_[m] = static_cast<int>((h >> 16) % 4);
      phase_[m] = static_cast<double>((h >> 24) & 0xFFFFFF) * 0x1.0p-24 * 2.0 * kPi;
      amplitude_[m] = 1.0 / (m + 1);
      total_ += amplitude_[m];
    }
  }

  /// The field at (x, y) ∈ [0, 1)^2: a value in [0, 1].
  double at(double x, double y) const {
    double sum = 0;
    for (int m = 0; m < kModes; ++m) sum += amplitude_[m] * std::sin(2.0 * kPi * (kx_[m] * x + ky_[m] * y) + phase_[m]);
    return std::clamp(0.5 + 0.5 * sum / total_, 0.0, 1.0);
  }

 private:
  static constexpr double kPi = 3.14159265358979323846;
  int kx_[kModes] = {};
  int ky_[kModes] = {};
  double phase_[kModes] = {};
  double amplitude_[kModes] = {};
  double total_ = 0;
};

}  // namespace warpwatch
