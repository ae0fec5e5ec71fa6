// matpow on the CPU lockstep backend: every unit raises its own 16x16 float matrix to a power
// equal to its iteration count (drawn from --dist); n units form a lockstep group (lanes of a
// vector), so the group runs max(w) matrix products on every lane. The CPU twin of
// kernels/cuda/matpow.cu (model.md §3 validation benchmark); clocks are steady-clock ns.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cpu-backend.hpp"
#include "warpwatch/distributions.hpp"

namespace warpwatch::cpu {
namespace {

constexpr int kDim = 16;
constexpr std::uint64_t kDefaultCpuGroups = 1024;

/// One lockstep group: matrices stored lane-innermost ([row][col][lane]) so the lane loop is
/// contiguous and vectorises.
template <unsigned N>
struct MatpowGroup {
  alignas(64) float base[kDim][kDim][N];
  alignas(64) float power[kDim][kDim][N];
  alignas(64) float product[kDim][kDim][N];

  /// Row-stochastic random matrices (rows sum to 1): powers stay bounded and never denormal.
  void initialise(Rng& rng) {
    for (unsigned lane = 0; lane < N; ++lane) {
      for (int i = 0; i < kDim; ++i) {
        float row = 0;
        for (int j = 0; j < kDim; ++j) row += base[i][j][lane] = static_cast<float>(0.05 + rng.uniform());
        for (int j = 0; j < kDim; ++j) {
          base[i][j][lane] /= row;
          power[i][j][lane] = i == j ? 1.0f : 0.0f;
        }
      }
    }
  }

  /// One group-iteration: power <- power x base on EVERY lane, then keep the result only on
  /// active lanes (keep = 1.0f) with an arithmetic select, which is exact for finite values
  /// (1*p + 0*q = p) and vectorises; a branch per lane would make the cost depend on the mask.
  void step(const float (&keep)[N]) {
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < kDim; ++j) {
        float sum[N] = {};
        for (int k = 0; k < kDim; ++k) {
          for (unsigned lane = 0; lane < N; ++lane) sum[lane] += power[i][k][lane] * base[k][j][lane];
        }
        for (unsigned lane = 0; lane < N; ++lane) product[i][j][lane] = sum[lane];
      }
    }
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < kDim; ++j) {
        for (unsigned lane = 0; lane < N; ++lane) {
          power[i][j][lane] = keep[lane] * product[i][j][lane] + (1.0f - keep[lane]) * power[i][j][lane];
        }
      }
    }
  }
};

template <unsigned N>
double runMatpow(const WorkloadOptions& options, const CountDistribution& distribution, LaunchRecorder& recorder, RunReport& report) {
  const std::uint64_t groups = options.groups ? options.groups : kDefaultCpuGroups;
  const DeviceInfo device = cpuDeviceInfo();
  Rng rng(options.seed);
  auto group = std::make_unique<MatpowGroup<N>>();
  double checksum = 0;
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    LaunchInfo info = cpuLaunchInfo(options, device, "matpow", N, launch, groups);
    LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride, info.groupsPerBlock}, options.sampleCapacity);
    for (std::uint64_t g = 0; g < groups; ++g) {
      std::uint32_t counts[N];
      std::uint32_t deepest = 0;
      for (unsigned lane = 0; lane < N; ++lane) {
        counts[lane] = distribution.sample(rng);
        deepest = std::max(deepest, counts[lane]);
      }
      const std::uint64_t matrixSeed = rng.next();  // every re-measurement starts from the same matrices
      const GroupMeasurement m = measureUndisturbed([&] {
        Rng matrixRng(matrixSeed);
        group->initialise(matrixRng);
        GroupMeasurement run;
        run.groupIndex = g;
        for (unsigned lane = 0; lane < N; ++lane) run.laneCounts[lane] = counts[lane];
        alignas(16) float keep[N];
        run.startClock = steadyNanos();
        for (unsigned lane = 0; lane < N; ++lane) run.laneFinishClocks[lane] = run.startClock;  // w = 0 lanes finish at c0
        std::uint64_t now = run.startClock;
        for (std::uint32_t t = 0; t < deepest; ++t) {
          for (unsigned lane = 0; lane < N; ++lane) keep[lane] = t < counts[lane] ? 1.0f : 0.0f;
          group->step(keep);
          now = steadyNanos();
          recordFinishes<N>(run.laneFinishClocks, counts, t + 1, now);  // right after each lane's last iteration
        }
        // A lockstep group ends when its last group-iteration ends: the deepest lane's finish clock.
        // (A separate clock read here would add its own cost to C_SIMT only, biasing short groups.)
        run.endClock = now;
        return run;
      }, options.remeasure, report);
      accumulator.addGroup(m);
      checksum += group->power[0][0][0];
    }
    finishLaunch(info, accumulator, recorder, report);
  }
  return checksum;
}

}  // namespace
}  // namespace warpwatch::cpu

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cpu;
  return runMain(argc, argv, [](const WorkloadOptions& options) {
    const CountDistribution distribution = CountDistribution::parse(options.dist);
    LaunchRecorder recorder(openSink(options.sink), options.queueCapacity);
    RunReport report;
    double checksum = 0;
    const auto started = std::chrono::steady_clock::now();
    dispatchGroupSize(options.groupSize, [&](auto n) { checksum = runMatpow<decltype(n)::value>(options, distribution, recorder, report); });
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print("matpow", options, recorder.stats(), checksum);
    return 0;
  });
}
