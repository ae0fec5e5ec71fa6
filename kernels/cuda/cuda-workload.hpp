// Shared host pieces of the CUDA workload programs: flag parsing (workload-options.hpp),
// compile-time dispatch over the group size (group-size-dispatch.hpp), launch geometry, launch
// completion and the exit report.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "warpwatch/group-size-dispatch.hpp"
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

/// LaunchInfo.groupsPerBlock for the selection: with `--selection block`, the groups of one
/// thread block (its warps × ⌊32/N⌋ groups per warp), so a sampled block is one contiguous run;
/// 0 for the other selections.
template <unsigned N>
std::uint16_t blockRunGroups(Selection selection) {
  return selection == Selection::Block ? static_cast<std::uint16_t>((kThreadsPerBlock / 32) * (32 / N)) : 0;
}

/// Running sums for the one-line JSON report a workload prints on stderr at exit (same shape as
/// the CPU programs' report, without their remeasurement counters).
struct RunReport {
  std::uint64_t launches = 0;
  std::uint64_t groups = 0;
  double sumCountsLoss = 0;
  double sumMeasuredLoss = 0;
  double seconds = 0;
  /// Σ over launches of the kernel's own time (CUDA events around the launch), ms; 0 when not timed.
  double kernelMillis = 0;

  void add(const LaunchTotals& totals) {
    launches += 1;
    groups += totals.groupsCounted;
    sumCountsLoss += totals.sumCountsLoss;
    sumMeasuredLoss += totals.sumMeasuredLoss;
  }
  void print(const char* workload, unsigned n, const RecorderStats& stats, double checksum) const {
    std::fprintf(stderr,
                 "{\"workload\":\"%s\",\"backend\":\"cuda\",\"n\":%u,\"launches\":%llu,\"groups\":%llu,\"lossCounts\":%.6f,"
                 "\"lossMeasured\":%.6f,\"framesWritten\":%llu,\"framesDropped\":%llu,\"launchesSkipped\":%llu,\"seconds\":%.3f,\"kernelMillis\":%.4f,\"checksum\":%.6g}\n",
                 workload, n, static_cast<unsigned long long>(launches), static_cast<unsigned long long>(groups),
                 groups ? sumCountsLoss / static_cast<double>(groups) : 0.0, groups ? sumMeasuredLoss / static_cast<double>(groups) : 0.0,
                 static_cast<unsigned long long>(stats.writer.written),
                 static_cast<unsigned long long>(stats.writer.droppedQueueFull + stats.writer.droppedSink),
                 static_cast<unsigned long long>(stats.launchesSkipped), seconds, kernelMillis, checksum);
  }
};

/// Completes a kernel launch just enqueued on `stream`: hands its ticket to the recorder (which
/// copies its frames asynchronously), checks the launch, waits for the stream and adds the
/// launch's totals to `report`. `kernelName` names the kernel in error messages.
/// Throws std::runtime_error when the launch or the kernel failed.
inline void completeLaunch(Recorder& recorder, cudaStream_t stream, LaunchTicket&& ticket, const char* kernelName, RunReport& report) {
  const ProbeBuffers buffers = ticket.buffers();
  const cudaError_t launched = cudaGetLastError();
  recorder.endLaunch(std::move(ticket));  // before a throw: the slot is handed back either way
  if (launched != cudaSuccess) checkCuda(launched, (std::string(kernelName) + " launch").c_str());
  // The exit report reads this launch's totals too (a second small copy; frames do not depend on it).
  LaunchTotals totals{};
  checkCuda(cudaMemcpyAsync(&totals, buffers.totals, sizeof(LaunchTotals), cudaMemcpyDeviceToHost, stream), "cudaMemcpy(report totals)");
  checkCuda(cudaStreamSynchronize(stream), kernelName);
  report.add(totals);
}

/// main() wrapper: bad flags exit 2, runtime (CUDA) errors exit 1, each with one stderr line.
/// `probeOffSupported`: the program can run its kernel without the probe (`--probe off`).
template <typename Body>
int runMain(int argc, char** argv, Body&& body, bool probeOffSupported = false) {
  try {
    const WorkloadOptions options = parseWorkloadOptions(argc - 1, argv + 1);
    if (!options.probe && !probeOffSupported) throw std::invalid_argument("--probe off is supported by the CUDA matpow program only");
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

/// main() of a CUDA workload program with one kernel per group size: runMain, the recorder,
/// `run(n, options, recorder, report)` for the group size the options ask for (`n` is a
/// std::integral_constant<unsigned, N>; it returns the checksum), the recorder closed, and the
/// run report printed under `name(options)` unless --quiet.
template <typename Name, typename Run>
int runGroupSizeWorkload(int argc, char** argv, Name&& name, Run&& run) {
  return runMain(argc, argv, [&](const WorkloadOptions& options) {
    Recorder recorder(recorderOptions(options));
    RunReport report;
    double checksum = 0;
    const auto started = std::chrono::steady_clock::now();
    dispatchGroupSize(options.groupSize, [&](auto n) { checksum = run(n, options, recorder, report); });
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print(name(options), options.groupSize, recorder.stats(), checksum);
    return 0;
  });
}

}  // namespace warpwatch::cuda
