// escape on the CPU lockstep backend: an escape-time fractal (Mandelbrot) whose per-unit
// iteration counts come from the data, not from a chosen distribution. n pixels form a
// lockstep group; the group iterates until its last pixel escapes (or hits --max-iter).
// --sorted groups pixels by a low-resolution estimate of their work first.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu-backend.hpp"
#include "warpwatch/escape-geometry.hpp"

namespace warpwatch::cpu {
namespace {

constexpr std::uint32_t kDefaultCpuSide = 512;

template <unsigned N>
double runEscape(const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) {
  const EscapeImage image = escapeImageFor(options, kDefaultCpuSide);
  const std::vector<std::uint64_t> order = escapeUnitOrder(image, N, options.sorted);
  const DeviceInfo device = cpuDeviceInfo();
  double checksum = 0;
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    LaunchInfo info = cpuLaunchInfo(options, device, options.sorted ? "escape-sorted" : "escape", N, launch, image.groups);
    LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride, info.groupsPerBlock}, options.sampleCapacity);
    for (std::uint64_t g = 0; g < image.groups; ++g) {
      alignas(64) std::uint32_t count[N];
      const GroupMeasurement m = measureUndisturbed([&] {
        alignas(64) float cr[N], ci[N], zr[N], zi[N], keep[N];
        alignas(64) std::uint32_t active[N], finished[N];
        for (unsigned lane = 0; lane < N; ++lane) {
          const std::uint64_t unit = order[g * N + lane];
          cr[lane] = image.realOf(unit);
          ci[lane] = image.imagOf(unit);
          zr[lane] = zi[lane] = 0;
          count[lane] = 0;
          active[lane] = 1;
        }
        GroupMeasurement run;
        run.groupIndex = g;
        run.startClock = steadyNanos();
        std::uint32_t anyActive = 1;
        std::uint64_t now = run.startClock;
        while (anyActive) {
          // Every lane computes; inactive lanes keep their state through an arithmetic select
          // (exact: 1*a + 0*b = a for finite values; a frozen |z| stays below ~6, never inf).
          for (unsigned lane = 0; lane < N; ++lane) {
            keep[lane] = static_cast<float>(active[lane]);
            const float nr = zr[lane] * zr[lane] - zi[lane] * zi[lane] + cr[lane];
            const float ni = 2.0f * zr[lane] * zi[lane] + ci[lane];
            zr[lane] = keep[lane] * nr + (1.0f - keep[lane]) * zr[lane];
            zi[lane] = keep[lane] * ni + (1.0f - keep[lane]) * zi[lane];
            count[lane] += active[lane];
          }
          anyActive = 0;
          for (unsigned lane = 0; lane < N; ++lane) {
            const float radius2 = zr[lane] * zr[lane] + zi[lane] * zi[lane];
            const std::uint32_t stillActive = active[lane] & static_cast<std::uint32_t>(radius2 <= 4.0f) &
                                              static_cast<std::uint32_t>(count[lane] < image.maxIterations);
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
      checksum += count[0];
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
      argc, argv, [](const WorkloadOptions& options) { return options.sorted ? "escape-sorted" : "escape"; },
      [](auto n, const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) { return runEscape<decltype(n)::value>(options, recorder, report); });
}
