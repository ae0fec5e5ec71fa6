// warpwatch host recorder for CUDA jobs: allocates and clears the probe's device buffers,
// collects them after each launch without blocking the job's stream beyond one async copy,
// and writes frames through the shared sink/writer code (sink.hpp, launch-frames.hpp).
//
//   warpwatch::Recorder recorder({"frames.bin"});                 // or "unix:/run/warpwatch.sock", "-"
//   warpwatch::LaunchInfo info = recorder.launchInfo("my-job", "my-kernel", /*n*/ 32, groupCount, /*sync*/ true);
//   warpwatch::ProbeBuffers buffers = recorder.beginLaunch(stream, info);   // memsetAsync of the totals
//   kernel<<<blocks, 256, 0, stream>>>(..., buffers, true);
//   recorder.endLaunch(stream);          // memcpyAsync to pinned memory + cudaLaunchHostFunc
//   ...
//   recorder.close();                    // waits for pending launches, drains the writer
//
// Never stalls the job: each in-flight launch owns one of a few staging slots (pinned host +
// device buffers); when all are busy the launch is not recorded (counted in
// stats().launchesSkipped) and the kernel writes into a scratch buffer nobody reads. The host
// callback only hands the slot to an encoder thread; encoding and the sink run off the stream.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "launch-frames.hpp"
#include "launch-totals.hpp"
#include "probe.cuh"
#include "sink.hpp"

namespace warpwatch {

/// Throws std::runtime_error naming the call and CUDA's message when `status` is an error.
inline void checkCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

/// Options of a Recorder.
struct RecorderOptions {
  std::string sink;                     ///< "" none, "-" stdout, "unix:PATH" collector socket, else a file
  std::size_t queueCapacityFrames = 256;
  unsigned int sampleCapacity = 4096;   ///< sample slots per launch (device buffer)
  unsigned int stagingSlots = 4;        ///< launches in flight at once
};

/// Counters of a Recorder.
struct RecorderStats {
  std::uint64_t launchesRecorded = 0;
  std::uint64_t launchesSkipped = 0;   ///< no free staging slot: not recorded, job not delayed
  WriterStats writer;
};

class Recorder {
 public:
  explicit Recorder(RecorderOptions options) : options_(std::move(options)), frames_(openSink(options_.sink), options_.queueCapacityFrames) {
    checkCuda(cudaGetDevice(&device_), "cudaGetDevice");
    deviceInfo_ = queryDevice(device_);
    scratch_ = allocateSlot();
    for (unsigned i = 0; i < options_.stagingSlots; ++i) {
      slots_.push_back(allocateSlot());
      free_.push_back(slots_.back().get());
    }
    encoder_ = std::thread([this] { encodeLoop(); });
  }
  ~Recorder() {
    try {
      close();
    } catch (...) {
      // A destructor must not throw; close() reports errors to callers that call it.
    }
    for (auto& slot : slots_) releaseSlot(*slot);
    releaseSlot(*scratch_);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// The device of this recorder as frames describe it (name, uuid, compute capability, SM clock).
  const DeviceInfo& device() const { return deviceInfo_; }

  /// A LaunchInfo with this device, source cuda, a fresh launch id and the current time.
  LaunchInfo launchInfo(const std::string& job, const std::string& kernel, unsigned groupSize, std::uint64_t groupCount, bool sync,
                        std::uint32_t samplingStride = 64, Selection selection = Selection::Stride) {
    LaunchInfo info;
    info.job = job;
    info.kernel = kernel;
    info.source = Source::Cuda;
    info.groupSize = groupSize;
    info.sync = sync;
    info.device = deviceInfo_;
    info.launchId = splitmix64(unixNanosNow() ^ (nextLaunch_++ * 0x9E3779B97F4A7C15ull));
    info.groupCount = groupCount;
    info.selection = selection;
    info.samplingStride = samplingStride;
    info.startUnixNanos = unixNanosNow();
    return info;
  }

  /// Claims a staging slot for the next launch on `stream` and clears its device totals
  /// (cudaMemsetAsync on the stream). Never blocks: with no free slot it returns scratch buffers.
  ProbeBuffers beginLaunch(cudaStream_t stream, const LaunchInfo& info) {
    Slot* slot = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        slot = free_.front();
        free_.pop_front();
      } else {
        skipped_ += 1;
      }
    }
    Slot* target = slot ? slot : scratch_.get();
    checkCuda(cudaMemsetAsync(target->deviceTotals, 0, sizeof(LaunchTotals), stream), "cudaMemsetAsync(totals)");
    if (slot) slot->info = info;
    current_ = slot;
    ProbeBuffers buffers;
    buffers.totals = target->deviceTotals;
    buffers.samples = target->deviceSamples;
    buffers.sampleCapacity = options_.sampleCapacity;
    buffers.samplingStride = info.samplingStride;
    buffers.launchId = info.launchId;
    buffers.selection = info.selection;
    return buffers;
  }

  /// After the kernel launch on `stream`: async copies of totals and samples to pinned memory,
  /// then a host callback that hands the slot to the encoder thread. Returns immediately.
  void endLaunch(cudaStream_t stream) {
    Slot* slot = current_;
    current_ = nullptr;
    if (!slot) return;  // launch was skipped
    checkCuda(cudaMemcpyAsync(slot->hostTotals, slot->deviceTotals, sizeof(LaunchTotals), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(totals)");
    checkCuda(cudaMemcpyAsync(slot->hostSamples, slot->deviceSamples, sizeof(GroupSampleSlot) * options_.sampleCapacity, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync(samples)");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += 1;
    }
    slot->owner = this;
    checkCuda(cudaLaunchHostFunc(stream, &Recorder::onCopied, slot), "cudaLaunchHostFunc");
  }

  /// Waits until every ended launch is encoded and queued, then drains and closes the sink.
  void close() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (closed_) return;
      idle_.wait(lock, [this] { return pending_ == 0 && ready_.empty(); });
      closed_ = true;
      wake_.notify_all();
    }
    if (encoder_.joinable()) encoder_.join();
    frames_.close();
  }

  RecorderStats stats() const {
    RecorderStats s;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s.launchesRecorded = recorded_;
      s.launchesSkipped = skipped_;
    }
    s.writer = frames_.stats();
    return s;
  }

 private:
  struct Slot {
    LaunchTotals* deviceTotals = nullptr;
    GroupSampleSlot* deviceSamples = nullptr;
    LaunchTotals* hostTotals = nullptr;         // pinned
    GroupSampleSlot* hostSamples = nullptr;     // pinned
    LaunchInfo info;
    Recorder* owner = nullptr;
  };

  static DeviceInfo queryDevice(int device) {
    cudaDeviceProp properties{};
    checkCuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    DeviceInfo info;
    info.name = properties.name;
    if (info.name.size() > 255) info.name.resize(255);
    for (int i = 0; i < 16; ++i) info.uuid[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(properties.uuid.bytes[i]);
    info.computeCapabilityMajor = static_cast<std::uint8_t>(properties.major);
    info.computeCapabilityMinor = static_cast<std::uint8_t>(properties.minor);
    int clockKiloHertz = 0;
    checkCuda(cudaDeviceGetAttribute(&clockKiloHertz, cudaDevAttrClockRate, device), "cudaDeviceGetAttribute(clock rate)");
    info.clockHz = static_cast<std::uint64_t>(clockKiloHertz) * 1000ull;  // clock64() ticks at the SM clock
    return info;
  }

  std::unique_ptr<Slot> allocateSlot() const {
    auto slot = std::make_unique<Slot>();
    checkCuda(cudaMalloc(&slot->deviceTotals, sizeof(LaunchTotals)), "cudaMalloc(totals)");
    checkCuda(cudaMalloc(&slot->deviceSamples, sizeof(GroupSampleSlot) * (options_.sampleCapacity ? options_.sampleCapacity : 1)), "cudaMalloc(samples)");
    checkCuda(cudaMallocHost(&slot->hostTotals, sizeof(LaunchTotals)), "cudaMallocHost(totals)");
    checkCuda(cudaMallocHost(&slot->hostSamples, sizeof(GroupSampleSlot) * (options_.sampleCapacity ? options_.sampleCapacity : 1)), "cudaMallocHost(samples)");
    return slot;
  }
  static void releaseSlot(Slot& slot) {
    cudaFree(slot.deviceTotals);
    cudaFree(slot.deviceSamples);
    cudaFreeHost(slot.hostTotals);
    cudaFreeHost(slot.hostSamples);
  }

  /// Host callback (CUDA's thread; must not call CUDA): stamp the end time, hand over the slot.
  static void CUDART_CB onCopied(void* userData) {
    Slot* slot = static_cast<Slot*>(userData);
    Recorder* self = slot->owner;
    slot->info.endUnixNanos = unixNanosNow();
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->ready_.push_back(slot);
    self->pending_ -= 1;
    self->wake_.notify_all();
  }

  void encodeLoop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return closed_ || !ready_.empty(); });
      if (ready_.empty()) {
        if (closed_) return;
        continue;
      }
      Slot* slot = ready_.front();
      ready_.pop_front();
      lock.unlock();
      try {
        frames_.recordLaunch(slot->info, *slot->hostTotals, slot->hostSamples, options_.sampleCapacity);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "warpwatch recorder: launch not recorded: %s\n", error.what());
      }
      lock.lock();
      recorded_ += 1;
      free_.push_back(slot);
      if (ready_.empty() && pending_ == 0) idle_.notify_all();
    }
  }

  RecorderOptions options_;
  LaunchRecorder frames_;
  int device_ = 0;
  DeviceInfo deviceInfo_;
  std::unique_ptr<Slot> scratch_;
  std::vector<std::unique_ptr<Slot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Slot*> free_, ready_;
  Slot* current_ = nullptr;
  std::uint64_t pending_ = 0, recorded_ = 0, skipped_ = 0, nextLaunch_ = 0;
  bool closed_ = false;
  std::thread encoder_;
};

}  // namespace warpwatch
