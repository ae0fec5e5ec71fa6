// escape on CUDA: an escape-time fractal (Mandelbrot) whose per-unit iteration counts come from
// the data. Units are pixels in the order of escapeUnitOrder (row-major, or sorted by a
// low-resolution work estimate with --sorted); n consecutive units form a group.
#include <chrono>
#include <cstdint>
#include <vector>

#include "cuda-workload.hpp"
#include "warpwatch/escape-geometry.hpp"
#include "warpwatch/probe.cuh"

namespace warpwatch::cuda {
namespace {

constexpr std::uint32_t kDefaultGpuSide = 2048;

template <unsigned N>
__global__ void __launch_bounds__(kThreadsPerBlock) escapeKernel(const unsigned* __restrict__ order, EscapeImage image, ProbeBuffers probeBuffers,
                                                                  bool sync, unsigned* __restrict__ counts) {
  GroupProbe<N> probe(probeBuffers, sync);
  if (!probe.active(image.groups)) return;
  const unsigned pixel = order[probe.unitIndex()];
  const float cr = image.xMin + (static_cast<float>(pixel % image.width) + 0.5f) * image.xSpan / static_cast<float>(image.width);
  const float ci = image.yMin + (static_cast<float>(pixel / image.width) + 0.5f) * image.ySpan / static_cast<float>(image.height);
  float zr = 0.0f, zi = 0.0f;
  probe.begin();
  // Same recurrence as escapeCount() (escape-geometry.hpp): 1..maxIterations iterations.
  bool running = true;
  while (running) {
    const float nr = zr * zr - zi * zi + cr;
    zi = 2.0f * zr * zi + ci;
    zr = nr;
    probe.iteration();
    running = zr * zr + zi * zi <= 4.0f && probe.count() < image.maxIterations;
  }
  probe.finish();
  probe.end();
  counts[pixel] = probe.count();
}

template <unsigned N>
double runEscape(const WorkloadOptions& options, Recorder& recorder, RunReport& report) {
  const EscapeImage image = escapeImageFor(options, kDefaultGpuSide);
  const std::vector<std::uint64_t> order64 = escapeUnitOrder(image, N, options.sorted);
  const std::vector<unsigned> order(order64.begin(), order64.end());
  const std::size_t pixels = static_cast<std::size_t>(image.width) * image.height;
  unsigned* deviceOrder = nullptr;
  unsigned* deviceCounts = nullptr;
  checkCuda(cudaMalloc(&deviceOrder, order.size() * sizeof(unsigned)), "cudaMalloc(order)");
  checkCuda(cudaMalloc(&deviceCounts, pixels * sizeof(unsigned)), "cudaMalloc(counts)");
  checkCuda(cudaMemcpy(deviceOrder, order.data(), order.size() * sizeof(unsigned), cudaMemcpyHostToDevice), "cudaMemcpy(order)");
  cudaStream_t stream;
  checkCuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (std::uint64_t launch = 0; launch < options.launches; ++launch) {
    const std::string kernel = options.kernel.empty() ? (options.sorted ? "escape-sorted" : "escape") : options.kernel;
    LaunchInfo info = recorder.launchInfo(options.job, kernel, N, image.groups, options.sync, options.samplingStride(), options.selection);
    info.groupsPerBlock = blockRunGroups<N>(options.selection);
    LaunchTicket ticket = recorder.beginLaunch(stream, info);
    escapeKernel<N><<<static_cast<unsigned>(blocksFor<N>(image.groups)), kThreadsPerBlock, 0, stream>>>(deviceOrder, image, ticket.buffers(), options.sync, deviceCounts);
    completeLaunch(recorder, stream, std::move(ticket), "escapeKernel", report);
  }
  unsigned first = 0;
  checkCuda(cudaMemcpy(&first, deviceCounts, sizeof(unsigned), cudaMemcpyDeviceToHost), "cudaMemcpy(counts)");
  cudaStreamDestroy(stream);
  cudaFree(deviceOrder);
  cudaFree(deviceCounts);
  return first;
}

}  // namespace
}  // namespace warpwatch::cuda

int main(int argc, char** argv) {
  using namespace warpwatch;
  using namespace warpwatch::cuda;
  return runGroupSizeWorkload(
      argc, argv, [](const WorkloadOptions& options) { return options.sorted ? "escape-sorted" : "escape"; },
      [](auto n, const WorkloadOptions& options, Recorder& recorder, RunReport& report) { return runEscape<decltype(n)::value>(options, recorder, report); });
}
