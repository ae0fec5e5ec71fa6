// Frame sinks and the writer thread: the part of the recorder that needs no CUDA, shared by
// recorder.hpp (GPU jobs) and the CPU lockstep backend.
//
// Rule (issue 3): a monitored job must never stall because of monitoring. So
//  * FrameWriter::submit never blocks: a full queue drops the frame and counts it;
//  * UnixSocketSink uses non-blocking connect/send: EAGAIN, a missing or refusing socket, or a
//    peer that went away drops the frame and counts it, and reconnects at most once a second;
//  * a frame is either written whole or not at all to a socket (a partially sent frame is
//    finished before the next one, so the byte stream stays parseable).
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace warpwatch {

/// Outcome of one Sink::send.
enum class SendResult { written, dropped };

/// Where encoded frames go. Implementations are used by one writer thread at a time.
class Sink {
 public:
  virtual ~Sink() = default;
  /// Writes one whole frame or drops it; never blocks for long.
  virtual SendResult send(const uint8_t* bytes, size_t size) = 0;
  /// Finishes buffered bytes, bounded in time (called once, at close).
  virtual void flush() {}
  /// Human-readable target, for messages.
  virtual std::string describe() const = 0;
};

/// Writes frames to a file descriptor with blocking writes (a file or stdout). A local file is
/// the user's explicit choice of a durable sink, so it is written completely.
class FdSink : public Sink {
 public:
  FdSink(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
  ~FdSink() override {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  /// Opens (truncates) `path` for writing. Throws std::runtime_error naming the path and errno text.
  static std::unique_ptr<FdSink> openFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot open frame file '" + path + "': " + std::strerror(errno));
    return std::make_unique<FdSink>(fd, true, "file " + path);
  }
  static std::unique_ptr<FdSink> standardOutput() { return std::make_unique<FdSink>(1, false, "stdout"); }

  SendResult send(const uint8_t* bytes, size_t size) override {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_, bytes + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return SendResult::dropped;  // e.g. EPIPE on a closed stdout, ENOSPC
      }
      done += static_cast<size_t>(n);
    }
    return SendResult::written;
  }
  std::string describe() const override { return name_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
};

/// Sends frames to a unix stream socket (the collector). Never blocks: see the file comment.
class UnixSocketSink : public Sink {
 public:
  explicit UnixSocketSink(std::string path, std::chrono::milliseconds reconnectInterval = std::chrono::milliseconds(1000))
      : path_(std::move(path)), reconnectInterval_(reconnectInterval) {
    if (path_.size() >= sizeof(sockaddr_un{}.sun_path)) {
      throw std::invalid_argument("unix socket path must be shorter than 108 bytes, got " + std::to_string(path_.size()));
    }
  }
  ~UnixSocketSink() override { disconnect(); }

  SendResult send(const uint8_t* bytes, size_t size) override {
    if (fd_ < 0 && !tryConnect()) return SendResult::dropped;
    if (!finishPending()) return SendResult::dropped;
    const ssize_t n = ::send(fd_, bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) disconnect();
      return SendResult::dropped;  // nothing of this frame went out
    }
    if (static_cast<size_t>(n) < size) pending_.assign(bytes + n, bytes + size);  // finished before the next frame
    return SendResult::written;
  }
  void flush() override {
    // Give a partially sent frame a short, bounded chance to complete (used at close).
    for (int attempt = 0; attempt < 50 && fd_ >= 0 && !pending_.empty(); ++attempt) {
      if (!finishPending()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::string describe() const override { return "unix socket " + path_; }
  bool connected() const { return fd_ >= 0; }

 private:
  bool tryConnect() {
    const auto now = std::chrono::steady_clock::now();
    if (attempted_ && now - lastAttempt_ < reconnectInterval_) return false;
    attempted_ = true;
    lastAttempt_ = now;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size());
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      // Unix-domain connects complete or fail immediately (EAGAIN = backlog full): drop either way.
      ::close(fd);
      return false;
    }
    fd_ = fd;
    pending_.clear();
    return true;
  }
  /// Sends what is left of a partially sent frame; true when nothing is left.
  bool finishPending() {
    while (!pending_.empty()) {
      const ssize_t n = ::send(fd_, pending_.data(), pending_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) disconnect();
        return false;
      }
      pending_.erase(pending_.begin(), pending_.begin() + n);
    }
    return true;
  }
  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    pending_.clear();  // a new connection starts at a frame boundary
  }

  std::string path_;
  std::chrono::milliseconds reconnectInterval_;
  int fd_ = -1;
  bool attempted_ = false;
  std::chrono::steady_clock::time_point lastAttempt_{};
  std::vector<uint8_t> pending_;
};

/// Discards every frame (a workload run without --out); counts them as written.
class NullSink : public Sink {
 public:
  SendResult send(const uint8_t*, size_t) override { return SendResult::written; }
  std::string describe() const override { return "no sink"; }
};

/// Opens the sink a workload flag names: "" = none, "-" = stdout, "unix:PATH" = unix socket, else a file path.
inline std::unique_ptr<Sink> openSink(const std::string& target) {
  if (target.empty()) return std::make_unique<NullSink>();
  if (target == "-") return FdSink::standardOutput();
  if (target.rfind("unix:", 0) == 0) return std::make_unique<UnixSocketSink>(target.substr(5));
  return FdSink::openFile(target);
}

/// Counters of a FrameWriter (all monotonic).
struct WriterStats {
  uint64_t submitted = 0;        ///< frames offered to submit()
  uint64_t written = 0;          ///< frames the sink accepted
  uint64_t droppedQueueFull = 0; ///< frames refused because the queue was full
  uint64_t droppedSink = 0;      ///< frames the sink dropped (gone, EAGAIN, write error)
  uint64_t bytesWritten = 0;
};

/// A bounded queue of encoded frames drained by one background thread into a Sink.
///
/// Example:
///   FrameWriter writer(openSink("frames.bin"), 256);
///   writer.submit(encodedFrame);   // never blocks; false = dropped and counted
///   writer.close();                // drains what is queued, joins the thread
class FrameWriter {
 public:
  FrameWriter(std::unique_ptr<Sink> sink, size_t queueCapacity)
      : sink_(std::move(sink)), capacity_(queueCapacity == 0 ? 1 : queueCapacity), thread_([this] { run(); }) {}
  ~FrameWriter() { close(); }
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  /// Queues one frame. Never blocks; returns false (and counts the drop) when the queue is full or closed.
  bool submit(std::vector<uint8_t> frame) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.submitted += 1;
    if (closed_ || queue_.size() >= capacity_) {
      stats_.droppedQueueFull += 1;
      return false;
    }
    queue_.push_back(std::move(frame));
    wake_.notify_one();
    return true;
  }
  /// Waits until the queue is empty and the last frame was handed to the sink, then flushes it.
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }
  /// Drains, stops the thread and flushes the sink. Idempotent.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return;
      closed_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    sink_->flush();
  }
  WriterStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  const Sink& sink() const { return *sink_; }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return closed_ || !queue_.empty(); });
      if (queue_.empty()) {
        if (closed_) return;
        continue;
      }
      std::vector<uint8_t> frame = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      const SendResult result = sink_->send(frame.data(), frame.size());
      lock.lock();
      busy_ = false;
      if (result == SendResult::written) {
        stats_.written += 1;
        stats_.bytesWritten += frame.size();
      } else {
        stats_.droppedSink += 1;
      }
      if (queue_.empty()) idle_.notify_all();
    }
  }
  std::unique_ptr<Sink> sink_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::vector<uint8_t>> queue_;
  bool closed_ = false;
  bool busy_ = false;
  WriterStats stats_;
  std::thread thread_;  // last: starts after every other member is constructed
};

}  // namespace warpwatch
