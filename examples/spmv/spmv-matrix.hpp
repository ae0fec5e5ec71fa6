// The CSR matrix of the SpMV example: `rows` rows whose lengths follow a capped Pareto law
// (alpha 1.8, minimum 4, cap 512: most rows short, a few long — the imbalance a scalar CSR
// kernel suffers), uniform random columns, values in (0, 1). Same matrix on CPU and GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/example-args.hpp"

namespace example {

struct CsrMatrix {
  std::uint64_t rows = 0, columns = 0;
  std::vector<std::uint32_t> rowStart;  ///< rows + 1 offsets into columnIndex/values
  std::vector<std::uint32_t> columnIndex;
  std::vector<float> values;
};

inline CsrMatrix makeSpmvMatrix(std::uint64_t rows, std::uint64_t seed) {
  CsrMatrix m;
  m.rows = rows;
  m.columns = rows;
  m.rowStart.resize(rows + 1, 0);
  for (std::uint64_t r = 0; r < rows; ++r) m.rowStart[r + 1] = m.rowStart[r] + paretoCount(uniform01(seed, 1, r), 1.8, 4.0, 512);
  const std::uint64_t nonzeros = m.rowStart[rows];
  m.columnIndex.resize(nonzeros);
  m.values.resize(nonzeros);
  for (std::uint64_t k = 0; k < nonzeros; ++k) {
    m.columnIndex[k] = static_cast<std::uint32_t>(uniform01(seed, 2, k) * static_cast<double>(m.columns));
    m.values[k] = static_cast<float>(uniform01(seed, 3, k));
  }
  return m;
}

/// The input vector x: x[j] = 1 + j mod 7 (exact in float).
inline std::vector<float> makeSpmvVector(std::uint64_t columns) {
  std::vector<float> x(columns);
  for (std::uint64_t j = 0; j < columns; ++j) x[j] = static_cast<float>(1 + j % 7);
  return x;
}

}  // namespace example
