// Host CPU cost of the recorder per launch, on the CPU path (BasicRecorder over FakeRuntime).
// Run by bench/recorder.bench.ts; prints one JSON line.
//
//   warpwatch-recorder-bench <mode> <launches> [sink]
//   mode: runtime-only   the runtime calls a recorded launch needs (clear, copy, host function)
//                        and the fake kernel, without the recorder: the baseline
//         record-all     every launch recorded (frames built and written to `sink`, default none)
//         sample-100     launchSampleEvery = 100
//         aggregate-10ms aggregateInterval = 10 ms (one frame per 10 ms of launches)
//   with the suffix -inline: a runtime that runs every operation (and host function) at once on
//   the calling thread, so the caller's time is the recorder's own work, with no hand-offs.
//
// Each launch: begin, the fake kernel (copies a prepared launch of 64 groups of 32 lanes, 8
// sampled, into the device buffers), end, then wait for the stream and for the encoder to hand
// the slot back (so no launch is skipped for want of a slot; a 5 us sleep loop). Reported: CPU
// time of the launching thread in beginLaunch + endLaunch (runtime-only: in the same runtime
// calls), minus the cost of the clock reads (what the job's thread pays); CPU time of the whole
// process per launch (adds the encoder and writer threads, the fake stream's worker thread and
// the wait loop) and per recorded launch.
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "warpwatch/fake-runtime.hpp"
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/recorder-core.hpp"

namespace ww = warpwatch;

namespace {

double threadCpuNanos() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}
double processCpuNanos() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ns = [](const timeval& v) { return static_cast<double>(v.tv_sec) * 1e9 + static_cast<double>(v.tv_usec) * 1e3; };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

/// CPU time so far of this process's threads named `name` (/proc/self/task/*/comm), ns.
double threadsCpuNanos(const std::string& name) {
  double total = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string dir = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(dir + "/comm");
    std::string threadName;
    std::getline(comm, threadName);
    if (threadName != name) continue;
    std::ifstream statFile(dir + "/stat");
    std::string stat((std::istreambuf_iterator<char>(statFile)), std::istreambuf_iterator<char>());
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime (clock ticks)
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    total += (utime + stime) / tick * 1e9;
  }
  closedir(tasks);
  return total;
}

/// A prepared launch: 64 groups of 32 lanes, one in 8 sampled (stride), as the probe leaves it.
struct PreparedLaunch {
  ww::LaunchTotals totals{};
  std::vector<ww::GroupSampleSlot> samples;
};
PreparedLaunch prepare() {
  ww::LaunchAccumulator accumulator(32, 1, {ww::Selection::Stride, 8}, 4096);
  for (std::uint64_t g = 0; g < 64; ++g) {
    ww::GroupMeasurement m;
    m.groupIndex = g;
    m.startClock = 0;
    for (unsigned lane = 0; lane < 32; ++lane) {
      m.laneCounts[lane] = 1 + static_cast<std::uint32_t>(ww::splitmix64(g * 32 + lane) % 100);
      m.laneFinishClocks[lane] = m.laneCounts[lane] * 4;
    }
    m.endClock = 401;
    accumulator.addGroup(m);
  }
  PreparedLaunch launch;
  launch.totals = accumulator.totals();
  launch.samples = accumulator.samples();
  return launch;
}

/// Runs every operation at once on the calling thread (host functions too): what is left of a
/// launch's cost is the recorder's own work, with no hand-off to a stream thread.
class InlineRuntime : public ww::FakeRuntime {
 public:
  ww::RuntimeStatus clearAsync(void* device, std::size_t bytes, ww::StreamHandle) noexcept override {
    std::memset(device, 0, bytes);
    return ww::RuntimeStatus::success();
  }
  ww::RuntimeStatus copyToHostAsync(void* host, const void* device, std::size_t bytes, ww::StreamHandle) noexcept override {
    std::memcpy(host, device, bytes);
    return ww::RuntimeStatus::success();
  }
  ww::RuntimeStatus launchHostFunction(ww::StreamHandle, ww::HostFunction function, void* userData) noexcept override {
    function(userData);
    return ww::RuntimeStatus::success();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s runtime-only|record-all|sample-100|aggregate-10ms[-inline] <launches> [sink]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const long launches = std::strtol(argv[2], nullptr, 10);
  const bool inlineRuntime = mode.size() > 7 && mode.compare(mode.size() - 7, 7, "-inline") == 0;
  const std::string base = inlineRuntime ? mode.substr(0, mode.size() - 7) : mode;
  if (launches <= 0 || (base != "runtime-only" && base != "record-all" && base != "sample-100" && base != "aggregate-10ms")) {
    std::fprintf(stderr, "%s: bad mode or launch count\n", argv[0]);
    return 2;
  }
  const PreparedLaunch prepared = prepare();
  std::shared_ptr<ww::FakeRuntime> runtime = inlineRuntime ? std::make_shared<InlineRuntime>() : std::make_shared<ww::FakeRuntime>();
  const ww::StreamHandle stream = runtime->createStream();
  const auto fakeKernel = [&prepared](ww::ProbeBuffers buffers) {
    return [&prepared, buffers] {
      std::memcpy(buffers.totals, &prepared.totals, sizeof(ww::LaunchTotals));
      const std::size_t n = std::min<std::size_t>(prepared.samples.size(), buffers.sampleCapacity);
      if (n > 0) std::memcpy(buffers.samples, prepared.samples.data(), n * sizeof(ww::GroupSampleSlot));
    };
  };

  // Cost of the two pairs of thread-clock reads around each launch's calls, subtracted below.
  double clockPairNanos = 0;
  {
    const int reps = 20000;
    const double c0 = threadCpuNanos();
    for (int i = 0; i < reps; ++i) (void)threadCpuNanos();
    clockPairNanos = 2.0 * (threadCpuNanos() - c0) / reps;
  }
  double callerNanos = 0, processNanos = 0, wallNanos = 0, encoderNanos = 0, writerNanos = 0;
  std::uint64_t recorded = 0, frameLaunches = 0;  // frameLaunches: summaries written
  const auto runKernel = [&](ww::ProbeBuffers buffers) {
    if (inlineRuntime) {
      fakeKernel(buffers)();
    } else {
      runtime->enqueue(stream, fakeKernel(buffers));
    }
  };
  if (base == "runtime-only") {
    ww::RuntimeStatus status;
    auto* deviceTotals = static_cast<ww::LaunchTotals*>(runtime->allocateDevice(sizeof(ww::LaunchTotals), status));
    auto* deviceSamples = static_cast<ww::GroupSampleSlot*>(runtime->allocateDevice(sizeof(ww::GroupSampleSlot) * 4096, status));
    auto* hostTotals = static_cast<ww::LaunchTotals*>(runtime->allocateHost(sizeof(ww::LaunchTotals), status));
    ww::ProbeBuffers buffers;
    buffers.totals = deviceTotals;
    buffers.samples = deviceSamples;
    buffers.sampleCapacity = 4096;
    const auto wall0 = std::chrono::steady_clock::now();
    const double process0 = processCpuNanos();
    for (long i = 0; i < launches; ++i) {
      const double t0 = threadCpuNanos();
      runtime->clearAsync(deviceTotals, sizeof(ww::LaunchTotals), stream);
      const double t1 = threadCpuNanos();
      runKernel(buffers);
      const double t2 = threadCpuNanos();
      runtime->copyToHostAsync(hostTotals, deviceTotals, sizeof(ww::LaunchTotals), stream);
      runtime->launchHostFunction(stream, [](void*) {}, nullptr);
      callerNanos += (t1 - t0) + (threadCpuNanos() - t2);
      runtime->synchronize(stream);
    }
    processNanos = processCpuNanos() - process0;
    wallNanos = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall0).count();
    recorded = static_cast<std::uint64_t>(launches);
    frameLaunches = recorded;
    runtime->freeDevice(deviceTotals);
    runtime->freeDevice(deviceSamples);
    runtime->freeHost(hostTotals);
  } else {
    ww::RecorderOptions options;
    options.sink = argc > 3 ? argv[3] : "";
    options.queueCapacityFrames = 1 << 16;
    if (base == "sample-100") options.launchSampleEvery = 100;
    if (base == "aggregate-10ms") options.aggregateInterval = std::chrono::milliseconds(10);
    ww::RecorderDevice device;
    device.source = ww::Source::Cpu;
    device.info.name = "fake";
    device.info.clockHz = 1'000'000'000;
    ww::BasicRecorder recorder(options, runtime, device);
    const auto wall0 = std::chrono::steady_clock::now();
    const double process0 = processCpuNanos();
    for (long i = 0; i < launches; ++i) {
      const double t0 = threadCpuNanos();
      ww::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("bench", "kernel", 32, 64, true, 8, ww::Selection::Stride));
      const double t1 = threadCpuNanos();
      runKernel(ticket.buffers());
      const double t2 = threadCpuNanos();
      recorder.endLaunch(std::move(ticket));
      callerNanos += (t1 - t0) + (threadCpuNanos() - t2);
      runtime->synchronize(stream);
      // Until the encoder has handed the slot back, so that no launch is skipped for want of a slot
      // (aggregates: written every 10 ms, nothing to wait for).
      for (; base != "aggregate-10ms";) {
        const ww::RecorderStats stats = recorder.stats();
        if (stats.launchesRecorded + stats.launchesSampledOut + stats.launchesFailed >= static_cast<std::uint64_t>(i + 1)) break;
        std::this_thread::sleep_for(std::chrono::microseconds(5));
      }
    }
    encoderNanos = threadsCpuNanos("ww-encoder");  // before close: the threads exit there
    writerNanos = threadsCpuNanos("ww-writer");
    const ww::CloseResult closed = recorder.close(std::chrono::seconds(60));
    processNanos = processCpuNanos() - process0;
    wallNanos = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall0).count();
    const ww::RecorderStats stats = recorder.stats();
    recorded = stats.launchesRecorded;
    frameLaunches = stats.launchesRecorded - stats.launchesAggregated;
    if (!closed.complete || stats.launchesFailed != 0 || stats.launchesSkipped != 0) {
      std::fprintf(stderr, "%s: close incomplete or failures (%llu failed)\n", argv[0], static_cast<unsigned long long>(stats.launchesFailed));
      return 1;
    }
  }
  std::printf(
      "{\"mode\":\"%s\",\"launches\":%ld,\"recorded\":%llu,\"callerCpuNsPerLaunch\":%.1f,\"processCpuNsPerLaunch\":%.1f,"
      "\"processCpuNsPerRecordedLaunch\":%.1f,\"frameLaunches\":%llu,\"encoderCpuNsPerRecordedLaunch\":%.1f,\"writerCpuNsPerRecordedLaunch\":%.1f,"
      "\"wallNsPerLaunch\":%.1f,\"samplesPerRecordedLaunch\":%zu,\"clockPairNs\":%.1f}\n",
      mode.c_str(), launches, static_cast<unsigned long long>(recorded), callerNanos / static_cast<double>(launches) - clockPairNanos,
      processNanos / static_cast<double>(launches), recorded ? processNanos / static_cast<double>(recorded) : 0.0,
      static_cast<unsigned long long>(frameLaunches),
      recorded ? encoderNanos / static_cast<double>(recorded) : 0.0, recorded ? writerNanos / static_cast<double>(recorded) : 0.0,
      wallNanos / static_cast<double>(launches), prepared.samples.size(), clockPairNanos);
  return 0;
}
