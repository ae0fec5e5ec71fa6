// Command-line flags shared by every workload program (CPU and CUDA), parsed once, validated
// together, then read-only. The `warpwatch run` CLI passes these flags through.
//
//   --dist SPEC          iteration-count distribution (distributions.hpp), matpow only
//   --n N                lanes per group, 1..32                       (default 32)
//   --groups G           groups per launch                            (default per workload/backend)
//   --launches L         launches (one LaunchSummary each)            (default 1)
//   --seed S             u64 seed                                     (default 1)
//   --sync on|off        synchronise the group before its end clock   (default on)
//   --probe on|off       CUDA matpow: run the kernel without the probe (no frames; for the probe-overhead timing) (default on)
//   --sample-rate R      fraction of groups sampled, 0..1; 0 = none   (default 1/64)
//   --selection hash|stride|block                                     (default hash; stride aliases with row-major layouts;
//                        block: whole blocks of --block-groups consecutive groups, hash-selected by block)
//   --block-groups K     groups per block for --selection block, 1..65535 (default 8: a 256-thread block at n = 32)
//   --sample-capacity C  sample buffer slots per launch (overflow counted) (default 4096)
//   --out FILE | --out - | --socket PATH   frame sink (file, stdout, collector socket)
//   --job NAME --kernel NAME   stream id parts                        (default local / workload)
//   --sorted             escape: sort units by estimated work before grouping; banded: rows by length
//   --width W --height H --max-iter M   escape image / relax field, and iteration cap
//   --repetitions R --csv FILE          divergence: repetitions per pattern, CSV output
//   --queue-capacity Q   writer queue, frames                         (default 256)
//   --remeasure A        CPU only: attempts to measure a group without being descheduled (default 16, 0 = off)
//   --clock steady|thread  CPU only: steady_clock (default) or thread CPU time (immune to preemption)
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "frame.hpp"

namespace warpwatch {

struct WorkloadOptions {
  std::string dist = "pois(30)";
  unsigned groupSize = 32;
  std::uint64_t groups = 0;  ///< 0 = the workload's default
  std::uint64_t launches = 1;
  std::uint64_t seed = 1;
  bool sync = true;
  bool probe = true;  ///< CUDA matpow: false = the same kernel with a probe that does nothing (overhead baseline)
  double sampleRate = 1.0 / 64.0;
  Selection selection = Selection::Hash;  ///< hash: unbiased; stride aliases with 2-D layouts (docs/kernels.md)
  std::uint32_t sampleCapacity = 4096;
  std::uint32_t blockGroups = 8;  ///< --selection block: consecutive groups per block
  std::string sink;  ///< "" = no frames, "-" = stdout, "unix:PATH", else a file
  std::string job = "local";
  std::string kernel;  ///< "" = the workload's name
  bool sorted = false;
  std::uint32_t width = 0, height = 0;  ///< escape image / relax field; 0 = derived from groups
  std::uint32_t maxIterations = 256;
  std::uint32_t repetitions = 51;
  std::string csv;
  std::uint32_t queueCapacity = 256;
  std::uint32_t remeasure = 16;
  std::string clock = "steady";  ///< CPU: group clock, steady | thread  ///< CPU: attempts per group to get an undisturbed measurement (0 = off)
  bool quiet = false;

  /// Groups per sampled block for LaunchInfo.groupsPerBlock: blockGroups with --selection block, else 0.
  std::uint16_t groupsPerBlock() const { return selection == Selection::Block ? static_cast<std::uint16_t>(blockGroups) : 0; }

  /// One in samplingStride() groups is sampled; 0 = off.
  std::uint32_t samplingStride() const {
    if (sampleRate <= 0) return 0;
    return static_cast<std::uint32_t>(std::lround(1.0 / sampleRate));
  }
};

/// Parses argv (after the program name). Throws std::invalid_argument listing every problem,
/// one per line, each naming the flag, what arrived and what is allowed.
inline WorkloadOptions parseWorkloadOptions(int argc, char** argv) {
  WorkloadOptions o;
  std::vector<std::string> problems;
  auto unsignedValue = [&](const std::string& flag, const std::string& text, std::uint64_t low, std::uint64_t high) -> std::uint64_t {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || text[0] == '-' || v < low || v > high) {
      problems.push_back(flag + " must be an integer " + std::to_string(low) + ".." + std::to_string(high) + ", got '" + text + "'");
      return low;
    }
    return v;
  };
  for (int i = 0; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        problems.push_back(flag + " needs a value");
        return "";
      }
      return argv[++i];
    };
    if (flag == "--dist") o.dist = value();
    else if (flag == "--n") o.groupSize = static_cast<unsigned>(unsignedValue(flag, value(), 1, 32));
    else if (flag == "--groups") o.groups = unsignedValue(flag, value(), 1, std::uint64_t{1} << 40);
    else if (flag == "--launches") o.launches = unsignedValue(flag, value(), 1, 1000000);
    else if (flag == "--seed") o.seed = unsignedValue(flag, value(), 0, UINT64_MAX);
    else if (flag == "--sync") {
      const std::string v = value();
      if (v == "on") o.sync = true;
      else if (v == "off") o.sync = false;
      else problems.push_back("--sync must be on or off, got '" + v + "'");
    } else if (flag == "--probe") {
      const std::string v = value();
      if (v == "on") o.probe = true;
      else if (v == "off") o.probe = false;
      else problems.push_back("--probe must be on or off, got '" + v + "'");
    } else if (flag == "--sample-rate") {
      const std::string v = value();
      char* end = nullptr;
      const double rate = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(rate >= 0.0 && rate <= 1.0)) problems.push_back("--sample-rate must be a number 0..1, got '" + v + "'");
      else if (rate > 0 && 1.0 / rate > 4294967295.0) problems.push_back("--sample-rate must be 0 or at least 2.4e-10, got '" + v + "'");
      else o.sampleRate = rate;
    } else if (flag == "--selection") {
      const std::string v = value();
      if (v == "stride") o.selection = Selection::Stride;
      else if (v == "hash") o.selection = Selection::Hash;
      else if (v == "block") o.selection = Selection::Block;
      else problems.push_back("--selection must be hash or stride or block, got '" + v + "'");
    } else if (flag == "--block-groups") o.blockGroups = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 65535)); else if (flag == "--sample-capacity") o.sampleCapacity = static_cast<std::uint32_t>(unsignedValue(flag, value(), 0, 1u << 24));
    else if (flag == "--out") o.sink = value();
    else if (flag == "--socket") o.sink = "unix:" + value();
    else if (flag == "--job") o.job = value();
    else if (flag == "--kernel") o.kernel = value();
    else if (flag == "--sorted") o.sorted = true;
    else if (flag == "--width") o.width = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 1u << 16));
    else if (flag == "--height") o.height = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 1u << 16));
    else if (flag == "--max-iter") o.maxIterations = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 1u << 24));
    else if (flag == "--repetitions") o.repetitions = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 100000));
    else if (flag == "--csv") o.csv = value();
    else if (flag == "--queue-capacity") o.queueCapacity = static_cast<std::uint32_t>(unsignedValue(flag, value(), 1, 1u << 20));
    else if (flag == "--remeasure") o.remeasure = static_cast<std::uint32_t>(unsignedValue(flag, value(), 0, 1000));
    else if (flag == "--clock") o.clock = value();
    else if (flag == "--quiet") o.quiet = true;
    else problems.push_back("unknown flag '" + flag + "'");
  }
  if (o.job.empty() || o.job.size() > 255 || o.job.find('/') != std::string::npos) {
    problems.push_back("--job must be 1..255 bytes without '/', got '" + o.job + "'");
  }
  if (o.kernel.size() > 255) problems.push_back("--kernel must be at most 255 bytes");
  if (!problems.empty()) {
    std::string message;
    for (const auto& p : problems) message += (message.empty() ? "" : "\n") + p;
    throw std::invalid_argument(message);
  }
  return o;
}

}  // namespace warpwatch
