// The banded workload, shared by the CPU and CUDA programs so both multiply the same matrix:
// a sparse row loop (y = A·x in CSR, one lane per row) whose row lengths are banded — the
// bandwidth varies slowly along the rows, plus noise — so neighbouring rows have similar
// lengths. Row r holds L(r) consecutive columns centred on the diagonal, with
// L(r) = max(1, round(w(r)·(1 + 0.3·(v − 0.5)))), w(r) = 4 + 60·s(r / rows), s a 1-D
// SmoothField of the seed (at most 3 periods over the matrix) and v a per-row uniform: rows
// of 4..64 entries, ±15 % noise around the local bandwidth. Deterministic given the seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "smooth-field.hpp"
#include "workload-options.hpp"

namespace warpwatch {

/// A square CSR matrix; units are rows, the first `groups * n` rows form the groups.
struct BandedMatrix {
  std::uint64_t rows = 0;
  std::uint64_t groups = 0;
  std::vector<std::uint32_t> rowStart;  ///< rows + 1 offsets into columnIndex/values
  std::vector<std::uint32_t> columnIndex;
  std::vector<float> values;

  /// Entries of row r: its iteration count in the row loop.
  std::uint32_t rowLength(std::uint64_t r) const { return rowStart[r + 1] - rowStart[r]; }
};

/// Rows of the matrix: --groups G gives G·n rows, else `defaultRows`; groups default to all
/// full groups of the rows.
inline std::uint64_t bandedRowsFor(const WorkloadOptions& options, std::uint64_t defaultRows) {
  return options.groups ? options.groups * options.groupSize : defaultRows;
}

/// The row length L(r) of the header comment, for row r of `rows`.
inline std::uint32_t bandedRowLength(const SmoothField& smooth, std::uint64_t seed, std::uint64_t r, std::uint64_t rows) {
  const double bandwidth = 4.0 + 60.0 * smooth.at((static_cast<double>(r) + 0.5) / static_cast<double>(rows), 0.0);
  const double length = std::round(bandwidth * (1.0 + 0.3 * (unitUniform(seed, 2, r) - 0.5)));
  return static_cast<std::uint32_t>(std::clamp(length, 1.0, static_cast<double>(rows)));
}

/// Builds the matrix: row r's entries are the columns first..first+L(r)−1 with first =
/// clamp(r − ⌊L(r)/2⌋, 0, rows − L(r)); values uniform in [0.5, 1.5) from the seed.
/// @throws std::invalid_argument when rows is 0 or above 2^26, or the matrix would have 2^32
///   entries or more (CSR offsets are 32-bit).
inline BandedMatrix makeBandedMatrix(std::uint64_t rows, std::uint32_t groupSize, std::uint64_t seed) {
  if (rows == 0 || rows > (std::uint64_t{1} << 26)) {
    throw std::invalid_argument("banded: rows (--groups × --n) must be 1..2^26, got " + std::to_string(rows));
  }
  BandedMatrix m;
  m.rows = rows;
  m.groups = rows / groupSize;
  const SmoothField smooth(seed);
  m.rowStart.resize(rows + 1, 0);
  std::uint64_t entries = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    entries += bandedRowLength(smooth, seed, r, rows);
    if (entries >= (std::uint64_t{1} << 32)) throw std::invalid_argument("banded: the matrix would have 2^32 entries or more; use fewer --groups");
    m.rowStart[r + 1] = static_cast<std::uint32_t>(entries);
  }
  m.columnIndex.resize(entries);
  m.values.resize(entries);
  for (std::uint64_t r = 0; r < rows; ++r) {
    const std::uint64_t length = m.rowLength(r);
    const std::uint64_t first = std::min(r > length / 2 ? r - length / 2 : 0, rows - length);
    for (std::uint64_t k = 0; k < length; ++k) {
      const std::uint64_t entry = m.rowStart[r] + k;
      m.columnIndex[entry] = static_cast<std::uint32_t>(first + k);
      m.values[entry] = static_cast<float>(0.5 + unitUniform(seed, 3, entry));
    }
  }
  return m;
}

/// Row order for grouping: the first groups·n rows in row order, or (sorted, --sorted) stably
/// sorted by row length, so a group holds rows of equal or nearly equal length: the row-sorting
/// remedy of CSR kernels (model.md §2d load balancing by sorting; SELL-C-σ sorts within windows
/// of σ rows, this sorts them all). The lengths are known from rowStart, so no estimate is needed.
inline std::vector<std::uint64_t> bandedUnitOrder(const BandedMatrix& matrix, std::uint32_t groupSize, bool sorted) {
  std::vector<std::uint64_t> order(matrix.groups * groupSize);
  std::iota(order.begin(), order.end(), 0);
  if (sorted) std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return matrix.rowLength(a) < matrix.rowLength(b); });
  return order;
}

/// The input vector x: x[j] = 1 + j mod 7 (exact in float).
inline std::vector<float> bandedVector(std::uint64_t columns) {
  std::vector<float> x(columns);
  for (std::uint64_t j = 0; j < columns; ++j) x[j] = static_cast<float>(1 + j % 7);
  return x;
}

}  // namespace warpwatch
