// warpwatch device probe: what a kernel author adds to a loop to measure lockstep loss
// (model.md §3). Per group (a warp, or n = 1..32 consecutive lanes of one warp) it records
// each lane's iteration count w_i, the group start clock c0, each lane's finish clock c_i
// (read by its last iteration(): inside the loop, since on a SIMT GPU code after the loop runs
// only when the warp's deepest lane is done) and the group end clock c_end (after an optional group
// synchronisation), reduces them within the group with warp intrinsics, aggregates the launch
// summary with warp-aggregated atomics, and writes sampled groups to a bounded buffer.
//
//   __global__ void kernel(const unsigned* work, warpwatch::ProbeBuffers probeBuffers, bool sync) {
//     warpwatch::GroupProbe<8> probe(probeBuffers, sync);       // groups of n = 8 lanes
//     if (!probe.active(groupCount)) return;                   // spare lanes / past the last group
//     const unsigned w = work[probe.unitIndex()];
//     probe.begin();                                           // (sync), c0
//     for (unsigned k = 0; k < w; ++k) { body(); probe.iteration(); }  // w_i += 1, c_i = clock
//     probe.finish();                                          // c_i = c0 when w_i = 0
//     probe.end();                                             // (sync), c_end, reduce, atomics, sample
//   }
//   // host: warpwatch::Recorder (recorder.hpp) provides ProbeBuffers and writes the frames.
//
// Group layout: lane l of a warp belongs to group (l / n) of that warp; a warp hosts
// floor(32 / n) groups and, when n does not divide 32, its last 32 mod n lanes stay idle.
// Group index = globalWarp * floor(32/n) + l / n; unit (lane) index = group * n + l mod n.
// Sync: power-of-two n uses a cooperative-groups tile (tiled_partition<n>().sync()), other n
// __syncwarp(groupMask). Requires sm_70+ (independent thread scheduling, labeled_partition);
// __reduce_max_sync on sm_80+, shuffles below.
// Block runs (SPEC.md selection `block`): with LaunchInfo.selection = Selection::Block and
// LaunchInfo.groupsPerBlock = (threads per block / 32) * floor(32 / n), every group of a selected thread
// block is sampled, so its warps form one contiguous run (units in order) for the block-level
// loss (model.md §11).
// Launch shape: 1-D, 2-D or 3-D grids and blocks; threads are numbered the way the hardware forms
// warps (linear thread id x + Dx·(y + Dy·z) in a block, linear block id over the grid; see
// launch-shape.hpp). A block must be a whole number of warps (32..1024 threads, a multiple of
// 32): check it on the host with checkProbeLaunchShape() (launch-shape.hpp, included here). With
// a partial last warp the device code does not trap, but that warp's groups miss lanes.
#pragma once

// The device code (GroupProbe, NullGroupProbe) is NVRTC-safe and lives in probe-device.cuh;
// this header adds the host-side checks (launch-shape.hpp: checkProbeLaunchShape,
// probeBlocksFor; launch-totals.hpp: fitSamplingStride), which need the C++ standard library.
#include "launch-shape.hpp"

#include "launch-totals.hpp"

#include "probe-device.cuh"
