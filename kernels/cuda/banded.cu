// banded on CUDA: y = A·x with the scalar CSR kernel (thread r sums row r) on a matrix whose
// row lengths are banded (banded-matrix.hpp: the bandwidth varies slowly along the rows, plus
// noise). n consecutive units form a group, a unit being a row in the order of bandedUnitOrder
// (row order, or by length with --sorted); the matrix is built on the host from the seed.
#include <chrono>
#include <cstdint>
#include <vector>

#include "cuda-workload.hpp"
#include "warpwatch/banded-matrix.hpp"
#include "warpwatch/probe.cuh"

namespace warpwatch::cuda {
namespace {

constexpr std::uint64_t kDefaultGpuRows = std::uint64_t{1} << 21;

template <unsigned N>
__global__ void __launch_bounds__(kThreadsPerBlock) bandedKernel(const unsigned* __restrict__ order, const unsigned* __restrict__ rowStart, const unsigned* __restrict__ columnIndex,
                                                                  const float* __restrict__ values, const float* __restrict__ x,
                                                                  unsigned long long groups, ProbeBuffers probeBuffers, bool sync, float* __restrict__ y) {
  GroupProbe<N> probe(probeBuffers, sync);
  if (!probe.active(groups)) return;
  const unsigned row = order[probe.unitIndex()];
  const unsigned begin = rowStart[row];
  const unsigned end = rowStart[row + 1];
  float sum = 0.0f;
  probe.begin();
  for (unsigned entry = begin; entry < end; ++entry) {
    sum += values[entry] * x[columnIndex[entry]];
    probe.iteration();
  }
  probe.finish();
  probe.end();
  y[row] = sum;
}

template <typename T>
T* copyToDevice(const std::vector<T>& host, const char* what) {
  T* device = nullptr;
  checkCuda(cudaMalloc(&device, host.size() * sizeof(T)), what);
  checkCuda(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), what);
  return device;
}

template <unsigned N>
double runBanded(const WorkloadOptions& options, Recorder& recorder, RunReport& report) {
  const BandedMatrix matrix = makeBandedMatrix(bandedRowsFor(options, kDefaultGpuRows), N, options.seed);
  const std::vector<std::uint64_t> order64 = bandedUnitOrder(matrix, N, options.sorted);
  unsigned* deviceOrder = copyToDevice(std::vector<unsigned>(order64.begin(), order64.end()), "cudaMemcpy(order)");
  unsigned* deviceRowStart = copyToDevice(matrix.rowStart, "cudaMemcpy(rowStart)");
  unsigned* deviceColumns = copyToDevice(matrix.columnIndex, "cudaMemcpy(columnIndex)");
  float* deviceValues = copyToDevice(matrix.values, "cudaMemcpy(values)");
  float* deviceX = copyToDevice(bandedVector(matrix.rows), "cudaMemcpy(x)");
  float* deviceY = nullptr;
  checkCuda(cudaMalloc(&deviceY, matrix.rows * sizeof(float)), "cudaMalloc(y)");
  cudaStream_t stream;
  checkCuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    const std::string kernel = options.kernel.empty() ? (options.sorted ? "banded-sorted" : "banded") : options.kernel;
    LaunchInfo info = recorder.launchInfo(options.job, kernel, N, matrix.groups, options.sync, options.samplingStride(), options.selection);
    info.groupsPerBlock = blockRunGroups<N>(options.selection);
    LaunchTicket ticket = recorder.beginLaunch(stream, info);
    bandedKernel<N><<<static_cast<unsigned>(blocksFor<N>(matrix.groups)), kThreadsPerBlock, 0, stream>>>(
        deviceOrder, deviceRowStart, deviceColumns, deviceValues, deviceX, matrix.groups, ticket.buffers(), options.sync, deviceY);
    completeLaunch(recorder, stream, std::move(ticket), "bandedKernel", report);
  }
  float first = 0;
  checkCuda(cudaMemcpy(&first, deviceY, sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy(y)");
  cudaStreamDestroy(stream);
  cudaFree(deviceOrder);
  cudaFree(deviceRowStart);
  cudaFree(deviceColumns);
  cudaFree(deviceValues);
  cudaFree(deviceX);
  cudaFree(deviceY);
  return first;
}

}  // namespace
}  // namespace warpwatch::cuda

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cuda;
  return runGroupSizeWorkload(
      argc, argv, [](const WorkloadOptions& options) { return options.sorted ? "banded-sorted" : "banded"; },
      [](auto n, const WorkloadOptions& options, Recorder& recorder, RunReport& report) { return runBanded<decltype(n)::value>(options, recorder, report); });
}
