// warpwatch device probe, NVRTC-safe: GroupProbe<N> and NullGroupProbe<N> (probe.cuh explains
// their use) with only what device code needs (device-common.hpp). No C++ standard library
// headers and no host functions, so it compiles under NVRTC as well as nvcc:
//
//   // CuPy: cupy.RawModule(code=src, options=("-std=c++17", "-I<kernels/include>", "-I<CUDA include>"))
//   #include <warpwatch/probe-device.cuh>
//   extern "C" __global__ void k(const unsigned* work, warpwatch::ProbeBuffers b) { ... }
//
// NVRTC needs the CUDA include directory (cooperative_groups.h; from the nvidia-cuda-runtime-cu12
// wheel) and CCCL's (<cuda/std/cstdint>, <nv/target>; nvidia-cuda-cccl-cu12) on its include path;
// `python -m warpwatch.nvrtc_check` compiles this header for sm_70, sm_80 and sm_90. C++ users
// include probe.cuh, which includes this header and the host-side launch checks.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "warpwatch/probe.cuh needs compute capability 7.0 (Volta) or newer: it relies on independent thread scheduling, __syncwarp masks and cooperative_groups::labeled_partition. Compile for sm_70+ (nvcc -arch=sm_70 or newer; CMake: CMAKE_CUDA_ARCHITECTURES 70 or above)."
#endif

#include <cooperative_groups.h>

#include "device-common.hpp"

namespace warpwatch {

namespace detail {

/// Reduces a value over the N lanes of this lane's group; every lane of the group gets the result.
/// Power-of-two N: xor butterfly inside N-lane segments (log2 N shuffles); other N: N shuffles.
template <unsigned N, typename T, typename Op>
__device__ __forceinline__ T groupAllReduce(unsigned mask, unsigned baseLane, T value, Op op) {
  if constexpr ((N & (N - 1)) == 0) {
    for (unsigned offset = N / 2; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(mask, value, offset, N));
    return value;
  } else {
    T accumulator = __shfl_sync(mask, value, baseLane);
    for (unsigned j = 1; j < N; ++j) accumulator = op(accumulator, __shfl_sync(mask, value, baseLane + j));
    return accumulator;
  }
}

struct Max {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a > b ? a : b; }
};
struct Min {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? a : b; }
};
struct Plus {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

__device__ __forceinline__ unsigned long long clockTicks() { return static_cast<unsigned long long>(clock64()); }

/// This thread's global warp and lane (probeThreadPosition over CUDA's built-in indices).
__device__ __forceinline__ ProbeThreadPosition thisThreadPosition() {
  return probeThreadPosition(blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, threadIdx.x, threadIdx.y, threadIdx.z, blockDim.x, blockDim.y, blockDim.z);
}

}  // namespace detail

/// A probe that records nothing: the same group/lane mapping as GroupProbe<N>, every measuring
/// call a no-op. A kernel templated on its probe type runs the identical work with it, which is
/// the baseline of the probe-overhead measurement (`--probe off`).
template <unsigned N>
class NullGroupProbe {
  static_assert(N >= 1 && N <= 32, "group size must be 1..32");

 public:
  static constexpr unsigned kGroupsPerWarp = 32 / N;

  __device__ NullGroupProbe(const ProbeBuffers&, bool) {
    const ProbeThreadPosition position = detail::thisThreadPosition();
    const unsigned lane = position.lane;
    const unsigned long long globalWarp = position.globalWarp;
    groupInWarp_ = lane / N;
    rank_ = lane % N;
    groupIndex_ = globalWarp * kGroupsPerWarp + groupInWarp_;
  }
  __device__ bool active(unsigned long long groupCount) const { return groupInWarp_ < kGroupsPerWarp && groupIndex_ < groupCount; }
  __device__ unsigned long long groupIndex() const { return groupIndex_; }
  __device__ unsigned long long unitIndex() const { return groupIndex_ * N + rank_; }
  __device__ unsigned rank() const { return rank_; }
  __device__ void begin() {}
  __device__ void iteration() {}
  __device__ void iterations(unsigned) {}
  __device__ void finish() {}
  __device__ void end() {}

 private:
  unsigned groupInWarp_ = 0;
  unsigned rank_ = 0;
  unsigned long long groupIndex_ = 0;
};

/// The probe of one lane in a group of N lanes. All lanes of a group must call begin(), finish()
/// and end() (they contain group-wide shuffles); iteration() is per lane and free of communication.
template <unsigned N>
class GroupProbe {
  static_assert(N >= 1 && N <= 32, "group size must be 1..32");

 public:
  static constexpr unsigned kGroupsPerWarp = 32 / N;

  /// Computes this lane's group and rank from its linear position (1-D, 2-D or 3-D launches;
  /// blocks of a whole number of warps).
  __device__ GroupProbe(const ProbeBuffers& buffers, bool sync) : buffers_(buffers), sync_(sync) {
    const ProbeThreadPosition position = detail::thisThreadPosition();
    const unsigned lane = position.lane;
    const unsigned long long globalWarp = position.globalWarp;
    groupInWarp_ = lane / N;
    rank_ = lane % N;
    baseLane_ = groupInWarp_ * N;
    mask_ = N == 32 ? 0xFFFFFFFFu : (((1u << N) - 1u) << baseLane_);
    groupIndex_ = globalWarp * kGroupsPerWarp + groupInWarp_;
  }
  /// As above, but with an explicit group index (a kernel that runs several groups per lane in
  /// sequence, e.g. one per repetition). Must be the same on every lane of the group.
  __device__ GroupProbe(const ProbeBuffers& buffers, bool sync, unsigned long long groupIndex) : GroupProbe(buffers, sync) {
    groupIndex_ = groupIndex;
  }

  /// Whether this lane works: false for the spare lanes of a warp (32 mod N) and for groups at or
  /// past `groupCount`. Whole groups agree, so returning early keeps groups intact.
  __device__ bool active(unsigned long long groupCount) const { return groupInWarp_ < kGroupsPerWarp && groupIndex_ < groupCount; }

  __device__ unsigned long long groupIndex() const { return groupIndex_; }
  /// Index of this lane's unit of work: groupIndex * N + rank.
  __device__ unsigned long long unitIndex() const { return groupIndex_ * N + rank_; }
  __device__ unsigned rank() const { return rank_; }
  __device__ unsigned count() const { return count_; }

  /// Group synchronisation: a cooperative-groups tile for power-of-two N, __syncwarp(mask) otherwise.
  __device__ void sync() const {
    if constexpr ((N & (N - 1)) == 0) {
      cooperative_groups::tiled_partition<N>(cooperative_groups::this_thread_block()).sync();
    } else {
      __syncwarp(mask_);
    }
  }

  /// Start of the measured loop: synchronises the group when sync is on, then reads c0.
  __device__ void begin() {
    if (sync_) sync();
    start_ = detail::clockTicks();
  }
  /// Counts one iteration of this lane and reads the clock: the read of the lane's last
  /// iteration is its c_i. Call it at the end of each iteration's work.
  ///
  /// The clock is read here, inside the loop, because on a SIMT GPU a lane whose loop has ended
  /// waits, inactive, until the deepest lane of its warp leaves the loop too: code after the loop
  /// (finish()) runs for all lanes at once, so a read there would give every lane the group's
  /// end time and the measured loss would always be 1 (seen on an H100: docs/validation.md).
  __device__ void iteration() {
    ++count_;
    finish_ = detail::clockTicks();
  }
  /// Adds `iterations` at once (loops whose trip count is known) and reads the clock, as iteration().
  /// Call it where the lane's own work ends, before the warp reconverges (inside the lane's
  /// branch or loop): called after a loop that the lanes leave at different times, it reads the
  /// same clock on every lane, as finish() did.
  __device__ void iterations(unsigned iterations) {
    count_ += iterations;
    finish_ = detail::clockTicks();
  }
  /// After the loop: fixes c_i. A lane that ran iterations keeps the clock of its last
  /// iteration(); a lane that ran none finishes at its own start (no work, no MIMD time).
  __device__ void finish() {
    if (count_ == 0) finish_ = start_;
  }

  /// Ends the group: optional group sync, c_end, group reductions, warp-aggregated atomics into
  /// the launch totals, and the sample when this group is selected.
  __device__ void end() {
    if (sync_) sync();
    const unsigned long long endClock = detail::clockTicks();
    // Group values (each lane gets them): c0 = earliest lane start, c_end = latest lane end.
    const unsigned long long c0 = detail::groupAllReduce<N>(mask_, baseLane_, start_, detail::Min{});
    const unsigned long long cEnd = detail::groupAllReduce<N>(mask_, baseLane_, endClock, detail::Max{});
    const unsigned long long laneMimd = finish_ > c0 ? finish_ - c0 : 0ull;
    const unsigned long long mimdClocks = detail::groupAllReduce<N>(mask_, baseLane_, laneMimd, detail::Plus{});
    const unsigned long long sumCounts = detail::groupAllReduce<N>(mask_, baseLane_, static_cast<unsigned long long>(count_), detail::Plus{});
#if __CUDA_ARCH__ >= 800
    const unsigned maxCount = __reduce_max_sync(mask_, count_);
#else
    const unsigned maxCount = detail::groupAllReduce<N>(mask_, baseLane_, count_, detail::Max{});
#endif
    const unsigned long long simtClocks = static_cast<unsigned long long>(N) * (cEnd - c0);

    recordHistogram();

    if (rank_ == 0) {
      // Warp-aggregated atomics: the leaders of the groups that reach this point together
      // reduce among themselves and one of them adds to the launch totals.
      namespace cg = cooperative_groups;
      const cg::coalesced_group leaders = cg::coalesced_threads();
      const unsigned long long groups = leaders.size();
      const unsigned long long simt = aggregate(leaders, simtClocks);
      const unsigned long long mimd = aggregate(leaders, mimdClocks);
      const unsigned long long maxSum = aggregate(leaders, static_cast<unsigned long long>(maxCount));
      const unsigned long long countSum = aggregate(leaders, sumCounts);
      const double measured = aggregate(leaders, measuredGroupLoss(simtClocks, mimdClocks));
      const double fromCounts = aggregate(leaders, groupLossFromCounts(maxCount, sumCounts, N));
      if (leaders.thread_rank() == 0) {
        LaunchTotals* t = buffers_.totals;
        atomicAdd(&t->groupsCounted, groups);
        atomicAdd(&t->sumSimtClocks, simt);
        atomicAdd(&t->sumMimdClocks, mimd);
        atomicAdd(&t->sumMaxCounts, maxSum);
        atomicAdd(&t->sumCounts, countSum);
        atomicAdd(&t->sumMeasuredLoss, measured);
        atomicAdd(&t->sumCountsLoss, fromCounts);
      }
    }
    writeSample(c0, cEnd);
  }

 private:
  template <typename T>
  __device__ static T aggregate(const cooperative_groups::coalesced_group& leaders, T value) {
    // Shuffle tree over the coalesced leaders (a warp holds at most 32 of them).
    for (unsigned offset = 1; offset < leaders.size(); offset *= 2) {
      const T other = leaders.shfl_down(value, offset);
      if (leaders.thread_rank() + offset < leaders.size()) value += other;
    }
    return value;
  }

  /// Histogram: lanes of the warp with the same bin add once (labeled_partition = match_any).
  __device__ void recordHistogram() const {
    namespace cg = cooperative_groups;
    const unsigned bin = histogramBinOf(count_);
    const cg::coalesced_group active = cg::coalesced_threads();
    const cg::coalesced_group peers = cg::labeled_partition(active, bin);
    if (peers.thread_rank() == 0) atomicAdd(&buffers_.totals->histogram[bin], static_cast<unsigned long long>(peers.size()));
  }

  /// Sampled groups claim a slot with one atomic; a claim past the capacity is counted as dropped
  /// and nothing is written (never out of bounds).
  __device__ void writeSample(unsigned long long c0, unsigned long long cEnd) const {
    if (!isGroupSampled(buffers_.selection, buffers_.launchId, groupIndex_, buffers_.samplingStride, buffers_.groupsPerBlock)) return;  // uniform per group
    unsigned slot = 0;
    if (rank_ == 0) slot = atomicAdd(&buffers_.totals->sampleSlotsClaimed, 1u);
    slot = __shfl_sync(mask_, slot, baseLane_);
    if (slot >= buffers_.sampleCapacity) {
      if (rank_ == 0) atomicAdd(&buffers_.totals->droppedSamples, 1ull);
      return;
    }
    GroupSampleSlot& s = buffers_.samples[slot];
    s.laneCounts[rank_] = count_;
    s.laneFinishClocks[rank_] = finish_;
    if (rank_ == 0) {
      s.groupIndex = groupIndex_;
      s.startClock = c0;
      s.endClock = cEnd;
    }
  }

  ProbeBuffers buffers_;
  bool sync_;
  unsigned groupInWarp_ = 0, rank_ = 0, baseLane_ = 0, mask_ = 0;
  unsigned long long groupIndex_ = 0;
  unsigned count_ = 0;
  unsigned long long start_ = 0, finish_ = 0;
};

}  // namespace warpwatch
