// Geometry and work estimate of the escape-time (Mandelbrot) workload, shared by the CPU and
// CUDA programs so both run the same units in the same order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "smooth-field.hpp"
#include "workload-options.hpp"

namespace warpwatch {

/// The image: units are pixels, numbered row-major; the first `groups * n` form the groups.
struct EscapeImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint64_t groups = 0;
  std::uint32_t maxIterations = 256;
  // The classic view of the Mandelbrot set: x in [-2.0, 0.5], y in [-1.25, 1.25].
  float xMin = -2.0f, yMin = -1.25f, xSpan = 2.5f, ySpan = 2.5f;

  float realOf(std::uint64_t unit) const { return xMin + (static_cast<float>(unit % width) + 0.5f) * xSpan / static_cast<float>(width); }
  float imagOf(std::uint64_t unit) const { return yMin + (static_cast<float>(unit / width) + 0.5f) * ySpan / static_cast<float>(height); }
};

/// Chooses the image: the grid of gridShapeFor (--width/--height, else square-ish from
/// --groups, else `defaultSide` squared; groups default to all full groups).
inline EscapeImage escapeImageFor(const WorkloadOptions& options, std::uint32_t defaultSide) {
  EscapeImage image;
  image.maxIterations = options.maxIterations;
  const GridShape grid = gridShapeFor(options, defaultSide);
  image.width = grid.width;
  image.height = grid.height;
  image.groups = grid.groups;
  return image;
}

/// Escape count of one point: iterations of z <- z^2 + c until |z|^2 > 4, at most maxIterations
/// (so 1..maxIterations). The reference for both backends' per-lane loops.
inline std::uint32_t escapeCount(float cr, float ci, std::uint32_t maxIterations) {
  float zr = 0, zi = 0;
  std::uint32_t count = 0;
  do {
    const float nr = zr * zr - zi * zi + cr;
    zi = 2.0f * zr * zi + ci;
    zr = nr;
    ++count;
  } while (zr * zr + zi * zi <= 4.0f && count < maxIterations);
  return count;
}

/// Unit order for grouping. Unsorted: row-major (neighbouring pixels share a group, so lanes of
/// a group are NOT independent: the μ_A vs μ_S gap of model.md §2c). Sorted (--sorted): a
/// low-resolution pre-pass (one escape count per 4x4 block, at the block centre, 1/16 of the
/// work) gives each pixel an estimate by bilinear interpolation between block centres, and
/// units are ordered by that estimate (stable), so a group holds units of similar estimated
/// work (load balancing by sorting, model.md §2d).
inline std::vector<std::uint64_t> escapeUnitOrder(const EscapeImage& image, std::uint32_t groupSize, bool sorted) {
  const std::uint64_t units = image.groups * groupSize;
  std::vector<std::uint64_t> order(units);
  std::iota(order.begin(), order.end(), 0);
  if (!sorted) return order;
  constexpr std::uint32_t kBlock = 4;
  const std::uint32_t blocksX = (image.width + kBlock - 1) / kBlock;
  const std::uint32_t blocksY = (image.height + kBlock - 1) / kBlock;
  std::vector<float> blockEstimate(static_cast<std::size_t>(blocksX) * blocksY);
  for (std::uint32_t by = 0; by < blocksY; ++by) {
    for (std::uint32_t bx = 0; bx < blocksX; ++bx) {
      const float cx = (static_cast<float>(bx * kBlock) + kBlock / 2.0f) / static_cast<float>(image.width);
      const float cy = (static_cast<float>(by * kBlock) + kBlock / 2.0f) / static_cast<float>(image.height);
      blockEstimate[static_cast<std::size_t>(by) * blocksX + bx] =
          static_cast<float>(escapeCount(image.xMin + cx * image.xSpan, image.yMin + cy * image.ySpan, image.maxIterations));
    }
  }
  std::vector<float> estimate(units);
  for (std::uint64_t unit = 0; unit < units; ++unit) {
    // Position in block-centre coordinates, clamped to the grid, then bilinear weights.
    const float fx = std::clamp((static_cast<float>(unit % image.width) + 0.5f) / kBlock - 0.5f, 0.0f, static_cast<float>(blocksX - 1));
    const float fy = std::clamp((static_cast<float>(unit / image.width) + 0.5f) / kBlock - 0.5f, 0.0f, static_cast<float>(blocksY - 1));
    const std::uint32_t x0 = static_cast<std::uint32_t>(fx), y0 = static_cast<std::uint32_t>(fy);
    const std::uint32_t x1 = std::min(x0 + 1, blocksX - 1), y1 = std::min(y0 + 1, blocksY - 1);
    const float ax = fx - static_cast<float>(x0), ay = fy - static_cast<float>(y0);
    auto at = [&](std::uint32_t x, std::uint32_t y) { return blockEstimate[static_cast<std::size_t>(y) * blocksX + x]; };
    estimate[unit] = (1 - ay) * ((1 - ax) * at(x0, y0) + ax * at(x1, y0)) + ay * ((1 - ax) * at(x0, y1) + ax * at(x1, y1));
  }
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return estimate[a] < estimate[b]; });
  return order;
}

}  // namespace warpwatch
