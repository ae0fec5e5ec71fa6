// SpMV, y = A·x with A in CSR, on the CPU lockstep backend: the twin of spmv.cu. One lane per
// row, 32 lanes per group run in lockstep (every lane executes every iteration up to the
// group's longest row, the shorter rows' results masked), exactly as a warp of the scalar CSR
// kernel does. Writes the same frames as the CUDA program (source cpu, clocks in ns).
//
//   spmv-cpu --out spmv.wwf [--size 65536] [--seed 1] [--sample-rate 0.015625] [--selection hash]
//   warpwatch analyze spmv.wwf
//
// These are CPU SIMD lanes, not GPU threads: the loss is lockstep loss on this CPU.
#include <chrono>
#include <cstdio>

#include "../common/example-args.hpp"
#include "cpu-backend.hpp"  // warpwatch::cpu: clocks, re-measurement, device info (target warpwatch::cpu)
#include "spmv-matrix.hpp"
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/launch-frames.hpp"
#include "warpwatch/sink.hpp"

namespace {

constexpr unsigned N = 32;  // lanes per group: one warp

int run(const example::Args& args) {
  using namespace warpwatch;
  cpu::selectGroupClock(args.clock);
  cpu::enableFlushToZero();
  const example::CsrMatrix a = example::makeSpmvMatrix(args.size, args.seed);
  const std::vector<float> x = example::makeSpmvVector(a.columns);
  std::vector<float> y(a.rows, 0.0f);

  LaunchRecorder recorder(openSink(args.out), 256);
  LaunchInfo info;
  info.job = args.job;
  info.kernel = "spmv-csr-scalar";
  info.source = Source::Cpu;
  info.groupSize = N;
  info.sync = true;
  info.device = cpu::cpuDeviceInfo();
  info.launchId = cpu::makeLaunchId(0);
  info.groupCount = a.rows / N;
  info.selection = args.selection;
  info.samplingStride = fitSamplingStride(info.selection, args.samplingStride(), info.groupCount, 4096);  // thin, do not truncate, when the 4096 slots would overflow
  info.startUnixNanos = unixNanosNow();
  LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride}, 4096);
  cpu::RunReport report;
  const auto started = std::chrono::steady_clock::now();

  for (std::uint64_t g = 0; g < info.groupCount; ++g) {
    alignas(64) float sum[N];
    const GroupMeasurement m = cpu::measureUndisturbed([&] {
      std::uint32_t begin[N], length[N], longest = 0;
      for (unsigned lane = 0; lane < N; ++lane) {
        const std::uint64_t row = g * N + lane;
        begin[lane] = a.rowStart[row];
        length[lane] = a.rowStart[row + 1] - a.rowStart[row];
        longest = length[lane] > longest ? length[lane] : longest;
        sum[lane] = 0.0f;
      }
      GroupMeasurement run;
      run.groupIndex = g;
      run.startClock = cpu::steadyNanos();
      for (unsigned lane = 0; lane < N; ++lane) run.laneFinishClocks[lane] = run.startClock;  // rows of length 0
      std::uint64_t now = run.startClock;
      for (std::uint32_t k = 0; k < longest; ++k) {
        // Every lane computes; a finished row reads its first element again and adds 0·value.
        for (unsigned lane = 0; lane < N; ++lane) {
          const std::uint32_t active = k < length[lane] ? 1u : 0u;
          const std::uint32_t at = begin[lane] + k * active;
          sum[lane] += static_cast<float>(active) * a.values[at] * x[a.columnIndex[at]];
        }
        now = cpu::steadyNanos();
        cpu::recordFinishes<N>(run.laneFinishClocks, length, k + 1, now);
      }
      run.endClock = now;
      for (unsigned lane = 0; lane < N; ++lane) run.laneCounts[lane] = length[lane];
      return run;
    }, 16, report);
    for (unsigned lane = 0; lane < N; ++lane) y[g * N + lane] = sum[lane];
    accumulator.addGroup(m);
  }
  cpu::finishLaunch(info, accumulator, recorder, report);
  recorder.close();
  double checksum = 0;
  for (float v : y) checksum += v;
  const WriterStats stats = recorder.stats();
  std::fprintf(stderr, "{\"example\":\"spmv\",\"backend\":\"cpu\",\"rows\":%llu,\"nonzeros\":%llu,\"groups\":%llu,\"lossCounts\":%.6f,\"lossMeasured\":%.6f,"
               "\"framesWritten\":%llu,\"framesDropped\":%llu,\"seconds\":%.3f,\"checksum\":%.6g}\n",
               static_cast<unsigned long long>(a.rows), static_cast<unsigned long long>(a.rowStart[a.rows]),
               static_cast<unsigned long long>(report.groups), report.sumCountsLoss / static_cast<double>(report.groups),
               report.sumMeasuredLoss / static_cast<double>(report.groups), static_cast<unsigned long long>(stats.written),
               static_cast<unsigned long long>(stats.droppedQueueFull + stats.droppedSink),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(example::parseArgs(argc - 1, argv + 1, 65536));
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}
