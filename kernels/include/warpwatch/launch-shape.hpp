// Launch shape of kernels that use GroupProbe<N> (probe.cuh). The probe numbers threads the way
// the hardware forms warps: inside a block, thread (x, y, z) of a (Dx, Dy, Dz) block has the
// linear id x + Dx·(y + Dy·z) and each 32 consecutive ids form a warp; blocks are numbered
// x + Gx·(y + Gy·z) over a (Gx, Gy, Gz) grid. Global warp w = (block · threadsPerBlock +
// threadId) / 32, lane l = threadId mod 32, group w·⌊32/N⌋ + l/N. So 1-D, 2-D and 3-D grids and
// blocks all work, as long as a block is a whole number of warps (32..1024 threads, a multiple
// of 32): a block that ends in a partial warp would give groups with missing lanes, and this
// check rejects it before the launch.
//
//   const dim3 threads(16, 16);                                            // 256 threads, 8 warps
//   const auto blocks = warpwatch::probeBlocksFor(groups, 256, 8);        // enough blocks for the groups
//   warpwatch::checkProbeLaunchShape(dim3(blocks), threads);              // throws on a bad shape
//   kernel<<<blocks, threads, 0, stream>>>(..., buffers, true);
//
// Plain C++17 (the dim3 overload and __device__ qualifiers only under nvcc); no CUDA calls.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "device-common.hpp"  // ProbeThreadPosition, probeThreadPosition, WARPWATCH_HOST_DEVICE

namespace warpwatch {

/// Largest block the probe accepts (the CUDA limit): 1024 threads.
inline constexpr unsigned kMaxProbeBlockThreads = 1024;

// ProbeThreadPosition and probeThreadPosition (the numbering above) are in device-common.hpp.

/// Throws std::invalid_argument with a message starting "WW_ERR_KERNELS_LAUNCH_SHAPE" unless
/// every grid and block dimension is ≥ 1 and the block has 32..1024 threads in all (x·y·z), a
/// multiple of 32. 1-D, 2-D and 3-D grids and blocks are fine. Arguments are the grid and block
/// dimensions (CUDA's gridDim / blockDim).
///
/// Example: checkProbeLaunchShape(1024, 1, 1, 256, 1, 1);   // fine
///          checkProbeLaunchShape(64, 8, 1, 16, 16, 1);     // fine: 2-D grid of 16×16 blocks
///          checkProbeLaunchShape(64, 1, 1, 10, 3, 1);      // throws: 30 threads, a partial warp
inline void checkProbeLaunchShape(unsigned gridX, unsigned gridY, unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("WW_ERR_KERNELS_LAUNCH_SHAPE: " + what +
                                "; GroupProbe needs blocks of a whole number of warps (32..1024 threads, a multiple of 32)");
  };
  if (gridX == 0 || gridY == 0 || gridZ == 0) {
    fail("grid (" + std::to_string(gridX) + ", " + std::to_string(gridY) + ", " + std::to_string(gridZ) + ") has a dimension 0");
  }
  if (blockX == 0 || blockY == 0 || blockZ == 0) {
    fail("block (" + std::to_string(blockX) + ", " + std::to_string(blockY) + ", " + std::to_string(blockZ) + ") has a dimension 0");
  }
  const std::uint64_t threads = static_cast<std::uint64_t>(blockX) * blockY * blockZ;
  if (threads % 32 != 0 || threads > kMaxProbeBlockThreads) {
    fail("block (" + std::to_string(blockX) + ", " + std::to_string(blockY) + ", " + std::to_string(blockZ) + ") of " + std::to_string(threads) +
         " threads is not a multiple of 32 in 32..1024");
  }
}

/// Groups of `groupSize` lanes (1..32) that `blocks` blocks (all dimensions multiplied) of
/// `threadsPerBlock` threads (x·y·z, a multiple of 32) host: blocks · threadsPerBlock/32 warps × ⌊32/groupSize⌋ groups per warp.
///
/// Example: probeGroupCapacity(4, 256, 8) == 128
inline std::uint64_t probeGroupCapacity(std::uint64_t blocks, unsigned threadsPerBlock, unsigned groupSize) {
  return blocks * (threadsPerBlock / 32u) * (32u / groupSize);
}

/// Fewest blocks (a 1-D grid; spread them over a 2-D/3-D grid as you like) of `threadsPerBlock` threads (a multiple of 32) that host `groups` groups
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
