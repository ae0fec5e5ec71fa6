// SpMV, y = A·x with A in CSR, on CUDA: the scalar CSR kernel (one thread per row), instrumented
// with warpwatch. A warp's 32 rows have different lengths, so the warp runs as long as its
// longest row while the other lanes idle: the lockstep loss the probe measures. Same matrix as
// spmv-cpu.cpp (the CPU-backend twin).
//
//   spmv-cuda --out spmv.wwf [--size 1048576] [--seed 1] [--sample-rate 0.015625] [--selection hash]
//   warpwatch analyze spmv.wwf
#include <cstdio>
#include <vector>

#include "../common/cuda-check.hpp"
#include "../common/example-args.hpp"
#include "spmv-matrix.hpp"
#include "warpwatch/recorder.hpp"  // Recorder; includes probe.cuh and launch-shape.hpp

namespace {

constexpr unsigned N = 32;               // lanes per group: the warp
constexpr unsigned kThreadsPerBlock = 256;

__global__ void spmvCsrScalar(const std::uint32_t* __restrict__ rowStart, const std::uint32_t* __restrict__ columnIndex, const float* __restrict__ values,
                              const float* __restrict__ x, float* __restrict__ y, unsigned long long groups, warpwatch::ProbeBuffers probeBuffers) {
  warpwatch::GroupProbe<N> probe(probeBuffers, /*sync*/ true);
  if (!probe.active(groups)) return;                 // whole groups past the last row
  const unsigned long long row = probe.unitIndex();  // rows = groups · 32 (the example pads to a multiple of 32)
  const std::uint32_t end = rowStart[row + 1];
  float sum = 0.0f;
  probe.begin();
  for (std::uint32_t k = rowStart[row]; k < end; ++k) {
    sum += values[k] * x[columnIndex[k]];
    probe.iteration();
  }
  probe.finish();
  probe.end();
  y[row] = sum;
}

int run(const example::Args& args) {
  using example::cudaCheck;
  const example::CsrMatrix a = example::makeSpmvMatrix(args.size, args.seed);
  const std::vector<float> x = example::makeSpmvVector(a.columns);
  std::uint32_t* rowStart = example::toDevice(a.rowStart);
  std::uint32_t* columnIndex = example::toDevice(a.columnIndex);
  float* values = example::toDevice(a.values);
  float* dx = example::toDevice(x);
  float* dy = nullptr;
  cudaCheck(cudaMalloc(&dy, sizeof(float) * a.rows), "cudaMalloc(y)");
  cudaStream_t stream;
  cudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");

  const unsigned long long groups = a.rows / N;
  const unsigned long long blocks = warpwatch::probeBlocksFor(groups, kThreadsPerBlock, N);
  warpwatch::checkProbeLaunchShape(dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock));

  warpwatch::Recorder recorder({args.out});
  warpwatch::LaunchInfo info = recorder.launchInfo(args.job, "spmv-csr-scalar", N, groups, /*sync*/ true, args.samplingStride(), args.selection);
  warpwatch::LaunchTicket ticket = recorder.beginLaunch(stream, info);
  spmvCsrScalar<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(rowStart, columnIndex, values, dx, dy, groups, ticket.buffers());
  cudaCheck(cudaGetLastError(), "spmvCsrScalar launch");
  recorder.endLaunch(std::move(ticket));

  std::vector<float> y(a.rows);
  cudaCheck(cudaMemcpyAsync(y.data(), dy, sizeof(float) * a.rows, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(y)");
  cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  recorder.close();
  double checksum = 0;
  for (float v : y) checksum += v;
  const warpwatch::RecorderStats stats = recorder.stats();
  std::fprintf(stderr, "{\"example\":\"spmv\",\"backend\":\"cuda\",\"rows\":%llu,\"nonzeros\":%llu,\"groups\":%llu,\"launchesRecorded\":%llu,\"framesWritten\":%llu,\"checksum\":%.6g}\n",
               static_cast<unsigned long long>(a.rows), static_cast<unsigned long long>(a.rowStart[a.rows]), groups,
               static_cast<unsigned long long>(stats.launchesRecorded), static_cast<unsigned long long>(stats.writer.written), checksum);
  for (void* p : {static_cast<void*>(rowStart), static_cast<void*>(columnIndex), static_cast<void*>(values), static_cast<void*>(dx), static_cast<void*>(dy)}) cudaFree(p);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(example::parseArgs(argc - 1, argv + 1, 1 << 20));
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}
