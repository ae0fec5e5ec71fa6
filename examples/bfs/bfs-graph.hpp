// The directed graph of the BFS example: `vertices` vertices whose out-degrees follow a capped
// Pareto law (alpha 1.8, minimum 2, cap 4096: most vertices have a few edges, hubs have
// thousands), targets uniform at random; adjacency in CSR. Same graph on CPU and GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/example-args.hpp"

namespace example {

struct Graph {
  std::uint64_t vertices = 0;
  std::vector<std::uint32_t> edgeStart;  ///< vertices + 1 offsets into target
  std::vector<std::uint32_t> target;
};

inline Graph makeBfsGraph(std::uint64_t vertices, std::uint64_t seed) {
  Graph g;
  g.vertices = vertices;
  g.edgeStart.resize(vertices + 1, 0);
  for (std::uint64_t v = 0; v < vertices; ++v) g.edgeStart[v + 1] = g.edgeStart[v] + paretoCount(uniform01(seed, 11, v), 1.8, 2.0, 4096);
  g.target.resize(g.edgeStart[vertices]);
  for (std::uint64_t e = 0; e < g.target.size(); ++e) g.target[e] = static_cast<std::uint32_t>(uniform01(seed, 12, e) * static_cast<double>(vertices));
  return g;
}

/// Level of an unreached vertex.
inline constexpr std::int32_t kUnreached = -1;

}  // namespace example
