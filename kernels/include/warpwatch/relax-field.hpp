// The relax workload, shared by the CPU and CUDA programs so both solve the same problems in
// the same unit order: an iterative solver on a 2-D field whose convergence varies smoothly in
// space. Every cell solves its own nonlinear equation u = b + ρ·(u − u³/3) by fixed-point
// iteration from u = 0 until the step is at most 1e-5 (or --max-iter steps). The contraction
// factor ρ of a cell is a smooth random field of its position plus a little per-cell noise,
// so the iteration count (about ln(1e-5)/ln ρ′, ρ′ = ρ(1 − u*²) the local rate) is similar
// for neighbouring cells: 14 iterations where ρ ≈ 0.5, about 110 where ρ ≈ 0.97.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "smooth-field.hpp"
#include "workload-options.hpp"

namespace warpwatch {

/// The field: units are cells, numbered row-major; the first `groups * n` form the groups.
struct RelaxField {
  GridShape grid;
  std::uint32_t maxIterations = 256;
  /// Converged when |u_{k+1} − u_k| ≤ tolerance.
  float tolerance = 1e-5f;
};

/// Chooses the field's grid (gridShapeFor: --width/--height, else from --groups, else
/// `defaultSide` squared) and iteration cap (--max-iter).
inline RelaxField relaxFieldFor(const WorkloadOptions& options, std::uint32_t defaultSide) {
  RelaxField field;
  field.grid = gridShapeFor(options, defaultSide);
  field.maxIterations = options.maxIterations;
  return field;
}

/// The contraction factor of every cell of the grid (row-major, width·height values):
/// ρ = 0.5 + 0.47·s(x, y) + 0.01·(v − 0.5), s the SmoothField of the seed at the cell centre
/// and v a per-cell uniform, so ρ ∈ [0.495, 0.975]. Deterministic given the seed.
inline std::vector<float> relaxRates(const GridShape& grid, std::uint64_t seed) {
  const SmoothField smooth(seed);
  std::vector<float> rates(static_cast<std::size_t>(grid.width) * grid.height);
  for (std::uint32_t y = 0; y < grid.height; ++y) {
    for (std::uint32_t x = 0; x < grid.width; ++x) {
      const std::uint64_t cell = static_cast<std::uint64_t>(y) * grid.width + x;
      const double s = smooth.at((x + 0.5) / grid.width, (y + 0.5) / grid.height);
      rates[cell] = static_cast<float>(0.5 + 0.47 * s + 0.01 * (unitUniform(seed, 1, cell) - 0.5));
    }
  }
  return rates;
}

/// The right-hand side of a cell: b = 0.3·(1 − ρ), so the fixed point u* lies in (0, 0.3).
inline float relaxRightHandSide(float rate) { return 0.3f * (1.0f - rate); }

/// One fixed-point step u ← b + ρ·(u − u³/3), in this exact order of float operations (the
/// CUDA program uses the same order without fused multiply-adds, so both count alike).
inline float relaxStep(float u, float rate, float rhs) { return rhs + rate * (u - u * u * u * (1.0f / 3.0f)); }

/// Iterations a cell takes: steps from u = 0 until |step| ≤ tolerance, at most maxIterations
/// (so 1..maxIterations). The reference for both backends' per-lane loops.
inline std::uint32_t relaxCount(float rate, float tolerance, std::uint32_t maxIterations) {
  const float rhs = relaxRightHandSide(rate);
  float u = 0;
  std::uint32_t count = 0;
  float step = 0;
  do {
    const float next = relaxStep(u, rate, rhs);
    step = std::fabs(next - u);
    u = next;
    ++count;
  } while (step > tolerance && count < maxIterations);
  return count;
}

}  // namespace warpwatch
