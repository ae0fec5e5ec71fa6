// banded on the CPU lockstep backend: y = A·x in CSR with one lane per row, on a matrix whose
// row lengths are banded (banded-matrix.hpp: the bandwidth varies slowly along the rows, plus
// noise). n consecutive rows form a lockstep group; the group runs as many entry-iterations as
// its longest row, every lane reading an entry each time (a finished lane re-reads its last
// one and discards the product), so a group-iteration costs the same whatever the mask.
// --sorted groups rows in order of their length first (bandedUnitOrder).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cpu-backend.hpp"
#include "warpwatch/banded-matrix.hpp"

namespace warpwatch::cpu {
namespace {

constexpr std::uint64_t kDefaultCpuRows = 262144;

template <unsigned N>
double runBanded(const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) {
  const BandedMatrix matrix = makeBandedMatrix(bandedRowsFor(options, kDefaultCpuRows), N, options.seed);
  const std::vector<float> x = bandedVector(matrix.rows);
  const std::vector<std::uint64_t> order = bandedUnitOrder(matrix, N, options.sorted);
  const DeviceInfo device = cpuDeviceInfo();
  double checksum = 0;
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    LaunchInfo info = cpuLaunchInfo(options, device, options.sorted ? "banded-sorted" : "banded", N, launch, matrix.groups);
    LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride, info.groupsPerBlock}, options.sampleCapacity);
    for (std::uint64_t g = 0; g < matrix.groups; ++g) {
      alignas(64) std::uint32_t first[N], length[N];
      alignas(64) float sum[N];
      std::uint32_t deepest = 0;
      for (unsigned lane = 0; lane < N; ++lane) {
        const std::uint64_t row = order[g * N + lane];
        first[lane] = matrix.rowStart[row];
        length[lane] = matrix.rowLength(row);
        deepest = std::max(deepest, length[lane]);
      }
      const GroupMeasurement m = measureUndisturbed([&] {
        alignas(64) std::uint32_t count[N];
        for (unsigned lane = 0; lane < N; ++lane) {
          sum[lane] = 0;
          count[lane] = 0;
        }
        GroupMeasurement run;
        run.groupIndex = g;
        run.startClock = steadyNanos();
        for (unsigned lane = 0; lane < N; ++lane) run.laneFinishClocks[lane] = run.startClock;  // w = 0 lanes finish at c0
        std::uint64_t now = run.startClock;
        for (std::uint32_t t = 0; t < deepest; ++t) {
          for (unsigned lane = 0; lane < N; ++lane) {
            const std::uint32_t active = static_cast<std::uint32_t>(t < length[lane]);
            const float keep = static_cast<float>(active);
            const std::uint32_t entry = first[lane] + std::min(t, length[lane] - 1);  // rows have ≥ 1 entry
            sum[lane] += keep * (matrix.values[entry] * x[matrix.columnIndex[entry]]);
            count[lane] += active;
          }
          now = steadyNanos();
          recordFinishes<N>(run.laneFinishClocks, length, t + 1, now);  // right after each lane's last entry
        }
        run.endClock = now;  // the last group-iteration's clock (see matpow-cpu.cpp)
        for (unsigned lane = 0; lane < N; ++lane) run.laneCounts[lane] = count[lane];
        return run;
      }, options.remeasure, report);
      accumulator.addGroup(m);
      checksum += sum[0];
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
      argc, argv, [](const WorkloadOptions& options) { return options.sorted ? "banded-sorted" : "banded"; },
      [](auto n, const WorkloadOptions& options, LaunchRecorder& recorder, RunReport& report) { return runBanded<decltype(n)::value>(options, recorder, report); });
}
