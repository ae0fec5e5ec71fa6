// matpow on CUDA: the published validation benchmark (model.md §3). Every unit (thread) raises a
// 16x16 float matrix to a power equal to its iteration count drawn from --dist; 2^18 groups by
// default, 256 threads per block. The base matrix (row-stochastic, so powers stay bounded) is
// shared by a block in shared memory; each thread's running power lives in its registers/local
// memory. The probe (probe.cuh) measures counts and clocks per group of n lanes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cuda-workload.hpp"
#include "warpwatch/distributions.hpp"
#include "warpwatch/probe.cuh"

namespace warpwatch::cuda {
namespace {

constexpr int kDim = 16;
constexpr std::uint64_t kDefaultGpuGroups = 1ull << 18;

template <unsigned N, template <unsigned> class Probe>
__global__ void __launch_bounds__(kThreadsPerBlock) matpowKernel(const unsigned* __restrict__ exponents, const float* __restrict__ baseMatrix,
                                                                  std::uint64_t groupCount, ProbeBuffers probeBuffers, bool sync,
                                                                  float* __restrict__ checksum) {
  __shared__ float base[kDim][kDim];
  for (unsigned i = threadIdx.x; i < kDim * kDim; i += blockDim.x) base[i / kDim][i % kDim] = baseMatrix[i];
  __syncthreads();

  Probe<N> probe(probeBuffers, sync);
  if (!probe.active(groupCount)) return;
  const unsigned exponent = exponents[probe.unitIndex()];
  float power[kDim][kDim];
  for (int i = 0; i < kDim; ++i)
    for (int j = 0; j < kDim; ++j) power[i][j] = i == j ? 1.0f : 0.0f;

  probe.begin();
  for (unsigned k = 0; k < exponent; ++k) {
    for (int i = 0; i < kDim; ++i) {
      float row[kDim];
      for (int j = 0; j < kDim; ++j) {
        float sum = 0.0f;
        for (int m = 0; m < kDim; ++m) sum = fmaf(power[i][m], base[m][j], sum);
        row[j] = sum;
      }
      for (int j = 0; j < kDim; ++j) power[i][j] = row[j];
    }
    probe.iteration();
  }
  probe.finish();
  probe.end();
  if (probe.unitIndex() == 0) *checksum = power[0][0];
}

template <unsigned N>
double runMatpow(const WorkloadOptions& options, const CountDistribution& distribution, Recorder& recorder, RunReport& report) {
  const std::uint64_t groups = options.groups ? options.groups : kDefaultGpuGroups;
  const std::uint64_t units = groups * N;
  Rng rng(options.seed);
  std::vector<unsigned> exponents(units);
  std::vector<float> baseMatrix(kDim * kDim);
  for (int i = 0; i < kDim; ++i) {
    float row = 0;
    for (int j = 0; j < kDim; ++j) row += baseMatrix[i * kDim + j] = static_cast<float>(0.05 + rng.uniform());
    for (int j = 0; j < kDim; ++j) baseMatrix[i * kDim + j] /= row;
  }
  unsigned* deviceExponents = nullptr;
  float* deviceBase = nullptr;
  float* deviceChecksum = nullptr;
  checkCuda(cudaMalloc(&deviceExponents, units * sizeof(unsigned)), "cudaMalloc(exponents)");
  checkCuda(cudaMalloc(&deviceBase, baseMatrix.size() * sizeof(float)), "cudaMalloc(base)");
  checkCuda(cudaMalloc(&deviceChecksum, sizeof(float)), "cudaMalloc(checksum)");
  checkCuda(cudaMemcpy(deviceBase, baseMatrix.data(), baseMatrix.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(base)");
  cudaStream_t stream;
  checkCuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t kernelStart, kernelStop;
  checkCuda(cudaEventCreate(&kernelStart), "cudaEventCreate");
  checkCuda(cudaEventCreate(&kernelStop), "cudaEventCreate");
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    for (auto& e : exponents) e = distribution.sample(rng);
    checkCuda(cudaMemcpyAsync(deviceExponents, exponents.data(), units * sizeof(unsigned), cudaMemcpyHostToDevice, stream), "cudaMemcpy(exponents)");
    const unsigned blocks = static_cast<unsigned>(blocksFor<N>(groups));
    if (options.probe) {
      LaunchInfo info = recorder.launchInfo(options.job, options.kernel.empty() ? "matpow" : options.kernel, N, groups, options.sync,
                                                  options.samplingStride(), options.selection);
      info.groupsPerBlock = blockRunGroups<N>(options.selection);
      LaunchTicket ticket = recorder.beginLaunch(stream, info);
      checkCuda(cudaEventRecord(kernelStart, stream), "cudaEventRecord");
      matpowKernel<N, GroupProbe><<<blocks, kThreadsPerBlock, 0, stream>>>(deviceExponents, deviceBase, groups, ticket.buffers(), options.sync, deviceChecksum);
      checkCuda(cudaEventRecord(kernelStop, stream), "cudaEventRecord");
      completeLaunch(recorder, stream, std::move(ticket), "matpowKernel", report);
    } else {
      // Overhead baseline: the same kernel and inputs, the probe compiled out; no frames.
      checkCuda(cudaEventRecord(kernelStart, stream), "cudaEventRecord");
      matpowKernel<N, NullGroupProbe><<<blocks, kThreadsPerBlock, 0, stream>>>(deviceExponents, deviceBase, groups, ProbeBuffers{}, options.sync, deviceChecksum);
      checkCuda(cudaEventRecord(kernelStop, stream), "cudaEventRecord");
      const cudaError_t launched = cudaGetLastError();
      if (launched != cudaSuccess) checkCuda(launched, "matpowKernel (probe off) launch");
      checkCuda(cudaStreamSynchronize(stream), "matpowKernel (probe off)");
      report.launches += 1;
    }
    checkCuda(cudaEventSynchronize(kernelStop), "cudaEventSynchronize");
    float millis = 0;
    checkCuda(cudaEventElapsedTime(&millis, kernelStart, kernelStop), "cudaEventElapsedTime");
    report.kernelMillis += millis;
  }
  cudaEventDestroy(kernelStart);
  cudaEventDestroy(kernelStop);
  float checksum = 0;
  checkCuda(cudaMemcpy(&checksum, deviceChecksum, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(checksum)");
  cudaStreamDestroy(stream);
  cudaFree(deviceExponents);
  cudaFree(deviceBase);
  cudaFree(deviceChecksum);
  return checksum;
}

}  // namespace
}  // namespace warpwatch::cuda

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cuda;
  return runMain(argc, argv, [](const WorkloadOptions& options) {
    const CountDistribution distribution = CountDistribution::parse(options.dist);
    Recorder recorder(recorderOptions(options));
    RunReport report;
    double checksum = 0;
    const auto started = std::chrono::steady_clock::now();
    dispatchGroupSize(options.groupSize, [&](auto n) { checksum = runMatpow<decltype(n)::value>(options, distribution, recorder, report); });
    recorder.close();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!options.quiet) report.print("matpow", options.groupSize, recorder.stats(), checksum);
    return 0;
  }, /*probeOffSupported=*/true);
}
