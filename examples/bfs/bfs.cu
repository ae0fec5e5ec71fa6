// Level-synchronous BFS on CUDA, instrumented with warpwatch: one launch per level, thread i
// expands frontier vertex i over its out-edges (iterations = its out-degree), claiming unreached
// targets with atomicCAS. A warp waits for its highest-degree vertex (hubs): the lockstep loss
// the probe measures. Same graph as bfs-cpu.cpp (the CPU-backend twin).
//
//   bfs-cuda --out bfs.wwf [--size 4194304] [--seed 1] [--sample-rate 0.015625] [--selection hash]
//   warpwatch analyze bfs.wwf
#include <cstdio>
#include <vector>

#include "../common/cuda-check.hpp"
#include "../common/example-args.hpp"
#include "bfs-graph.hpp"
#include "warpwatch/recorder.hpp"

namespace {

constexpr unsigned N = 32;
constexpr unsigned kThreadsPerBlock = 256;

__global__ void bfsLevel(const std::uint32_t* __restrict__ edgeStart, const std::uint32_t* __restrict__ target, const std::uint32_t* __restrict__ frontier,
                         std::uint32_t frontierSize, int* level, int nextLevel, std::uint32_t* next, std::uint32_t* nextSize, unsigned long long groups,
                         warpwatch::ProbeBuffers probeBuffers) {
  warpwatch::GroupProbe<N> probe(probeBuffers, /*sync*/ true);
  if (!probe.active(groups)) return;
  const unsigned long long i = probe.unitIndex();
  // The last group's spare lanes (past the frontier) have no vertex: 0 iterations, but they
  // stay in the group and call begin/finish/end (the probe's group-wide shuffles need them).
  std::uint32_t begin = 0, degree = 0;
  if (i < frontierSize) {
    const std::uint32_t v = frontier[i];
    begin = edgeStart[v];
    degree = edgeStart[v + 1] - begin;
  }
  probe.begin();
  for (std::uint32_t k = 0; k < degree; ++k) {
    const std::uint32_t u = target[begin + k];
    if (atomicCAS(&level[u], -1, nextLevel) == -1) next[atomicAdd(nextSize, 1u)] = u;
    probe.iteration();
  }
  probe.finish();
  probe.end();
}

int run(const example::Args& args) {
  using example::cudaCheck;
  const example::Graph graph = example::makeBfsGraph(args.size, args.seed);
  std::uint32_t* edgeStart = example::toDevice(graph.edgeStart);
  std::uint32_t* target = example::toDevice(graph.target);
  std::vector<int> level(graph.vertices, example::kUnreached);
  level[0] = 0;
  int* dLevel = example::toDevice(level);
  std::uint32_t *frontier = nullptr, *next = nullptr, *nextSize = nullptr;
  cudaCheck(cudaMalloc(&frontier, sizeof(std::uint32_t) * graph.vertices), "cudaMalloc(frontier)");
  cudaCheck(cudaMalloc(&next, sizeof(std::uint32_t) * graph.vertices), "cudaMalloc(next)");
  cudaCheck(cudaMalloc(&nextSize, sizeof(std::uint32_t)), "cudaMalloc(nextSize)");
  cudaCheck(cudaMemset(frontier, 0, sizeof(std::uint32_t)), "cudaMemset(frontier)");  // frontier = {0}
  cudaStream_t stream;
  cudaCheck(cudaStreamCreate(&stream), "cudaStreamCreate");

  warpwatch::Recorder recorder({args.out});
  std::uint32_t frontierSize = 1;
  unsigned long long reached = 1, levels = 0;
  for (int depth = 0; frontierSize > 0; ++depth) {
    const unsigned long long groups = (frontierSize + N - 1) / N;
    const unsigned long long blocks = warpwatch::probeBlocksFor(groups, kThreadsPerBlock, N);
    warpwatch::checkProbeLaunchShape(dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock));
    cudaCheck(cudaMemsetAsync(nextSize, 0, sizeof(std::uint32_t), stream), "cudaMemsetAsync(nextSize)");
    warpwatch::LaunchInfo info = recorder.launchInfo(args.job, "bfs-level", N, groups, /*sync*/ true, args.samplingStride(), args.selection);
    warpwatch::LaunchTicket ticket = recorder.beginLaunch(stream, info);
    bfsLevel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(edgeStart, target, frontier, frontierSize, dLevel, depth + 1, next, nextSize, groups, ticket.buffers());
    cudaCheck(cudaGetLastError(), "bfsLevel launch");
    recorder.endLaunch(std::move(ticket));
    cudaCheck(cudaMemcpyAsync(&frontierSize, nextSize, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(nextSize)");
    cudaCheck(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::swap(frontier, next);
    reached += frontierSize;
    levels += 1;
  }
  recorder.close();
  const warpwatch::RecorderStats stats = recorder.stats();
  std::fprintf(stderr, "{\"example\":\"bfs\",\"backend\":\"cuda\",\"vertices\":%llu,\"edges\":%llu,\"reached\":%llu,\"levels\":%llu,\"launchesRecorded\":%llu,\"launchesSkipped\":%llu,\"framesWritten\":%llu}\n",
               static_cast<unsigned long long>(graph.vertices), static_cast<unsigned long long>(graph.target.size()), reached, levels,
               static_cast<unsigned long long>(stats.launchesRecorded), static_cast<unsigned long long>(stats.launchesSkipped),
               static_cast<unsigned long long>(stats.writer.written));
  for (void* p : {static_cast<void*>(edgeStart), static_cast<void*>(target), static_cast<void*>(dLevel), static_cast<void*>(frontier), static_cast<void*>(next),
                  static_cast<void*>(nextSize)}) {
    cudaFree(p);
  }
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(example::parseArgs(argc - 1, argv + 1, 1 << 22));
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}
