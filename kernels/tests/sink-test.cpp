// Frame sinks and the writer thread: frames reach a file intact; a missing, gone or stalled
// unix-socket peer and a full queue drop frames and count them instead of blocking.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "warpwatch/distributions.hpp"
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/launch-frames.hpp"
#include "warpwatch/sink.hpp"

namespace ww = warpwatch;

namespace {
std::string tempPath(const std::string& name) {
  return "/tmp/ww-kernels-test-" + std::to_string(::getpid()) + "-" + name;
}

std::vector<std::uint8_t> frameOfSize(std::size_t size, std::uint8_t fill) { return std::vector<std::uint8_t>(size, fill); }

int listenUnix(const std::string& path) {
  ::unlink(path.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// A sink that blocks every send until released: stands in for a stalled disk.
class GateSink : public ww::Sink {
 public:
  ww::SendResult send(const std::uint8_t*, std::size_t) override {
    std::unique_lock<std::mutex> lock(mutex_);
    gate_.wait(lock, [this] { return open_; });
    return ww::SendResult::written;
  }
  std::string describe() const override { return "gate"; }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    gate_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable gate_;
  bool open_ = false;
};
}  // namespace

TEST(LaunchRecorder, FramesWrittenToAFileDecodeToTheLaunch) {
  const std::string path = tempPath("frames.bin");
  ww::Rng rng(1);
  ww::LaunchInfo info;
  info.job = "test-job";
  info.kernel = "matpow";
  info.groupSize = 8;
  info.launchId = 77;
  info.groupCount = 100;
  info.samplingStride = 10;
  ww::LaunchAccumulator acc(8, info.launchId, {ww::Selection::Stride, 10}, 5);
  for (std::uint64_t g = 0; g < 100; ++g) {
    ww::GroupMeasurement m;
    m.groupIndex = g;
    m.startClock = 100;
    m.endClock = 100 + 40 * 8;
    for (unsigned lane = 0; lane < 8; ++lane) {
      m.laneCounts[lane] = 1 + static_cast<std::uint32_t>(rng.next() % 40);
      m.laneFinishClocks[lane] = 100 + 8 * m.laneCounts[lane];
    }
    acc.addGroup(m);
  }
  {
    ww::LaunchRecorder recorder(ww::FdSink::openFile(path), 16);
    EXPECT_EQ(recorder.recordLaunch(info, acc.totals(), acc.samples().data(), acc.samples().size()), 2u);
    recorder.close();
    EXPECT_EQ(recorder.stats().written, 2u);
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<ww::Frame> frames = ww::decodeFrames(bytes.data(), bytes.size());
  ASSERT_EQ(frames.size(), 2u);
  const auto& summary = std::get<ww::LaunchSummary>(frames[0]);
  EXPECT_EQ(summary.identity.frameSequence, 0u);
  EXPECT_EQ(summary.groupsCounted, 100u);
  EXPECT_EQ(summary.sumCounts, acc.totals().sumCounts);
  EXPECT_DOUBLE_EQ(summary.sumCountsLoss, acc.totals().sumCountsLoss);
  EXPECT_EQ(summary.droppedSamples, 5u);  // 10 groups selected, 5 slots
  const auto& samples = std::get<ww::GroupSamples>(frames[1]);
  EXPECT_EQ(samples.identity.frameSequence, 1u);
  ASSERT_EQ(samples.groups.size(), 5u);
  EXPECT_EQ(samples.groups[1].groupIndex, 10u);
  EXPECT_EQ(samples.groups[1].laneCounts.size(), 8u);
  ::unlink(path.c_str());
}

TEST(UnixSocketSink, DropsAndCountsWhenNobodyListens) {
  ww::FrameWriter writer(std::make_unique<ww::UnixSocketSink>(tempPath("absent.sock")), 64);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(writer.submit(frameOfSize(100, 1)));
  writer.close();
  const ww::WriterStats stats = writer.stats();
  EXPECT_EQ(stats.submitted, 10u);
  EXPECT_EQ(stats.written, 0u);
  EXPECT_EQ(stats.droppedSink, 10u);
}

TEST(UnixSocketSink, DropsAndCountsWhenThePeerGoes) {
  const std::string path = tempPath("gone.sock");
  const int listener = listenUnix(path);
  ASSERT_GE(listener, 0);
  ww::UnixSocketSink sink(path);
  EXPECT_EQ(sink.send(frameOfSize(64, 2).data(), 64), ww::SendResult::written);
  const int peer = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(peer, 0);
  std::uint8_t received[64];
  EXPECT_EQ(::recv(peer, received, sizeof(received), MSG_WAITALL), 64);
  ::close(peer);
  ::close(listener);
  ::unlink(path.c_str());
  int dropped = 0;
  for (int i = 0; i < 5; ++i) dropped += sink.send(frameOfSize(64, 3).data(), 64) == ww::SendResult::dropped ? 1 : 0;
  EXPECT_EQ(dropped, 5);
  EXPECT_FALSE(sink.connected());
}

TEST(UnixSocketSink, DropsInsteadOfBlockingWhenThePeerStopsReading) {
  const std::string path = tempPath("stalled.sock");
  const int listener = listenUnix(path);
  ASSERT_GE(listener, 0);
  ww::UnixSocketSink sink(path);
  const std::vector<std::uint8_t> frame = frameOfSize(64 * 1024, 4);
  int written = 0, dropped = 0;
  // The peer never reads: the socket buffer fills (EAGAIN) and later frames are dropped.
  for (int i = 0; i < 200; ++i) (sink.send(frame.data(), frame.size()) == ww::SendResult::written ? written : dropped) += 1;
  EXPECT_GT(written, 0);
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(written + dropped, 200);
  ::close(listener);
  ::unlink(path.c_str());
}

TEST(FrameWriter, FullQueueDropsAndCountsWithoutBlocking) {
  auto gate = std::make_unique<GateSink>();
  GateSink* gatePointer = gate.get();
  ww::FrameWriter writer(std::move(gate), 4);
  int accepted = 0;
  for (int i = 0; i < 20; ++i) accepted += writer.submit(frameOfSize(10, 5)) ? 1 : 0;
  // The writer holds at most one frame in the sink plus 4 queued: at least 15 refused.
  EXPECT_LE(accepted, 5);
  EXPECT_GE(accepted, 4);
  EXPECT_EQ(writer.stats().droppedQueueFull, static_cast<std::uint64_t>(20 - accepted));
  gatePointer->open();
  writer.close();
  EXPECT_EQ(writer.stats().written, static_cast<std::uint64_t>(accepted));
}
