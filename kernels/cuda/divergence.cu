// divergence on CUDA: the micro-benchmark of model.md §4 (Bialas & Strzelecki). One warp runs
// the lane-bound patterns of divergence-patterns.hpp (k = 0..31, single and nested loops),
// --repetitions times each; lane 0 records the clock64() cycles of the whole loop (between two
// __syncwarp()), written as CSV (--csv) and as frames (one launch per pattern, one group per
// repetition, kernels divergence-single / divergence-nested).
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "cuda-workload.hpp"
#include "warpwatch/divergence-patterns.hpp"
#include "warpwatch/probe.cuh"

namespace warpwatch::cuda {
namespace {

__global__ void divergenceKernel(const unsigned* __restrict__ bounds, bool nested, unsigned repetitions, ProbeBuffers probeBuffers, bool sync,
                                 unsigned long long* __restrict__ cycles, float* __restrict__ sink) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned bound = bounds[lane];  // from memory: the compiler cannot specialise the loops
  float x = static_cast<float>(lane);
  for (unsigned r = 0; r < repetitions; ++r) {
    // One group per repetition: the probe's group index is the repetition.
    GroupProbe<32> probe(probeBuffers, sync, r);
    __syncwarp();
    probe.begin();
    const unsigned long long t0 = clock64();
    if (nested) {
      for (unsigned i = 0; i < bound; ++i) {
        for (unsigned j = 0; j < bound; ++j) {
          x = fmaf(x, 0.999f, 0.001f);
          probe.iteration();
        }
      }
    } else {
      for (unsigned i = 0; i < bound; ++i) {
        x = fmaf(x, 0.999f, 0.001f);
        probe.iteration();
      }
    }
    probe.finish();
    __syncwarp();
    const unsigned long long t1 = clock64();
    probe.end();
    if (lane == 0) cycles[r] = t1 - t0;
  }
  sink[lane] = x;
}

}  // namespace
}  // namespace warpwatch::cuda

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cuda;
  return runMain(argc, argv, [](WorkloadOptions options) {
    if (options.groupSize != 32) throw std::invalid_argument("--n must be 32 for divergence (one warp), got " + std::to_string(options.groupSize));
    Recorder recorder(recorderOptions(options));
    std::ofstream csv;
    if (!options.csv.empty()) {
      csv.open(options.csv);
      if (!csv) throw std::runtime_error("cannot open CSV file '" + options.csv + "'");
      csv << divergenceCsvHeader() << '\n';
    }
    unsigned* deviceBounds = nullptr;
    unsigned long long* deviceCycles = nullptr;
    float* deviceSink = nullptr;
    checkCuda(cudaMalloc(&deviceBounds, 32 * sizeof(unsigned)), "cudaMalloc(bounds)");
    checkCuda(cudaMalloc(&deviceCycles, options.repetitions * sizeof(unsigned long long)), "cudaMalloc(cycles)");
    checkCuda(cudaMalloc(&deviceSink, 32 * sizeof(float)), "cudaMalloc(sink)");
    std::vector<unsigned long long> cycles(options.repetitions);
    RunReport report;
    const auto started = std::chrono::steady_clock::now();
    for (bool nested : {false, true}) {
      for (unsigned k = 0; k < 32; ++k) {
        unsigned bounds[32];
        for (unsigned lane = 0; lane < 32; ++lane) bounds[lane] = divergenceBound(k, lane);
        checkCuda(cudaMemcpy(deviceBounds, bounds, sizeof(bounds), cudaMemcpyHostToDevice), "cudaMemcpy(bounds)");
        const std::string kernel = (options.kernel.empty() ? std::string("divergence") : options.kernel) + (nested ? "-nested" : "-single");
        // The one warp runs one group per repetition: the launch has `repetitions` groups.
        LaunchInfo info = recorder.launchInfo(options.job, kernel, 32, options.repetitions, options.sync, options.samplingStride(), options.selection);
        info.groupsPerBlock = options.selection == Selection::Block ? 1 : 0;  // one warp per launch: a block of one group
        LaunchTicket ticket = recorder.beginLaunch(nullptr, info);
        divergenceKernel<<<1, 32>>>(deviceBounds, nested, options.repetitions, ticket.buffers(), options.sync, deviceCycles, deviceSink);
        completeLaunch(recorder, nullptr, std::move(ticket), "divergenceKernel", report);
        checkCuda(cudaMemcpy(cycles.data(), deviceCycles, cycles.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "cudaMemcpy(cycles)");
        for (unsigned r = 0; r < options.repetitions; ++r) {
          if (csv) csv << divergenceCsvRow(nested, k, cycles[r], recorder.device().clockHz, "cuda", r) << '\n';
        }
      }
    }
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print("divergence", 32, recorder.stats(), 0.0);
    cudaFree(deviceBounds);
    cudaFree(deviceCycles);
    cudaFree(deviceSink);
    return 0;
  });
}
