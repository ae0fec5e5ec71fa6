// Shared host pieces of the CUDA workload programs: flag parsing (workload-options.hpp),
// compile-time dispatch over the group size, launch geometry and the exit report.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "warpwatch/recorder.hpp"
#include "warpwatch/workload-options.hpp"

namespace warpwatch::cuda {

/// 256 threads per block, as in the published matrix-power benchmark (model.md §3).
constexpr unsigned kThreadsPerBlock = 256;

/// Blocks needed so that every one of `groups` groups of N lanes gets a warp slot.
template <unsigned N>
unsigned long long blocksFor(std::uint64_t groups) {
  const std::uint64_t groupsPerWarp = 32 / N;
  const std::uint64_t warps = (groups + groupsPerWarp - 1) / groupsPerWarp;
  return (warps * 32 + kThreadsPerBlock - 1) / kThreadsPerBlock;
}

namespace detail {
template <typename F, unsigned... I>
void dispatchImpl(unsigned n, F& f, std::integer_sequence<unsigned, I...>) {
  ((n == I + 1 ? (f(std::integral_constant<unsigned, I + 1>{}), 0) : 0), ...);
}
}  // namespace detail

/// Calls f(std::integral_constant<unsigned, N>{}) for the runtime group size n (1..32).
template <typename F>
void dispatchGroupSize(unsigned n, F&& f) {
  detail::dispatchImpl(n, f, std::make_integer_sequence<unsigned, 32>{});
}

/// Prints the one-line JSON report (same shape as the CPU programs) on stderr.
inline void printReport(const char* workload, unsigned n, std::uint64_t launches, std::uint64_t groups, double sumCountsLoss,
                        double sumMeasuredLoss, const RecorderStats& stats, double seconds, double checksum) {
  std::fprintf(stderr,
               "{\"workload\":\"%s\",\"backend\":\"cuda\",\"n\":%u,\"launches\":%llu,\"groups\":%llu,\"lossCounts\":%.6f,"
               "\"lossMeasured\":%.6f,\"framesWritten\":%llu,\"framesDropped\":%llu,\"launchesSkipped\":%llu,\"seconds\":%.3f,\"checksum\":%.6g}\n",
               workload, n, static_cast<unsigned long long>(launches), static_cast<unsigned long long>(groups),
               groups ? sumCountsLoss / static_cast<double>(groups) : 0.0, groups ? sumMeasuredLoss / static_cast<double>(groups) : 0.0,
               static_cast<unsigned long long>(stats.writer.written),
               static_cast<unsigned long long>(stats.writer.droppedQueueFull + stats.writer.droppedSink),
               static_cast<unsigned long long>(stats.launchesSkipped), seconds, checksum);
}

/// main() wrapper: bad flags exit 2, runtime (CUDA) errors exit 1, each with one stderr line.
template <typename Body>
int runMain(int argc, char** argv, Body&& body) {
  try {
    const WorkloadOptions options = parseWorkloadOptions(argc - 1, argv + 1);
    return body(options);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}

/// Recorder options from the flags.
inline RecorderOptions recorderOptions(const WorkloadOptions& options) {
  RecorderOptions r;
  r.sink = options.sink;
  r.queueCapacityFrames = options.queueCapacity;
  r.sampleCapacity = options.sampleCapacity;
  return r;
}

}  // namespace warpwatch::cuda
