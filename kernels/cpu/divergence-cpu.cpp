// divergence on the CPU lockstep backend: one 32-lane group runs the patterns of
// divergence-patterns.hpp. A vectorised CPU loop has no divergence stack, so its cost should
// follow max(w) alone; the CPU numbers are a control for the GPU ones, not a GPU measurement.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "cpu-backend.hpp"
#include "warpwatch/divergence-patterns.hpp"

namespace warpwatch::cpu {
namespace {

constexpr unsigned N = kDivergenceLanes;

/// The loop body: 16 dependent multiply-adds per lane, on every lane, kept only where active
/// (arithmetic select, vectorised; see matpow-cpu.cpp).
inline void body(float (&x)[N], const float (&keep)[N]) {
  for (unsigned lane = 0; lane < N; ++lane) {
    float v = x[lane];
    for (int r = 0; r < 16; ++r) v = v * 0.999f + 0.001f;
    x[lane] = keep[lane] * v + (1.0f - keep[lane]) * x[lane];
  }
}

/// Runs one repetition of a pattern and returns its measurement (counts, clocks).
GroupMeasurement runPattern(bool nested, unsigned k, std::uint64_t groupIndex, float (&x)[N]) {
  GroupMeasurement m;
  m.groupIndex = groupIndex;
  std::uint32_t bound[N];
  for (unsigned lane = 0; lane < N; ++lane) {
    bound[lane] = divergenceBound(k, lane);
    m.laneCounts[lane] = nested ? bound[lane] * bound[lane] : bound[lane];
  }
  const std::uint32_t deepest = 32;
  alignas(16) float keep[N];
  m.startClock = steadyNanos();
  std::uint64_t now = m.startClock;
  for (std::uint32_t i = 0; i < deepest; ++i) {
    if (nested) {
      for (std::uint32_t j = 0; j < deepest; ++j) {
        for (unsigned lane = 0; lane < N; ++lane) keep[lane] = i < bound[lane] && j < bound[lane] ? 1.0f : 0.0f;
        body(x, keep);
      }
    } else {
      for (unsigned lane = 0; lane < N; ++lane) keep[lane] = i < bound[lane] ? 1.0f : 0.0f;
      body(x, keep);
    }
    now = steadyNanos();
    recordFinishes<N>(m.laneFinishClocks, bound, i + 1, now);
  }
  m.endClock = now;  // the last group-iteration's clock (see matpow-cpu.cpp)
  return m;
}

}  // namespace
}  // namespace warpwatch::cpu

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cpu;
  return runMain(argc, argv, [](WorkloadOptions options) {
    if (options.groupSize != 32) throw std::invalid_argument("--n must be 32 for divergence (one warp), got " + std::to_string(options.groupSize));
    LaunchRecorder recorder(openSink(options.sink), options.queueCapacity);
    std::ofstream csv;
    if (!options.csv.empty()) {
      csv.open(options.csv);
      if (!csv) throw std::runtime_error("cannot open CSV file '" + options.csv + "'");
      csv << divergenceCsvHeader() << '\n';
    }
    const DeviceInfo device = cpuDeviceInfo();
    RunReport report;
    float x[N];
    for (unsigned lane = 0; lane < N; ++lane) x[lane] = static_cast<float>(lane);
    const auto started = std::chrono::steady_clock::now();
    std::uint64_t launchIndex = 0;
    for (bool nested : {false, true}) {
      for (unsigned k = 0; k < 32; ++k) {
        LaunchInfo info = cpuLaunchInfo(options, device, "divergence", N, launchIndex++, options.repetitions);
        info.kernel += nested ? "-nested" : "-single";
        LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride, info.groupsPerBlock}, options.sampleCapacity);
        for (unsigned repetition = 0; repetition < options.repetitions; ++repetition) {
          const GroupMeasurement m = measureUndisturbed([&] { return runPattern(nested, k, repetition, x); }, options.remeasure, report);
          accumulator.addGroup(m);
          if (csv) csv << divergenceCsvRow(nested, k, m.endClock - m.startClock, device.clockHz, "cpu", repetition) << '\n';
        }
        finishLaunch(info, accumulator, recorder, report);
      }
    }
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print("divergence", options, recorder.stats(), x[0]);
    return 0;
  });
}
