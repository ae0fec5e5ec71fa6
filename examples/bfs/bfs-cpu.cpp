// Level-synchronous BFS on the CPU lockstep backend: the twin of bfs.cu. Each level is one
// launch; lane i of the launch expands frontier vertex i (its iteration count = its out-degree),
// 32 lanes per group in lockstep (the group runs until its highest-degree vertex is done). Frames
// as from the CUDA program (source cpu, clocks in ns): one LaunchSummary per level.
//
//   bfs-cpu --out bfs.wwf [--size 262144] [--seed 1] [--sample-rate 0.015625] [--selection hash]
//   warpwatch analyze bfs.wwf
//
// These are CPU SIMD lanes, not GPU threads: the loss is lockstep loss on this CPU.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "../common/example-args.hpp"
#include "bfs-graph.hpp"
#include "cpu-backend.hpp"  // warpwatch::cpu (target warpwatch::cpu)
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/launch-frames.hpp"
#include "warpwatch/sink.hpp"

namespace {

constexpr unsigned N = 32;

int run(const example::Args& args) {
  using namespace warpwatch;
  cpu::selectGroupClock(args.clock);
  const example::Graph graph = example::makeBfsGraph(args.size, args.seed);
  std::vector<std::int32_t> level(graph.vertices, example::kUnreached);
  std::vector<std::uint32_t> frontier{0}, next;
  level[0] = 0;

  LaunchRecorder recorder(openSink(args.out), 256);
  const DeviceInfo device = cpu::cpuDeviceInfo();
  cpu::RunReport report;
  const auto started = std::chrono::steady_clock::now();
  std::uint64_t reached = 1;
  for (std::int32_t depth = 0; !frontier.empty(); ++depth) {
    LaunchInfo info;
    info.job = args.job;
    info.kernel = "bfs-level";
    info.source = Source::Cpu;
    info.groupSize = N;
    info.sync = true;
    info.device = device;
    info.launchId = cpu::makeLaunchId(static_cast<std::uint64_t>(depth));
    info.groupCount = (frontier.size() + N - 1) / N;
    info.selection = args.selection;
    info.samplingStride = fitSamplingStride(info.selection, args.samplingStride(), info.groupCount, 4096);  // thin, do not truncate, when the 4096 slots would overflow
    info.startUnixNanos = unixNanosNow();
    LaunchAccumulator accumulator(N, info.launchId, {info.selection, info.samplingStride}, 4096);
    next.clear();
    for (std::uint64_t g = 0; g < info.groupCount; ++g) {
      std::vector<std::uint32_t> found;  // discoveries of this group, committed after the measurement
      const GroupMeasurement m = cpu::measureUndisturbed([&] {
        found.clear();
        std::uint32_t begin[N], degree[N], longest = 0;
        for (unsigned lane = 0; lane < N; ++lane) {
          const std::uint64_t i = g * N + lane;
          const bool exists = i < frontier.size();  // the last group's spare lanes have no vertex: degree 0
          const std::uint32_t v = exists ? frontier[i] : 0;
          begin[lane] = graph.edgeStart[v];
          degree[lane] = exists ? graph.edgeStart[v + 1] - graph.edgeStart[v] : 0;
          longest = std::max(longest, degree[lane]);
        }
        GroupMeasurement run;
        run.groupIndex = g;
        run.startClock = cpu::steadyNanos();
        for (unsigned lane = 0; lane < N; ++lane) run.laneFinishClocks[lane] = run.startClock;
        std::uint64_t now = run.startClock;
        for (std::uint32_t k = 0; k < longest; ++k) {
          // Every lane reads an edge (a finished lane its first again) and tests its target.
          for (unsigned lane = 0; lane < N; ++lane) {
            const std::uint32_t active = k < degree[lane] ? 1u : 0u;
            const std::uint32_t u = graph.target[begin[lane] + k * active];
            if (active & static_cast<std::uint32_t>(level[u] == example::kUnreached)) found.push_back(u);
          }
          now = cpu::steadyNanos();
          cpu::recordFinishes<N>(run.laneFinishClocks, degree, k + 1, now);
        }
        run.endClock = now;
        for (unsigned lane = 0; lane < N; ++lane) run.laneCounts[lane] = degree[lane];
        return run;
      }, 16, report);
      for (std::uint32_t u : found) {
        if (level[u] == example::kUnreached) {
          level[u] = depth + 1;
          next.push_back(u);
        }
      }
      accumulator.addGroup(m);
    }
    cpu::finishLaunch(info, accumulator, recorder, report);
    reached += next.size();
    frontier.swap(next);
  }
  recorder.close();
  const WriterStats stats = recorder.stats();
  std::fprintf(stderr, "{\"example\":\"bfs\",\"backend\":\"cpu\",\"vertices\":%llu,\"edges\":%llu,\"reached\":%llu,\"levels\":%llu,\"groups\":%llu,"
               "\"lossCounts\":%.6f,\"lossMeasured\":%.6f,\"framesWritten\":%llu,\"framesDropped\":%llu,\"seconds\":%.3f}\n",
               static_cast<unsigned long long>(graph.vertices), static_cast<unsigned long long>(graph.target.size()),
               static_cast<unsigned long long>(reached), static_cast<unsigned long long>(report.launches),
               static_cast<unsigned long long>(report.groups), report.sumCountsLoss / static_cast<double>(report.groups),
               report.sumMeasuredLoss / static_cast<double>(report.groups), static_cast<unsigned long long>(stats.written),
               static_cast<unsigned long long>(stats.droppedQueueFull + stats.droppedSink),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(example::parseArgs(argc - 1, argv + 1, 262144));
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return 1;
  }
}
