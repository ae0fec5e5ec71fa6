// Host-side launch helpers for kernels that use GroupProbe<N> (probe.cuh): the probe maps
// lane l of global warp w to group w·⌊32/N⌋ + l/N with a 1-D index (blockIdx.x·blockDim.x +
// threadIdx.x), so it needs 1-D grids and 1-D blocks of a whole number of warps. 2-D/3-D
// blocks or grids, or a block that ends in a partial warp, would give several threads the
// same group (or groups with missing lanes) — this check rejects them before the launch.
// Linearise a 2-D problem yourself (unit index → (x, y)), as examples/ does.
//
//   const unsigned threads = 256;
//   const auto blocks = warpwatch::probeBlocksFor(groups, threads, 8);      // enough blocks for the groups
//   warpwatch::checkProbeLaunchShape(dim3(blocks), dim3(threads));          // throws on a bad shape
//   kernel<<<blocks, threads, 0, stream>>>(..., buffers, true);
//
// Plain C++17 (the dim3 overload only under nvcc); no CUDA calls.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace warpwatch {

/// Largest block the probe accepts (the CUDA limit): 1024 threads.
inline constexpr unsigned kMaxProbeBlockThreads = 1024;

/// Throws std::invalid_argument with a message starting "WW_ERR_KERNELS_LAUNCH_SHAPE" unless
/// the grid is 1-D (y = z = 1, x ≥ 1) and the block is 1-D with 32..1024 threads, a multiple of
/// 32. Arguments are the grid and block dimensions (CUDA's gridDim / blockDim).
///
/// Example: checkProbeLaunchShape(1024, 1, 1, 256, 1, 1);   // fine
///          checkProbeLaunchShape(64, 1, 1, 16, 16, 1);     // throws: 2-D block
inline void checkProbeLaunchShape(unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("WW_ERR_KERNELS_LAUNCH_SHAPE: " + what +
                                "; GroupProbe needs a 1-D grid of 1-D blocks whose size is a multiple of 32 (linearise 2-D/3-D work into a unit index)");
  };
  if (blockY != 1 || blockZ != 1) {
    fail("block (" + std::to_string(blockX) + ", " + std::to_string(blockY) + ", " + std::to_string(blockZ) + ") is not 1-D");
  }
  if (gridY != 1 || gridZ != 1) {
    fail("grid (" + std::to_string(gridX) + ", " + std::to_string(gridY) + ", " + std::to_string(gridZ) + ") is not 1-D");
  }
  if (gridX == 0) fail("grid has 0 blocks");
  if (blockX == 0 || blockX % 32 != 0 || blockX > kMaxProbeBlockThreads) {
    fail("block of " + std::to_string(blockX) + " threads is not a multiple of 32 in 32..1024");
  }
}

/// Groups of `groupSize` lanes (1..32) that `blocks` 1-D blocks of `threadsPerBlock` threads (a
/// multiple of 32) host: blocks · threadsPerBlock/32 warps × ⌊32/groupSize⌋ groups per warp.
///
/// Example: probeGroupCapacity(4, 256, 8) == 128
inline std::uint64_t probeGroupCapacity(std::uint64_t blocks, unsigned threadsPerBlock, unsigned groupSize) {
  return blocks * (threadsPerBlock / 32u) * (32u / groupSize);
}

/// Fewest 1-D blocks of `threadsPerBlock` threads (a multiple of 32) that host `groups` groups
/// of `groupSize` lanes (1..32); at least 1. Throws std::invalid_argument for groupSize outside
/// 1..32 or a block size that checkProbeLaunchShape rejects.
///
/// Example: probeBlocksFor(1000, 256, 8) == 32   // 32 groups per block
inline std::uint64_t probeBlocksFor(std::uint64_t groups, unsigned threadsPerBlock, unsigned groupSize) {
  if (groupSize < 1 || groupSize > 32) throw std::invalid_argument("WW_ERR_KERNELS_LAUNCH_SHAPE: group size must be 1..32, got " + std::to_string(groupSize));
  checkProbeLaunchShape(1, 1, 1, threadsPerBlock, 1, 1);
  const std::uint64_t perBlock = probeGroupCapacity(1, threadsPerBlock, groupSize);
  const std::uint64_t blocks = (groups + perBlock - 1) / perBlock;
  return blocks == 0 ? 1 : blocks;
}

#if defined(__CUDACC__)
/// checkProbeLaunchShape for CUDA's dim3 (grid, block) as passed to <<<grid, block>>>.
inline void checkProbeLaunchShape(dim3 grid, dim3 block) { checkProbeLaunchShape(grid.x, grid.y, grid.z, block.x, block.y, block.z); }
#endif

}  // namespace warpwatch
