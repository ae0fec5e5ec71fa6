// The recorder's host logic on the CPU (BasicRecorder over FakeRuntime): tickets across threads
// and streams, only the claimed samples copied, failure injection (failed calls, sticky error,
// a stalled stream, abandoned tickets), launch sampling, and a sink whose reader goes away
// (no SIGPIPE death, bounded close). Also built with -fsanitize=thread and -fsanitize=address
// (kernels/CMakeLists.txt: warpwatch-recorder-tests-tsan / -asan).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "warpwatch/fake-runtime.hpp"
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/recorder-core.hpp"

namespace ww = warpwatch;
using namespace std::chrono_literals;

namespace {

constexpr unsigned kGroupSize = 4;

std::string tempPath(const std::string& name) { return "/tmp/ww-recorder-test-" + std::to_string(::getpid()) + "-" + name; }

/// Lane iteration count of a fake launch: a fixed function of (launch, group, lane), so a test
/// can recompute every count independently of the recorder.
std::uint32_t laneCount(std::uint64_t launchId, std::uint64_t group, unsigned lane) {
  return 1 + static_cast<std::uint32_t>(ww::splitmix64(launchId * 131 + group * kGroupSize + lane) % 50);
}

void atomicAddDouble(double* target, double value) {
  std::uint64_t* bits = reinterpret_cast<std::uint64_t*>(target);
  std::uint64_t expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
  for (;;) {
    double current;
    std::memcpy(&current, &expected, sizeof current);
    const double next = current + value;
    std::uint64_t desired;
    std::memcpy(&desired, &next, sizeof desired);
    if (__atomic_compare_exchange_n(bits, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

/// What the probe does on a GPU, done on the CPU: aggregates `groups` groups into the launch's
/// totals with atomics (the scratch totals are shared by concurrent launches, as on a device) and
/// writes the claimed samples.
void fakeKernel(const ww::ProbeBuffers& buffers, std::uint64_t groups) {
  ww::LaunchAccumulator accumulator(kGroupSize, buffers.launchId, {buffers.selection, buffers.samplingStride}, buffers.sampleCapacity);
  for (std::uint64_t g = 0; g < groups; ++g) {
    ww::GroupMeasurement m;
    m.groupIndex = g;
    m.startClock = 1000;
    std::uint64_t longest = 0;
    for (unsigned lane = 0; lane < kGroupSize; ++lane) {
      m.laneCounts[lane] = laneCount(buffers.launchId, g, lane);
      m.laneFinishClocks[lane] = 1000 + 3 * m.laneCounts[lane];
      longest = std::max<std::uint64_t>(longest, m.laneFinishClocks[lane]);
    }
    m.endClock = longest + 1;
    accumulator.addGroup(m);
  }
  const ww::LaunchTotals& t = accumulator.totals();
  ww::LaunchTotals* d = buffers.totals;
  for (std::uint32_t bin = 0; bin < ww::kHistogramBinCount; ++bin) {
    if (t.histogram[bin] != 0) __atomic_fetch_add(&d->histogram[bin], t.histogram[bin], __ATOMIC_RELAXED);
  }
  __atomic_fetch_add(&d->groupsCounted, t.groupsCounted, __ATOMIC_RELAXED);
  __atomic_fetch_add(&d->sumSimtClocks, t.sumSimtClocks, __ATOMIC_RELAXED);
  __atomic_fetch_add(&d->sumMimdClocks, t.sumMimdClocks, __ATOMIC_RELAXED);
  __atomic_fetch_add(&d->sumMaxCounts, t.sumMaxCounts, __ATOMIC_RELAXED);
  __atomic_fetch_add(&d->sumCounts, t.sumCounts, __ATOMIC_RELAXED);
  __atomic_fetch_add(&d->droppedSamples, t.droppedSamples, __ATOMIC_RELAXED);
  atomicAddDouble(&d->sumMeasuredLoss, t.sumMeasuredLoss);
  atomicAddDouble(&d->sumCountsLoss, t.sumCountsLoss);
  const unsigned claimed = static_cast<unsigned>(accumulator.samples().size() + t.droppedSamples);
  __atomic_fetch_add(&d->sampleSlotsClaimed, claimed, __ATOMIC_RELAXED);
  for (std::size_t i = 0; i < accumulator.samples().size(); ++i) buffers.samples[i] = accumulator.samples()[i];
}

ww::RecorderDevice fakeDevice() {
  ww::RecorderDevice device;
  device.source = ww::Source::Cpu;
  device.info.name = "fake";
  device.info.clockHz = 1'000'000'000;
  return device;
}

std::vector<ww::Frame> readFrames(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ww::decodeFrames(bytes.data(), bytes.size());
}

/// Begins a launch, runs the fake kernel on the stream and ends it.
void launch(ww::BasicRecorder& recorder, ww::FakeRuntime& runtime, ww::StreamHandle stream, const std::string& kernel, std::uint64_t groups,
            std::uint32_t stride = 8) {
  ww::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("job", kernel, kGroupSize, groups, true, stride));
  const ww::ProbeBuffers buffers = ticket.buffers();
  runtime.enqueue(stream, [buffers, groups] { fakeKernel(buffers, groups); });
  recorder.endLaunch(std::move(ticket));
}

/// Checks every decoded launch against an independent recomputation from laneCount().
void expectFramesMatchTheirLaunches(const std::vector<ww::Frame>& frames, std::size_t& summaries, std::size_t& sampledGroups) {
  summaries = 0;
  sampledGroups = 0;
  for (const ww::Frame& frame : frames) {
    if (const auto* s = std::get_if<ww::LaunchSummary>(&frame)) {
      summaries += 1;
      std::uint64_t sumCounts = 0;
      for (std::uint64_t g = 0; g < s->groupsCounted; ++g) {
        for (unsigned lane = 0; lane < kGroupSize; ++lane) sumCounts += laneCount(s->identity.launchId, g, lane);
      }
      EXPECT_LE(s->groupsCounted, s->groupCount) << "launch " << s->identity.launchId;
      EXPECT_EQ(s->sumCounts, sumCounts) << "launch " << s->identity.launchId;
    } else {
      const auto& samples = std::get<ww::GroupSamples>(frame);
      for (const ww::GroupSample& group : samples.groups) {
        sampledGroups += 1;
        EXPECT_TRUE(ww::isGroupSampled(samples.selection, samples.identity.launchId, group.groupIndex, samples.samplingStride, samples.groupsPerBlock));
        for (unsigned lane = 0; lane < kGroupSize; ++lane) {
          EXPECT_EQ(group.laneCounts[lane], laneCount(samples.identity.launchId, group.groupIndex, lane));
        }
      }
    }
  }
}

}  // namespace

TEST(Recorder, RecordsALaunchAndCopiesOnlyTheClaimedSamples) {
  const std::string path = tempPath("one.bin");
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.sink = path;
  options.sampleCapacity = 4096;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    launch(recorder, *runtime, nullptr, "k", 100, 10);
    const ww::CloseResult closed = recorder.close(10s);
    EXPECT_TRUE(closed.complete);
    EXPECT_EQ(closed.launchesNotRecorded, 0u);
    EXPECT_EQ(recorder.stats().launchesRecorded, 1u);
  }
  // Hash selection at 1 in 10 of 100 groups: the copy moves exactly the claimed slots, not 4096.
  std::size_t summaries = 0, sampled = 0;
  const auto frames = readFrames(path);
  expectFramesMatchTheirLaunches(frames, summaries, sampled);
  EXPECT_EQ(summaries, 1u);
  ASSERT_GT(sampled, 0u);
  EXPECT_EQ(runtime->privateBytesCopied(), sampled * sizeof(ww::GroupSampleSlot));
  EXPECT_EQ(runtime->liveAllocations(), 0) << "slots freed with the recorder";
  ::unlink(path.c_str());
}

TEST(Recorder, ThinsTheSamplingRateWhenTheSelectedGroupsWouldNotFit) {
  // 200 groups at rate 1 into 64 slots: first come would keep groups 0..63 of every launch.
  // Hash stride fitted: mu + 8 sqrt(mu) <= 64 -> mu <= 24.44, ceil(200 / 24.44) = 9.
  const std::string path = tempPath("thin.bin");
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.sink = path;
  options.sampleCapacity = 64;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    launch(recorder, *runtime, nullptr, "k", 200, 1);
    EXPECT_TRUE(recorder.close(10s).complete);
  }
  const auto frames = readFrames(path);
  std::size_t summaries = 0, sampled = 0;
  expectFramesMatchTheirLaunches(frames, summaries, sampled);
  ASSERT_EQ(summaries, 1u);
  std::uint64_t maxIndex = 0;
  for (const ww::Frame& frame : frames) {
    if (const auto* s = std::get_if<ww::LaunchSummary>(&frame)) {
      EXPECT_EQ(s->droppedSamples, 0u);
    }
    if (const auto* g = std::get_if<ww::GroupSamples>(&frame)) {
      EXPECT_EQ(g->samplingStride, 9u);
      for (const ww::GroupSample& group : g->groups) maxIndex = std::max(maxIndex, group.groupIndex);
    }
  }
  EXPECT_GT(sampled, 0u);
  EXPECT_LE(sampled, 64u);
  EXPECT_GE(maxIndex, 64u) << "samples span the launch, not its first 64 groups";
  ::unlink(path.c_str());
}

TEST(Recorder, InterleavedThreadsAndStreamsKeepEveryLaunchInItsOwnSlot) {
  const std::string path = tempPath("interleaved.bin");
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.sink = path;
  options.sampleCapacity = 64;
  options.stagingSlots = 6;
  options.queueCapacityFrames = 100000;
  constexpr int kThreads = 4, kLaunchesPerThread = 60;
  ww::RecorderStats stats;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      const ww::StreamHandle a = runtime->createStream();
      const ww::StreamHandle b = runtime->createStream();
      threads.emplace_back([&recorder, &runtime, a, b, t] {
        for (int i = 0; i < kLaunchesPerThread; i += 2) {
          // Begin on A, begin on B, end on B, then end on A: tickets end out of order.
          const std::uint64_t groupsA = 20 + static_cast<std::uint64_t>((t * 7 + i) % 30);
          const std::uint64_t groupsB = 5 + static_cast<std::uint64_t>((t * 3 + i) % 40);
          ww::LaunchTicket ta = recorder.beginLaunch(a, recorder.launchInfo("job", "a", kGroupSize, groupsA, true, 4));
          ww::LaunchTicket tb = recorder.beginLaunch(b, recorder.launchInfo("job", "b", kGroupSize, groupsB, true, 4));
          const ww::ProbeBuffers ba = ta.buffers(), bb = tb.buffers();
          runtime->enqueue(a, [ba, groupsA] { fakeKernel(ba, groupsA); });
          runtime->enqueue(b, [bb, groupsB] { fakeKernel(bb, groupsB); });
          recorder.endLaunch(std::move(tb));
          recorder.endLaunch(std::move(ta));
        }
        runtime->synchronize(a);
        runtime->synchronize(b);
      });
    }
    for (auto& thread : threads) thread.join();
    const ww::CloseResult closed = recorder.close(30s);
    EXPECT_TRUE(closed.complete);
    stats = recorder.stats();
  }
  EXPECT_EQ(stats.launchesBegun, static_cast<std::uint64_t>(kThreads * kLaunchesPerThread));
  EXPECT_EQ(stats.launchesRecorded + stats.launchesSkipped, stats.launchesBegun);
  EXPECT_GT(stats.launchesRecorded, 0u);
  EXPECT_EQ(stats.launchesFailed + stats.launchesAbandoned + stats.launchesDisabled, 0u);
  std::size_t summaries = 0, sampled = 0;
  expectFramesMatchTheirLaunches(readFrames(path), summaries, sampled);
  EXPECT_EQ(summaries, stats.launchesRecorded);
  EXPECT_GT(sampled, 0u);
  EXPECT_EQ(runtime->liveAllocations(), 0);
  ::unlink(path.c_str());
}

TEST(Recorder, AFailedCallFreesItsSlotAndIsReportedOnce) {
  for (const char* which : {"hostFunction", "clear", "copy", "privateCopy"}) {
    SCOPED_TRACE(which);
    auto runtime = std::make_shared<ww::FakeRuntime>();
    ww::RecorderOptions options;
    options.stagingSlots = 1;  // a leaked slot would stop every later launch
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    const std::string w = which;
    if (w == "hostFunction") runtime->failHostFunctions(2);
    if (w == "clear") runtime->failClears(2);
    if (w == "copy") runtime->failCopies(2);
    if (w == "privateCopy") runtime->failPrivateCopies(2);
    testing::internal::CaptureStderr();
    for (int i = 0; i < 6; ++i) {
      launch(recorder, *runtime, nullptr, "k", 50, 1);  // stride 1: every launch claims samples
      runtime->synchronize(nullptr);
      // The encoder counts the launch when it hands the slot back (one lock): wait for the count
      // without timing anything; a skipped launch ends the wait too, and the test then fails.
      const auto settled = [&recorder] {
        const ww::RecorderStats now = recorder.stats();
        return now.launchesRecorded + now.launchesFailed + now.launchesSkipped;
      };
      for (int spin = 0; spin < 60000 && settled() < static_cast<std::uint64_t>(i + 1); ++spin) {
        std::this_thread::sleep_for(1ms);
      }
    }
    const ww::CloseResult closed = recorder.close(10s);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(closed.complete);
    const ww::RecorderStats stats = recorder.stats();
    EXPECT_EQ(stats.launchesFailed, 2u);
    EXPECT_EQ(stats.launchesRecorded, 4u);
    EXPECT_EQ(stats.launchesSkipped, 0u) << "the failed launches gave their slot back";
    EXPECT_FALSE(stats.disabled);
    std::size_t lines = 0;
    for (std::size_t at = err.find("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED"); at != std::string::npos;
         at = err.find("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED", at + 1)) {
      lines += 1;
    }
    EXPECT_EQ(lines, 1u) << err;
  }
}

TEST(Recorder, ALaunchCountedAsRecordedHasAlreadyGivenItsSlotBack) {
  // With one staging slot, a caller that waits until stats() counts its launch may launch again at
  // once and must find the slot free: the count and the freed slot change under one lock.
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.stagingSlots = 1;
  options.queueCapacityFrames = 100000;
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  constexpr std::uint64_t kLaunches = 3000;
  for (std::uint64_t i = 0; i < kLaunches; ++i) {
    launch(recorder, *runtime, nullptr, "k", 4, 1);
    runtime->synchronize(nullptr);
    for (;;) {  // no sleep: poll as tightly as a caller can, to land inside any gap
      const ww::RecorderStats now = recorder.stats();
      if (now.launchesRecorded + now.launchesFailed + now.launchesSkipped >= i + 1) break;
      std::this_thread::yield();
    }
  }
  const ww::CloseResult closed = recorder.close(10s);
  EXPECT_TRUE(closed.complete);
  const ww::RecorderStats stats = recorder.stats();
  EXPECT_EQ(stats.launchesSkipped, 0u) << "a launch found the slot of a launch already counted still in use";
  EXPECT_EQ(stats.launchesRecorded, kLaunches);
}

TEST(Recorder, AStickyErrorDisablesTheRecorderOnceAndCloseReturnsAtOnce) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const ww::StreamHandle stream = runtime->createStream();
  ww::RecorderOptions options;
  options.closeTimeout = 600s;  // close must not need it
  testing::internal::CaptureStderr();
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    runtime->pause(stream);
    launch(recorder, *runtime, stream, "k", 10);
    launch(recorder, *runtime, stream, "k", 10);  // two host functions queued ...
    runtime->makeSticky();                        // ... that now never run (the context faulted)
    for (int i = 0; i < 5; ++i) launch(recorder, *runtime, stream, "k", 10);
    const ww::CloseResult closed = recorder.close();
    EXPECT_FALSE(closed.complete);
    EXPECT_EQ(closed.launchesNotRecorded, 2u);
    const ww::RecorderStats stats = recorder.stats();
    EXPECT_TRUE(stats.disabled);
    EXPECT_EQ(stats.launchesRecorded, 0u);
    EXPECT_EQ(stats.launchesDisabled, 5u);  // the first after the fault fails its call, the rest are refused
    EXPECT_EQ(stats.launchesNotRecordedAtClose, 2u);
  }  // the destructor keeps the core: the runtime still holds two host functions of it
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("WW_ERR_KERNELS_RECORDER_DISABLED"), err.rfind("WW_ERR_KERNELS_RECORDER_DISABLED")) << err;
  EXPECT_NE(err.find("WW_ERR_KERNELS_RECORDER_DISABLED"), std::string::npos) << err;
}

TEST(Recorder, CloseWithAStalledStreamReturnsAndALateHostFunctionIsHarmless) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const ww::StreamHandle stream = runtime->createStream();
  runtime->pause(stream);
  ww::CloseResult closed;
  testing::internal::CaptureStderr();
  {
    ww::BasicRecorder recorder(ww::RecorderOptions{}, runtime, fakeDevice());
    launch(recorder, *runtime, stream, "k", 10);
    closed = recorder.close(50ms);
  }  // recorder gone while its host function is still queued
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(closed.complete);
  EXPECT_EQ(closed.launchesNotRecorded, 1u);
  EXPECT_NE(err.find("WW_ERR_KERNELS_RECORDER_CLOSE_INCOMPLETE"), std::string::npos) << err;
  runtime->resume(stream);  // the host function runs now, on the core the recorder left behind
  runtime->synchronize(stream);
  EXPECT_EQ(runtime->hostFunctionsRun(), 1);
}

TEST(Recorder, AnAbandonedTicketGivesItsSlotBackAfterTheStream) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.stagingSlots = 1;
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  {
    ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo("job", "k", kGroupSize, 10, true));
    EXPECT_TRUE(ticket.recording());
    ww::LaunchTicket moved = std::move(ticket);  // moving does not abandon
    EXPECT_FALSE(ticket.recording());            // NOLINT(bugprone-use-after-move): a moved-from ticket is empty
  }  // dropped without endLaunch (e.g. the launch threw)
  runtime->synchronize(nullptr);
  ww::LaunchTicket again = recorder.beginLaunch(nullptr, recorder.launchInfo("job", "k", kGroupSize, 10, true));
  EXPECT_TRUE(again.recording()) << "the single slot came back";
  recorder.endLaunch(std::move(again));
  EXPECT_TRUE(recorder.close(10s).complete);
  const ww::RecorderStats stats = recorder.stats();
  EXPECT_EQ(stats.launchesAbandoned, 1u);
  EXPECT_EQ(stats.launchesRecorded, 1u);
}

TEST(Recorder, WithEverySlotInFlightALaunchIsSkippedNotDelayed) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const ww::StreamHandle stream = runtime->createStream();
  ww::RecorderOptions options;
  options.stagingSlots = 2;
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  runtime->pause(stream);
  std::vector<bool> recording;
  for (int i = 0; i < 4; ++i) {
    ww::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("job", "k", kGroupSize, 10, true));
    recording.push_back(ticket.recording());
    EXPECT_EQ(ticket.buffers().samplingStride, ticket.recording() ? 64u : 0u) << "scratch buffers sample nothing";
    const ww::ProbeBuffers buffers = ticket.buffers();
    runtime->enqueue(stream, [buffers] { fakeKernel(buffers, 10); });
    recorder.endLaunch(std::move(ticket));
  }
  EXPECT_EQ(recording, (std::vector<bool>{true, true, false, false}));
  runtime->resume(stream);
  runtime->synchronize(stream);
  EXPECT_TRUE(recorder.close(10s).complete);
  EXPECT_EQ(recorder.stats().launchesRecorded, 2u);
  EXPECT_EQ(recorder.stats().launchesSkipped, 2u);
}

TEST(Recorder, ATicketEndedAfterCloseIsCountedAndHarmless) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::BasicRecorder recorder(ww::RecorderOptions{}, runtime, fakeDevice());
  ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo("job", "k", kGroupSize, 10, true));
  EXPECT_TRUE(recorder.close(10s).complete);
  recorder.endLaunch(std::move(ticket));
  ww::LaunchTicket late = recorder.beginLaunch(nullptr, recorder.launchInfo("job", "k", kGroupSize, 10, true));
  EXPECT_FALSE(late.recording());
  EXPECT_EQ(recorder.stats().launchesDisabled, 2u);
}

TEST(Recorder, LaunchSamplingRecordsOneInKOfEachKernel) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const std::string path = tempPath("sampled.bin");
  ww::RecorderOptions options;
  options.sink = path;
  options.launchSampleEvery = 4;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    std::map<std::string, std::vector<bool>> recorded;
    for (int i = 0; i < 10; ++i) {
      for (const char* kernel : {"a", "b"}) {
        const std::uint64_t groups = 10 + static_cast<std::uint64_t>(i);
        ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo("job", kernel, kGroupSize, groups, true));
        recorded[kernel].push_back(ticket.recording());
        const ww::ProbeBuffers buffers = ticket.buffers();
        runtime->enqueue(nullptr, [buffers, groups] { fakeKernel(buffers, groups); });
        recorder.endLaunch(std::move(ticket));
        runtime->synchronize(nullptr);
        for (int spin = 0; spin < 10000 && recorder.stats().launchesRecorded + recorder.stats().launchesSampledOut < recorder.stats().launchesBegun; ++spin) {
          std::this_thread::sleep_for(1ms);
        }
      }
    }
    const std::vector<bool> expected{true, false, false, false, true, false, false, false, true, false};  // launches 0, 4, 8
    EXPECT_EQ(recorded["a"], expected);
    EXPECT_EQ(recorded["b"], expected);
    EXPECT_TRUE(recorder.close(10s).complete);
    EXPECT_EQ(recorder.stats().launchesRecorded, 6u);
    EXPECT_EQ(recorder.stats().launchesSampledOut, 14u);
  }
  std::size_t summaries = 0, sampled = 0;
  const std::vector<ww::Frame> frames = readFrames(path);
  expectFramesMatchTheirLaunches(frames, summaries, sampled);
  EXPECT_EQ(summaries, 6u);
  // Each summary stands for its own groups and those of the launches skipped since the kernel's
  // previous summary: launch 0: 10; launch 4: 11 + 12 + 13 + 14; launch 8: 15 + 16 + 17 + 18.
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> counted;  // kernel -> (groupCount, groupsCounted)
  std::map<std::string, std::vector<std::uint64_t>> sampleGroupCounts;
  for (const ww::Frame& frame : frames) {
    if (const auto* s = std::get_if<ww::LaunchSummary>(&frame)) counted[s->identity.kernel].emplace_back(s->groupCount, s->groupsCounted);
    if (const auto* g = std::get_if<ww::GroupSamples>(&frame)) sampleGroupCounts[g->identity.kernel].push_back(g->groupCount);
  }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expectedCounts{{10, 10}, {50, 14}, {66, 18}};
  EXPECT_EQ(counted["a"], expectedCounts);
  EXPECT_EQ(counted["b"], expectedCounts);
  for (const auto& [kernel, counts] : sampleGroupCounts) {
    for (std::uint64_t c : counts) EXPECT_TRUE(c == 10 || c == 14 || c == 18) << kernel << ": samples carry their own launch's groups, got " << c;
  }
  ::unlink(path.c_str());
}

TEST(Recorder, ALaunchBudgetCapsRecordedLaunchesPerSecond) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.maxLaunchesPerSecond = 5;
  options.stagingSlots = 64;
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  const auto started = std::chrono::steady_clock::now();
  std::uint64_t recording = 0;
  for (int i = 0; i < 200; ++i) {
    ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo("job", "k", kGroupSize, 1, true));
    recording += ticket.recording() ? 1 : 0;
    recorder.endLaunch(std::move(ticket));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A bucket of 5 tokens refilled at 5/s: at least the burst, at most the burst plus the refill.
  EXPECT_GE(recording, 5u);
  EXPECT_LE(static_cast<double>(recording), 5.0 + seconds * 5.0 + 1e-9);
  EXPECT_EQ(recorder.stats().launchesSampledOut, 200u - recording);
  recorder.close(10s);
}

TEST(Recorder, CloseFromTwoThreadsAtOnceReturnsOneResultToBoth) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const ww::StreamHandle stream = runtime->createStream();
  ww::BasicRecorder recorder(ww::RecorderOptions{}, runtime, fakeDevice());
  launch(recorder, *runtime, stream, "k", 10);
  ww::CloseResult first, second;
  std::thread other([&] { first = recorder.close(10s); });
  second = recorder.close(10s);
  other.join();
  EXPECT_TRUE(first.complete);
  EXPECT_TRUE(second.complete);
  EXPECT_EQ(recorder.stats().launchesRecorded, 1u);
}

TEST(Recorder, ALaunchWhoseFramesCannotBeBuiltIsCountedNotThrown) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::BasicRecorder recorder(ww::RecorderOptions{}, runtime, fakeDevice());
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo("a/b", "k", kGroupSize, 10, true));  // '/' is refused in a job
    const ww::ProbeBuffers buffers = ticket.buffers();
    runtime->enqueue(nullptr, [buffers] { fakeKernel(buffers, 10); });
    recorder.endLaunch(std::move(ticket));
    runtime->synchronize(nullptr);
  }
  EXPECT_TRUE(recorder.close(10s).complete);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(recorder.stats().launchesFailed, 3u);
  EXPECT_EQ(recorder.stats().launchesRecorded, 0u);
  EXPECT_NE(err.find("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED"), std::string::npos) << err;
  EXPECT_EQ(err.find("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED"), err.rfind("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED")) << "once: " << err;
}

TEST(Recorder, AnIdentityWithAControlCharacterOrAnUnstorableBackslashIsRefusedReportedAndTheJobGoesOn) {
  // contracts/stream-identity.ts: no control character and no backslash before ',', '=', a space
  // or the end in any part; the encoder refuses such a launch (WW_ERR_FRAME_INVALID), the
  // recorder counts and reports it once, and the next valid launch is recorded.
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::BasicRecorder recorder(ww::RecorderOptions{}, runtime, fakeDevice());
  testing::internal::CaptureStderr();
  const std::pair<const char*, const char*> identities[] = {{"job", "k\nzz"}, {"bs\\", "k"}, {"job", "k\x7f"}, {"job", "k"}};
  for (const auto& [job, kernel] : identities) {
    ww::LaunchTicket ticket = recorder.beginLaunch(nullptr, recorder.launchInfo(job, kernel, kGroupSize, 10, true));
    const ww::ProbeBuffers buffers = ticket.buffers();
    runtime->enqueue(nullptr, [buffers] { fakeKernel(buffers, 10); });
    recorder.endLaunch(std::move(ticket));
    runtime->synchronize(nullptr);
  }
  EXPECT_TRUE(recorder.close(10s).complete);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(recorder.stats().launchesFailed, 3u);
  EXPECT_EQ(recorder.stats().launchesRecorded, 1u);
  EXPECT_NE(err.find("WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED"), std::string::npos) << err;
  EXPECT_NE(err.find("WW_ERR_FRAME_INVALID: kernel must not contain control characters (U+000A at byte 2)"), std::string::npos) << err;
}

TEST(Recorder, AggregationWritesTheLaunchesOfAKernelOnAStreamAsOneFrame) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const std::string path = tempPath("aggregated.bin");
  ww::RecorderOptions options;
  options.sink = path;
  options.aggregateInterval = std::chrono::hours(1);  // never due: close() writes the aggregates
  const ww::StreamHandle other = runtime->createStream();
  std::map<std::string, std::uint64_t> expectedSum, expectedGroups;
  std::map<std::string, std::uint64_t> firstLaunchId;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    for (int i = 0; i < 12; ++i) {
      // kernel k on the default stream, kernel j on the default stream, kernel k on another stream
      for (const auto& [kernel, stream, label] : {std::tuple<const char*, ww::StreamHandle, const char*>{"k", nullptr, "k@0"}, {"j", nullptr, "j@0"}, {"k", other, "k@1"}}) {
        const std::uint64_t groups = 10 + static_cast<std::uint64_t>(i);
        ww::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("job", kernel, kGroupSize, groups, true, 2));
        ASSERT_TRUE(ticket.recording());
        const ww::ProbeBuffers buffers = ticket.buffers();
        EXPECT_EQ(buffers.samplingStride, i == 0 ? 2u : 0u) << "samples from the first launch of an aggregate only";
        if (i == 0) firstLaunchId[label] = buffers.launchId;
        for (std::uint64_t g = 0; g < groups; ++g) {
          for (unsigned lane = 0; lane < kGroupSize; ++lane) expectedSum[label] += laneCount(buffers.launchId, g, lane);
        }
        expectedGroups[label] += groups;
        runtime->enqueue(stream, [buffers, groups] { fakeKernel(buffers, groups); });
        recorder.endLaunch(std::move(ticket));
      }
    }
    EXPECT_TRUE(recorder.close(10s).complete);
    const ww::RecorderStats stats = recorder.stats();
    EXPECT_EQ(stats.launchesRecorded, 36u);
    EXPECT_EQ(stats.launchesAggregated, 33u);
  }
  std::map<std::uint64_t, std::string> labelOf;
  for (const auto& [label, id] : firstLaunchId) labelOf[id] = label;
  std::size_t summaries = 0, sampled = 0;
  for (const ww::Frame& frame : readFrames(path)) {
    if (const auto* s = std::get_if<ww::LaunchSummary>(&frame)) {
      summaries += 1;
      ASSERT_EQ(labelOf.count(s->identity.launchId), 1u) << "an aggregate carries its first launch's id";
      const std::string& label = labelOf[s->identity.launchId];
      EXPECT_EQ(s->groupCount, expectedGroups[label]) << label;
      EXPECT_EQ(s->groupsCounted, expectedGroups[label]) << label;
      EXPECT_EQ(s->sumCounts, expectedSum[label]) << label;
    } else {
      const auto& samples = std::get<ww::GroupSamples>(frame);
      EXPECT_EQ(samples.groupCount, 10u) << "the samples' launch (the first) had 10 groups";
      for (const ww::GroupSample& group : samples.groups) {
        sampled += 1;
        EXPECT_LT(group.groupIndex, 10u) << "the first launch had 10 groups";
        for (unsigned lane = 0; lane < kGroupSize; ++lane) EXPECT_EQ(group.laneCounts[lane], laneCount(samples.identity.launchId, group.groupIndex, lane));
      }
    }
  }
  EXPECT_EQ(summaries, 3u);
  EXPECT_GT(sampled, 0u);
  ::unlink(path.c_str());
}

TEST(Recorder, AggregationAcrossThreadsLosesNoGroupAndCountsEveryLaunch) {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  const std::string path = tempPath("aggregated-threads.bin");
  ww::RecorderOptions options;
  options.sink = path;
  options.aggregateInterval = 1ms;
  options.stagingSlots = 8;
  options.queueCapacityFrames = 100000;
  const ww::StreamHandle shared = runtime->createStream();
  std::mutex mutex;
  std::uint64_t expectedSum = 0, launchedRecording = 0;
  ww::RecorderStats stats;
  {
    ww::BasicRecorder recorder(options, runtime, fakeDevice());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      const ww::StreamHandle own = runtime->createStream();
      threads.emplace_back([&, own, t] {
        for (int i = 0; i < 150; ++i) {
          const ww::StreamHandle stream = i % 3 == 0 ? shared : own;
          const std::uint64_t groups = 3 + static_cast<std::uint64_t>((i + t) % 7);
          ww::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("job", "k", kGroupSize, groups, true, 0));
          const ww::ProbeBuffers buffers = ticket.buffers();
          if (ticket.recording()) {
            std::uint64_t sum = 0;
            for (std::uint64_t g = 0; g < groups; ++g) {
              for (unsigned lane = 0; lane < kGroupSize; ++lane) sum += laneCount(buffers.launchId, g, lane);
            }
            std::lock_guard<std::mutex> lock(mutex);
            expectedSum += sum;
            launchedRecording += 1;
          }
          runtime->enqueue(stream, [buffers, groups] { fakeKernel(buffers, groups); });
          recorder.endLaunch(std::move(ticket));
          if (i % 10 == 0) std::this_thread::sleep_for(1ms);
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_TRUE(recorder.close(30s).complete);
    stats = recorder.stats();
  }
  EXPECT_EQ(stats.launchesRecorded, launchedRecording);
  EXPECT_EQ(stats.launchesRecorded + stats.launchesSkipped, 600u);
  EXPECT_GT(stats.launchesAggregated, 0u);
  std::uint64_t sum = 0, frames = 0;
  for (const ww::Frame& frame : readFrames(path)) {
    if (const auto* s = std::get_if<ww::LaunchSummary>(&frame)) {
      sum += s->sumCounts;
      frames += 1;
    }
  }
  EXPECT_EQ(sum, expectedSum) << "every group of every recorded launch is in exactly one frame";
  EXPECT_EQ(frames, stats.launchesRecorded - stats.launchesAggregated);
  ::unlink(path.c_str());
}

// ---- the sink's reader goes away: the job must survive (run in a child process) ---------------
// The child is this test binary again (posix_spawn, so no fork of a multi-threaded process),
// told by WW_RECORDER_CHILD which body to run; a static initializer runs it before main().

namespace {

int childReaderGoesAway() {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.sink = "-";
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  for (int i = 0; i < 300; ++i) {
    launch(recorder, *runtime, nullptr, "k", 40);
    runtime->synchronize(nullptr);
    std::this_thread::sleep_for(1ms);
  }
  const ww::CloseResult closed = recorder.close(5s);
  const ww::RecorderStats stats = recorder.stats();
  // Survived; the frames after the reader left were dropped and counted.
  return stats.writer.droppedSink > 0 && stats.writer.written > 0 && closed.launchesNotRecorded == 0 ? 0 : 3;
}

int childFdSinkOnClosedPipe() {
  ww::FdSink sink(1, false, "stdout");
  std::this_thread::sleep_for(100ms);  // the parent closes its read end without reading
  const std::vector<std::uint8_t> bytes(1000, 7);
  for (int i = 0; i < 100 && !sink.broken(); ++i) {
    sink.send(bytes.data(), bytes.size());
    std::this_thread::sleep_for(5ms);
  }
  const bool dropped = sink.send(bytes.data(), bytes.size()) == ww::SendResult::dropped;
  sigset_t pending;
  sigpending(&pending);
  return sink.broken() && dropped && !sigismember(&pending, SIGPIPE) ? 0 : 3;
}

int childStalledReader() {
  auto runtime = std::make_shared<ww::FakeRuntime>();
  ww::RecorderOptions options;
  options.sink = "-";
  options.queueCapacityFrames = 100000;
  ww::BasicRecorder recorder(options, runtime, fakeDevice());
  for (int i = 0; i < 40; ++i) {
    launch(recorder, *runtime, nullptr, "k", 400, 1);  // ~29 KiB of frames each; a pipe holds 64 KiB
    runtime->synchronize(nullptr);
  }
  const ww::CloseResult closed = recorder.close(300ms);
  return !closed.complete && closed.framesNotWritten > 0 ? 0 : 3;
}

const int childHook = [] {
  const char* which = std::getenv("WW_RECORDER_CHILD");
  if (which == nullptr) return 0;
  const std::string w = which;
  std::_Exit(w == "reader-goes-away" ? childReaderGoesAway() : w == "fd-sink-closed-pipe" ? childFdSinkOnClosedPipe() : w == "stalled-reader" ? childStalledReader() : 4);
}();

/// Runs this binary as child `which` with stdout on a pipe, SIGPIPE at its default action (kill)
/// and unblocked. The parent reads `readBytes` bytes (0: none), then closes its read end (reader
/// gone) or, with `keepOpen`, stops reading but keeps it open (reader stalled) until the child
/// exits. Returns the child's wait status.
int runChildWritingToAPipe(const char* which, std::size_t readBytes, bool keepOpen) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, pipeOnly;
  sigemptyset(&none);
  sigemptyset(&pipeOnly);
  sigaddset(&pipeOnly, SIGPIPE);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &pipeOnly);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> environment{std::string("WW_RECORDER_CHILD=") + which};
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  pid_t child = 0;
  const int spawned = posix_spawn(&child, "/proc/self/exe", &actions, &attributes, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return -1;
  }
  std::vector<char> buffer(4096);
  std::size_t got = 0;
  while (got < readBytes) {
    const ssize_t n = ::read(fds[0], buffer.data(), std::min(buffer.size(), readBytes - got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (!keepOpen) ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (keepOpen) ::close(fds[0]);
  return status;
}
}  // namespace

TEST(RecorderSink, AReaderThatGoesAwayNeverKillsTheJob) {
  const int status = runChildWritingToAPipe("reader-goes-away", 100, false);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RecorderSink, FdSinkOnAClosedPipeReturnsDroppedWithoutASignalOnTheCallingThread) {
  const int status = runChildWritingToAPipe("fd-sink-closed-pipe", 0, false);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(RecorderSink, AStalledReaderCannotHangClose) {
  const int status = runChildWritingToAPipe("stalled-reader", 0, true);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
