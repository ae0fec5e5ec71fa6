// FakeRuntime: a CPU implementation of RecorderRuntime (runtime.hpp) for tests and the CPU-path
// benchmark. "Device" memory is ordinary heap memory; each fake stream runs its operations in
// order on its own worker thread (as a GPU stream runs copies, kernels and host functions in
// order), so host functions run on another thread than the caller's, as with CUDA.
//
// Failure injection: failHostFunctions(k) / failClears(k) / failCopies(k) / failPrivateCopies(k)
// make the next k such calls fail (a local error); makeSticky() turns every later call into a
// sticky failure and drops what the streams have queued (host functions then never run, as in a
// CUDA context after a fault); pause(stream) holds a stream's queue until resume(stream).
// freeDevice waits for every stream, as cudaFree waits for the device.
//
// Example:
//   auto runtime = std::make_shared<warpwatch::FakeRuntime>();
//   warpwatch::StreamHandle stream = runtime->createStream();
//   runtime->enqueue(stream, [] { /* a "kernel" */ });
//   runtime->synchronize(stream);
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime.hpp"

namespace warpwatch {

class FakeRuntime : public RecorderRuntime {
 public:
  /// Starts with one stream, the default stream (StreamHandle nullptr).
  FakeRuntime() { defaultStream_ = std::make_unique<Stream>(); }
  ~FakeRuntime() override {
    for (auto& stream : streams_) stream->stop();
    defaultStream_->stop();
  }
  FakeRuntime(const FakeRuntime&) = delete;
  FakeRuntime& operator=(const FakeRuntime&) = delete;

  /// A new stream with its own worker thread; lives as long as the runtime.
  StreamHandle createStream() {
    std::lock_guard<std::mutex> lock(streamsMutex_);
    streams_.push_back(std::make_unique<Stream>());
    return streams_.back().get();
  }

  /// Enqueues `operation` (a fake kernel) on `stream`; false when the runtime is sticky.
  bool enqueue(StreamHandle stream, std::function<void()> operation) {
    if (sticky_) return false;
    return streamOf(stream).push(std::move(operation));
  }
  /// Waits until everything enqueued on `stream` so far has run (or was dropped by makeSticky).
  void synchronize(StreamHandle stream) { streamOf(stream).drain(); }
  /// Holds / releases a stream's queue (operations wait, in order).
  void pause(StreamHandle stream) { streamOf(stream).setPaused(true); }
  void resume(StreamHandle stream) { streamOf(stream).setPaused(false); }

  void failHostFunctions(int count) { failHostFunctions_ = count; }
  void failClears(int count) { failClears_ = count; }
  void failCopies(int count) { failCopies_ = count; }
  void failPrivateCopies(int count) { failPrivateCopies_ = count; }
  /// Every later call fails with a sticky error; queued operations are dropped, never run.
  void makeSticky() {
    sticky_ = true;
    std::lock_guard<std::mutex> lock(streamsMutex_);
    defaultStream_->dropAll();
    for (auto& stream : streams_) stream->dropAll();
  }

  /// Device + host allocations not freed yet.
  long liveAllocations() const { return liveAllocations_; }
  /// Host functions run so far.
  long hostFunctionsRun() const { return hostFunctionsRun_; }
  /// Bytes moved by copyToHostPrivate so far (the recorder's copies of claimed samples).
  std::size_t privateBytesCopied() const { return privateBytesCopied_; }

  void* allocateDevice(std::size_t bytes, RuntimeStatus& status) noexcept override { return allocate(bytes, status); }
  void* allocateHost(std::size_t bytes, RuntimeStatus& status) noexcept override { return allocate(bytes, status); }
  /// Waits for every stream first, as cudaFree waits for the device (a kernel still queued may
  /// write the memory); so it must not be called while a stream is paused.
  void freeDevice(void* pointer) noexcept override {
    if (pointer == nullptr) return;
    synchronizeAll();
    release(pointer);
  }
  void freeHost(void* pointer) noexcept override { release(pointer); }

  RuntimeStatus clearAsync(void* device, std::size_t bytes, StreamHandle stream) noexcept override {
    if (RuntimeStatus s = injected(failClears_, "clearAsync"); !s.ok) return s;
    return pushOrFail(stream, [device, bytes] { std::memset(device, 0, bytes); }, "clearAsync");
  }
  RuntimeStatus copyToHostAsync(void* host, const void* device, std::size_t bytes, StreamHandle stream) noexcept override {
    if (RuntimeStatus s = injected(failCopies_, "copyToHostAsync"); !s.ok) return s;
    return pushOrFail(stream, [host, device, bytes] { std::memcpy(host, device, bytes); }, "copyToHostAsync");
  }
  RuntimeStatus launchHostFunction(StreamHandle stream, HostFunction function, void* userData) noexcept override {
    if (RuntimeStatus s = injected(failHostFunctions_, "launchHostFunction"); !s.ok) return s;
    return pushOrFail(stream, [this, function, userData] {
      function(userData);
      hostFunctionsRun_ += 1;
    }, "launchHostFunction");
  }
  RuntimeStatus copyToHostPrivate(void* host, const void* device, std::size_t bytes) noexcept override {
    if (RuntimeStatus s = injected(failPrivateCopies_, "copyToHostPrivate"); !s.ok) return s;
    std::memcpy(host, device, bytes);
    privateBytesCopied_ += bytes;
    return RuntimeStatus::success();
  }

 private:
  /// One fake stream: a FIFO of operations run by a worker thread.
  class Stream {
   public:
    Stream() : thread_([this] { run(); }) {}
    ~Stream() { stop(); }
    bool push(std::function<void()> operation) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return false;
      queue_.push_back(std::move(operation));
      wake_.notify_all();
      return true;
    }
    void drain() {
      std::unique_lock<std::mutex> lock(mutex_);
      idle_.wait(lock, [this] { return (queue_.empty() && !busy_) || stopping_; });
    }
    void setPaused(bool paused) {
      std::lock_guard<std::mutex> lock(mutex_);
      paused_ = paused;
      wake_.notify_all();
    }
    void dropAll() {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.clear();
      idle_.notify_all();
    }
    void stop() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        queue_.clear();
        wake_.notify_all();
        idle_.notify_all();
      }
      if (thread_.joinable()) thread_.join();
    }

   private:
    void run() {
      std::unique_lock<std::mutex> lock(mutex_);
      for (;;) {
        wake_.wait(lock, [this] { return stopping_ || (!paused_ && !queue_.empty()); });
        if (stopping_) return;
        std::function<void()> operation = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        operation();
        lock.lock();
        busy_ = false;
        if (queue_.empty()) idle_.notify_all();
      }
    }
    std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<std::function<void()>> queue_;
    bool paused_ = false, busy_ = false, stopping_ = false;
    std::thread thread_;  // last: starts after the members above exist
  };

  void synchronizeAll() noexcept {
    defaultStream_->drain();
    std::vector<Stream*> streams;
    {
      std::lock_guard<std::mutex> lock(streamsMutex_);
      for (auto& stream : streams_) streams.push_back(stream.get());
    }
    for (Stream* stream : streams) stream->drain();
  }

    Stream& streamOf(StreamHandle handle) { return handle == nullptr ? *defaultStream_ : *static_cast<Stream*>(handle); }

  RuntimeStatus injected(std::atomic<int>& counter, const char* what) noexcept {
    if (sticky_) return RuntimeStatus::failure(std::string(what) + ": injected sticky error", true);
    int left = counter.load();
    while (left > 0) {
      if (counter.compare_exchange_weak(left, left - 1)) return RuntimeStatus::failure(std::string(what) + ": injected failure", false);
    }
    return RuntimeStatus::success();
  }
  RuntimeStatus pushOrFail(StreamHandle stream, std::function<void()> operation, const char* what) noexcept {
    try {
      if (streamOf(stream).push(std::move(operation))) return RuntimeStatus::success();
      return RuntimeStatus::failure(std::string(what) + ": stream stopped", true);
    } catch (...) {
      return RuntimeStatus::failure(std::string(what) + ": out of memory", false);
    }
  }
  void* allocate(std::size_t bytes, RuntimeStatus& status) noexcept {
    if (sticky_) {
      status = RuntimeStatus::failure("allocate: injected sticky error", true);
      return nullptr;
    }
    void* pointer = std::calloc(1, bytes == 0 ? 1 : bytes);
    if (pointer == nullptr) {
      status = RuntimeStatus::failure("allocate: out of memory", false);
      return nullptr;
    }
    liveAllocations_ += 1;
    return pointer;
  }
  void release(void* pointer) noexcept {
    if (pointer == nullptr) return;
    std::free(pointer);
    liveAllocations_ -= 1;
  }

  std::mutex streamsMutex_;
  std::unique_ptr<Stream> defaultStream_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::atomic<int> failHostFunctions_{0}, failClears_{0}, failCopies_{0}, failPrivateCopies_{0};
  std::atomic<bool> sticky_{false};
  std::atomic<long> liveAllocations_{0}, hostFunctionsRun_{0};
  std::atomic<std::size_t> privateBytesCopied_{0};
};

}  // namespace warpwatch
