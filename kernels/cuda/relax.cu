// relax on CUDA: an iterative solver on a 2-D field whose convergence varies smoothly in space
// (relax-field.hpp). One thread per cell, cells in row-major order; n consecutive cells form a
// group. The field's contraction factors are computed on the host and copied to the device.
#include <chrono>
#include <cstdint>
#include <vector>

#include "cuda-workload.hpp"
#include "warpwatch/probe.cuh"
#include "warpwatch/relax-field.hpp"

namespace warpwatch::cuda {
namespace {

constexpr std::uint32_t kDefaultGpuSide = 2048;

template <unsigned N>
__global__ void __launch_bounds__(kThreadsPerBlock) relaxKernel(const float* __restrict__ rates, unsigned long long groups, float tolerance,
                                                                 unsigned maxIterations, ProbeBuffers probeBuffers, bool sync, float* __restrict__ solution) {
  GroupProbe<N> probe(probeBuffers, sync);
  if (!probe.active(groups)) return;
  const unsigned long long cell = probe.unitIndex();
  const float rate = rates[cell];
  const float rhs = __fmul_rn(0.3f, 1.0f - rate);
  float u = 0.0f;
  probe.begin();
  // Same steps as relaxCount() (relax-field.hpp), without fused multiply-adds so that the
  // counts equal the CPU program's: 1..maxIterations iterations.
  bool running = true;
  while (running) {
    const float cube = __fmul_rn(__fmul_rn(__fmul_rn(u, u), u), 1.0f / 3.0f);
    const float next = __fadd_rn(rhs, __fmul_rn(rate, __fsub_rn(u, cube)));
    const float step = fabsf(__fsub_rn(next, u));
    u = next;
    probe.iteration();
    running = step > tolerance && probe.count() < maxIterations;
  }
  probe.finish();
  probe.end();
  solution[cell] = u;
}

template <unsigned N>
double runRelax(const WorkloadOptions& options, Recorder& recorder, RunReport& report) {
  const RelaxField field = relaxFieldFor(options, kDefaultGpuSide);
  const std::vector<float> rates = relaxRates(field.grid, options.seed);
  float* deviceRates = nullptr;
  float* deviceSolution = nullptr;
  checkCuda(cudaMalloc(&deviceRates, rates.size() * sizeof(float)), "cudaMalloc(rates)");
  checkCuda(cudaMalloc(&deviceSolution, rates.size() * sizeof(float)), "cudaMalloc(solution)");
  checkCuda(cudaMemcpy(deviceRates, rates.data(), rates.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(rates)");
  cudaStream_t stream;
  checkCuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    const std::string kernel = options.kernel.empty() ? "relax" : options.kernel;
    LaunchInfo info = recorder.launchInfo(options.job, kernel, N, field.grid.groups, options.sync, options.samplingStride(), options.selection);
    info.groupsPerBlock = blockRunGroups<N>(options.selection);
    LaunchTicket ticket = recorder.beginLaunch(stream, info);
    relaxKernel<N><<<static_cast<unsigned>(blocksFor<N>(field.grid.groups)), kThreadsPerBlock, 0, stream>>>(
        deviceRates, field.grid.groups, field.tolerance, field.maxIterations, ticket.buffers(), options.sync, deviceSolution);
    completeLaunch(recorder, stream, std::move(ticket), "relaxKernel", report);
  }
  float first = 0;
  checkCuda(cudaMemcpy(&first, deviceSolution, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(solution)");
  cudaStreamDestroy(stream);
  cudaFree(deviceRates);
  cudaFree(deviceSolution);
  return first;
}

}  // namespace
}  // namespace warpwatch::cuda

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cuda;
  return runGroupSizeWorkload(
      argc, argv, [](const WorkloadOptions&) { return "relax"; },
      [](auto n, const WorkloadOptions& options, Recorder& recorder, RunReport& report) { return runRelax<decltype(n)::value>(options, recorder, report); });
}
