// relax on the CPU lockstep backend: an iterative solver on a 2-D field whose convergence
// varies smoothly in space (relax-field.hpp). n neighbouring cells (row-major) form a lockstep
// group; the group iterates until its slowest cell has converged (or hits --max-iter).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu-backend.hpp"
#include "warpwatch/relax-field.hpp"

namespace warpwatch::cpu {
namespace {

constexpr std::uint32_t kDefaultCpuSide = 512;

template <unsigned N>
double runRelax(const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) {
  const RelaxField field = relaxFieldFor(options, kDefaultCpuSide);
  const std::vector<float> rates = relaxRates(field.grid, options.seed);
  const DeviceInfo device = cpuDeviceInfo();
  double checksum = 0;
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    LaunchInfo info = cpuLaunchInfo(options, device, "relax", N, launch, field.grid.groups);
    LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride, info.groupsPerBlock}, options.sampleCapacity);
    for (std::uint64_t g = 0; g < field.grid.groups; ++g) {
      alignas(64) std::uint32_t count[N];
      alignas(64) float u[N];
      const GroupMeasurement m = measureUndisturbed([&] {
        alignas(64) float rate[N], rhs[N], keep[N], step[N];
        alignas(64) std::uint32_t active[N], finished[N];
        for (unsigned lane = 0; lane < N; ++lane) {
          rate[lane] = rates[g * N + lane];
          rhs[lane] = relaxRightHandSide(rate[lane]);
          u[lane] = 0;
          count[lane] = 0;
          active[lane] = 1;
        }
        GroupMeasurement run;
        run.groupIndex = g;
        run.startClock = steadyNanos();
        std::uint32_t anyActive = 1;
        std::uint64_t now = run.startClock;
        while (anyActive) {
          // Every lane steps; converged lanes keep their value through an arithmetic select
          // (exact for finite values: 1*a + 0*b = a; u stays in [0, 0.3]).
          for (unsigned lane = 0; lane < N; ++lane) {
            keep[lane] = static_cast<float>(active[lane]);
            const float next = relaxStep(u[lane], rate[lane], rhs[lane]);
            step[lane] = std::fabs(next - u[lane]);
            u[lane] = keep[lane] * next + (1.0f - keep[lane]) * u[lane];
            count[lane] += active[lane];
          }
          anyActive = 0;
          for (unsigned lane = 0; lane < N; ++lane) {
            const std::uint32_t stillActive = active[lane] & static_cast<std::uint32_t>(step[lane] > field.tolerance) &
                                              static_cast<std::uint32_t>(count[lane] < field.maxIterations);
            finished[lane] = active[lane] & (stillActive ^ 1u);
            active[lane] = stillActive;
            anyActive |= stillActive;
          }
          now = steadyNanos();
          stampFinished<N>(run.laneFinishClocks, finished, now);
        }
        run.endClock = now;  // the last group-iteration's clock (see matpow-cpu.cpp)
        for (unsigned lane = 0; lane < N; ++lane) run.laneCounts[lane] = count[lane];
        return run;
      }, options.remeasure, report);
      accumulator.addGroup(m);
      checksum += u[0];
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
  return runGroupSizeWorkload(
      argc, argv, [](const WorkloadOptions&) { return "relax"; },
      [](auto n, const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) { return runRelax<decltype(n)::value>(options, recorder, report); });
}
