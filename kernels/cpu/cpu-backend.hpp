// CPU lockstep backend: shared pieces of the CPU workload programs.
//
// A "group" here is n lanes held in arrays of length N (a template constant = n), and every
// loop body is written as `for (lane = 0; lane < N; ++lane)` over all lanes, active or not,
// followed by a masked select. The compiler vectorises the lane loop (SSE at
// -march=x86-64-v2), so the lanes really run in lockstep: a group-iteration costs the same
// whatever the mask, and the group runs until its deepest lane ends. Clocks are
// std::chrono::steady_clock nanoseconds (frames say clockHz = 1e9, source = cpu).
//
// These are CPU SIMD lanes, not GPU threads: the numbers measure lockstep loss on this CPU
// and are never to be reported as GPU measurements.
#pragma once

#include <cstdlib>
#include <sys/resource.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <array>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "warpwatch/frame.hpp"
#include "warpwatch/group-size-dispatch.hpp"
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/launch-frames.hpp"
#include "warpwatch/workload-options.hpp"

namespace warpwatch::cpu {

/// std::chrono::steady_clock in ns (the default clock of CPU frames).
inline std::uint64_t steadyClockNanos() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

/// CPU time of the calling thread in ns (--clock thread): stops while the thread is descheduled,
/// so preemption cannot enter C_SIMT or C_MIMD; each read is a system call (~0.2 µs).
inline std::uint64_t threadCpuNanos() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(now.tv_nsec);
}

namespace detail {
inline std::uint64_t (*groupClock)() = steadyClockNanos;
}  // namespace detail

/// Selects the clock of the group measurements: "steady" (default) or "thread".
inline void selectGroupClock(const std::string& name) {
  if (name == "steady") detail::groupClock = steadyClockNanos;
  else if (name == "thread") detail::groupClock = threadCpuNanos;
  else throw std::invalid_argument("--clock must be steady or thread, got '" + name + "'");
}

/// The group clock in ns: the clock of every CPU frame (differences within a group only).
inline std::uint64_t steadyNanos() { return detail::groupClock(); }

/// A stable UUID for this host's CPU (there is no hardware one): name-based, from the host's
/// identity (/etc/machine-id, else the host name) and the CPU model, with the version nibble 8
/// (RFC 9562 custom) and the RFC variant bits. The same machine gives the same UUID in every run;
/// two machines differ, so CPU streams of different hosts stay apart even without a collector.
inline std::array<std::uint8_t, 16> cpuDeviceUuid(const std::string& model) {
  std::string host;
  std::ifstream machineId("/etc/machine-id");
  std::getline(machineId, host);
  if (host.empty()) {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0) host = name;
  }
  const std::string key = host + "|" + model;
  // Two FNV-1a 64 lanes with different offsets and a final mix: 128 bits.
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : key) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x100000001b3ull ^ (b >> 29);
  }
  a ^= b >> 31;
  b ^= a * 0x9e3779b97f4a7c15ull;
  std::array<std::uint8_t, 16> uuid{};
  for (int i = 0; i < 8; ++i) {
    uuid[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a >> (56 - 8 * i));
    uuid[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b >> (56 - 8 * i));
  }
  uuid[6] = static_cast<std::uint8_t>((uuid[6] & 0x0f) | 0x80);  // version 8
  uuid[8] = static_cast<std::uint8_t>((uuid[8] & 0x3f) | 0x80);  // RFC variant
  return uuid;
}

/// The CPU as a frame device: model name from /proc/cpuinfo, a host-stable UUID
/// (cpuDeviceUuid), clockHz = 1e9 (ns ticks), cc 0.0.
inline DeviceInfo cpuDeviceInfo() {
  DeviceInfo device;
  device.name = "cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) device.name = "cpu: " + line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  if (device.name.size() > 255) device.name.resize(255);
  device.clockHz = 1000000000ull;
  device.uuid = cpuDeviceUuid(device.name);
  return device;
}

/// Flush denormals to zero: keeps every lane-iteration the same cost (denormal arithmetic is
/// up to 100x slower on x86 and would make cost depend on the data, not on the lockstep).
inline void enableFlushToZero() { _mm_setcsr(_mm_getcsr() | 0x8040); }

/// Sets finish[lane] = now for the lanes whose count equals `iterationsDone`, branch-free (a
/// masked select), so the cost per group-iteration does not depend on which lanes finish.
template <unsigned N>
inline void recordFinishes(std::uint64_t* finish, const std::uint32_t* counts, std::uint32_t iterationsDone, std::uint64_t now) {
  for (unsigned lane = 0; lane < N; ++lane) {
    const std::uint64_t select = std::uint64_t{0} - static_cast<std::uint64_t>(counts[lane] == iterationsDone);
    finish[lane] = (finish[lane] & ~select) | (now & select);
  }
}

/// Sets finish[lane] = now for the lanes flagged in `finished` (1 = finished in this
/// group-iteration, 0 = not), branch-free like recordFinishes: for loops whose trip count is
/// found while running (escape, relax), not known in advance.
template <unsigned N>
inline void stampFinished(std::uint64_t* finish, const std::uint32_t* finished, std::uint64_t now) {
  for (unsigned lane = 0; lane < N; ++lane) {
    const std::uint64_t select = std::uint64_t{0} - static_cast<std::uint64_t>(finished[lane]);
    finish[lane] = (finish[lane] & ~select) | (now & select);
  }
}

/// Running sums for the one-line JSON report a workload prints on stderr at exit.
struct RunReport {
  std::uint64_t launches = 0;
  std::uint64_t groups = 0;
  double sumCountsLoss = 0;
  double sumMeasuredLoss = 0;
  double seconds = 0;
  std::uint64_t groupsRemeasured = 0;  ///< measurements repeated because the thread was descheduled
  std::uint64_t groupsDisturbed = 0;   ///< groups still descheduled after every attempt (kept as measured)

  void add(const LaunchTotals& totals) {
    launches += 1;
    groups += totals.groupsCounted;
    sumCountsLoss += totals.sumCountsLoss;
    sumMeasuredLoss += totals.sumMeasuredLoss;
  }
  void print(const char* workload, const WorkloadOptions& options, const WriterStats& stats, double checksum) const {
    std::fprintf(stderr,
                 "{\"workload\":\"%s\",\"backend\":\"cpu\",\"n\":%u,\"launches\":%llu,\"groups\":%llu,"
                 "\"lossCounts\":%.6f,\"lossMeasured\":%.6f,\"framesWritten\":%llu,\"framesDropped\":%llu,"
                 "\"groupsRemeasured\":%llu,\"groupsDisturbed\":%llu,\"seconds\":%.3f,\"checksum\":%.6g}\n",
                 workload, options.groupSize, static_cast<unsigned long long>(launches), static_cast<unsigned long long>(groups),
                 groups ? sumCountsLoss / static_cast<double>(groups) : 0.0, groups ? sumMeasuredLoss / static_cast<double>(groups) : 0.0,
                 static_cast<unsigned long long>(stats.written),
                 static_cast<unsigned long long>(stats.droppedQueueFull + stats.droppedSink), static_cast<unsigned long long>(groupsRemeasured),
                 static_cast<unsigned long long>(groupsDisturbed), seconds, checksum);
  }
};

/// Voluntary + involuntary context switches of the calling thread so far.
inline long threadContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}

/// Runs `measureGroup()` (which must run the group from the same initial state every time)
/// until one run was not descheduled, at most `maxAttempts` times.
///
/// Why: a wall clock keeps running while the OS runs another thread. A pause of d at time τ
/// adds n·d to C_SIMT but only d per lane finishing after τ to C_MIMD, so preemption biases
/// measured H upwards, badly on a loaded machine (a time slice is ms, a group 10 µs..1 ms).
/// Preemption is independent of the workload, so measuring the group again is unbiased.
template <typename MeasureGroup>
GroupMeasurement measureUndisturbed(MeasureGroup&& measureGroup, unsigned maxAttempts, RunReport& report) {
  for (unsigned attempt = 1;; ++attempt) {
    const long before = threadContextSwitches();
    GroupMeasurement m = measureGroup();
    if (threadContextSwitches() == before || maxAttempts == 0) return m;
    if (attempt >= maxAttempts) {
      report.groupsDisturbed += 1;
      return m;
    }
    report.groupsRemeasured += 1;
  }
}

/// Ends a launch: stamps its end time, adds its totals to the exit report and hands its
/// frames (summary and samples) to the recorder.
inline void finishLaunch(LaunchInfo& info, const LaunchAccumulator& accumulator, LaunchRecorder& recorder, RunReport& report) {
  info.endUnixNanos = unixNanosNow();
  report.add(accumulator.totals());
  recorder.recordLaunch(info, accumulator.totals(), accumulator.samples().data(), accumulator.samples().size());
}

/// A launch id that is unique per run and launch: splitmix64 of the wall clock and the index.
/// A fresh launch id: time-seeded, so each run samples other groups under hash selection. With
/// WARPWATCH_CPU_LAUNCH_ID_SEED=<decimal u64> in the environment the ids, and so which groups are
/// sampled, repeat from run to run (tests that compare a claim with a measurement need that).
inline std::uint64_t makeLaunchId(std::uint64_t launchIndex) {
  const char* seed = std::getenv("WARPWATCH_CPU_LAUNCH_ID_SEED");
  const std::uint64_t base = seed != nullptr && *seed != '\0' ? std::strtoull(seed, nullptr, 10) : unixNanosNow();
  return splitmix64(base ^ (launchIndex * 0x9E3779B97F4A7C15ull));
}

/// The LaunchInfo of one CPU launch of `groupCount` groups of `groupSize` lanes: job, kernel
/// (`--kernel`, else `defaultKernel`), source cpu, sync, device, a fresh launch id, the sampling
/// selection with its stride fitted to the sample buffer (unbiased when the buffer would
/// overflow), and the start time now.
///
/// Example: LaunchInfo info = cpuLaunchInfo(options, device, "relax", N, launch, field.grid.groups);
inline LaunchInfo cpuLaunchInfo(const WorkloadOptions& options, const DeviceInfo& device, const std::string& defaultKernel, unsigned groupSize, std::uint64_t launchIndex,
                                std::uint64_t groupCount) {
  LaunchInfo info;
  info.job = options.job;
  info.kernel = options.kernel.empty() ? defaultKernel : options.kernel;
  info.source = Source::Cpu;
  info.groupSize = groupSize;
  info.sync = options.sync;
  info.device = device;
  info.launchId = makeLaunchId(launchIndex);
  info.groupCount = groupCount;
  info.selection = options.selection;
  info.groupsPerBlock = options.groupsPerBlock();
  info.samplingStride = fitSamplingStride(info.selection, options.samplingStride(), info.groupCount, options.sampleCapacity, info.groupsPerBlock);
  info.startUnixNanos = unixNanosNow();
  return info;
}

/// Common main() wrapper: parses flags, reports problems on stderr (exit 2) or runtime errors (exit 1).
template <typename Body>
int runMain(int argc, char** argv, Body&& body) {
  try {
    const WorkloadOptions options = parseWorkloadOptions(argc - 1, argv + 1);
    if (!options.probe) throw std::invalid_argument("--probe off is supported by the CUDA matpow program only (the CPU backend always measures)");
    selectGroupClock(options.clock);
    enableFlushToZero();
    return body(options);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}

/// main() of a CPU workload program with one lockstep kernel per group size: runMain, then the
/// sink, `run(n, options, recorder, report)` for the group size the options ask for (`n` is a
/// std::integral_constant<unsigned, N>; it returns the checksum), the recorder closed, and the
/// run report printed under `name` unless --quiet. Exit codes as runMain.
///
/// Example: return runGroupSizeWorkload(argc, argv, [](const WorkloadOptions&) { return "relax"; },
///                                      [](auto n, const WorkloadOptions& o, LaunchRecorder& r, RunReport& rep) {
///                                        return runRelax<decltype(n)::value>(o, r, rep); });
template <typename Name, typename Run>
int runGroupSizeWorkload(int argc, char** argv, Name&& name, Run&& run) {
  return runMain(argc, argv, [&](const WorkloadOptions& options) {
    LaunchRecorder recorder(openSink(options.sink), options.queueCapacity);
    RunReport report;
    double checksum = 0;
    const auto started = std::chrono::steady_clock::now();
    dispatchGroupSize(options.groupSize, [&](auto n) { checksum = run(n, options, recorder, report); });
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print(name(options), options, recorder.stats(), checksum);
    return 0;
  });
}

}  // namespace warpwatch::cpu
