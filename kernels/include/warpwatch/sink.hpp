// Frame sinks and the writer thread: the part of the recorder that needs no CUDA, shared by
// recorder.hpp (GPU jobs) and the CPU lockstep backend.
//
// Rule: a monitored job must never stall because of monitoring. So
//  * FrameWriter::submit never blocks: a full queue drops the frame and counts it;
//  * UnixSocketSink uses non-blocking connect/send: EAGAIN, a missing or refusing socket, or a
//    peer that went away drops the frame and counts it, and reconnects at most once a second;
//  * a frame is either written whole or not at all to a socket (a partially sent frame is
//    finished before the next one, so the byte stream stays parseable);
//  * no signal reaches the job: sockets are written with MSG_NOSIGNAL, and fd writes (stdout,
//    a pipe) run with SIGPIPE blocked in the writing thread, the raised SIGPIPE consumed;
//  * FrameWriter::close(timeout) returns in bounded time even when the sink is blocked.
#pragma once

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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

/// Blocks SIGPIPE for the calling thread (the writer thread calls it first thing). With SIGPIPE
/// blocked, a write to a pipe or socket whose reader is gone fails with EPIPE and the signal
/// stays pending on this thread instead of killing the process; FdSink then discards it.
inline void blockSigpipeInThisThread() noexcept {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

/// RAII: SIGPIPE blocked for this thread while it lives; on EPIPE, consumePending() takes the
/// SIGPIPE that the failed write raised (thread-directed, so it is pending on this thread)
/// before the old mask comes back, so it is never delivered to the job.
class SigpipeBlock {
 public:
  SigpipeBlock() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &previous_);
  }
  ~SigpipeBlock() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;
  /// Discards a pending SIGPIPE (call after a write failed with EPIPE).
  static void consumePending() noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    const timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
    }
  }

 private:
  sigset_t previous_;
};

/// Writes frames to a file descriptor with blocking writes (a file or stdout). A local file is
/// the user's explicit choice of a durable sink, so it is written completely.
///
/// Signals: write() on a pipe or socket whose reader is gone raises SIGPIPE, which kills the
/// process by default (MSG_NOSIGNAL exists only for send() on sockets). So each write runs with
/// SIGPIPE blocked for the writing thread (SigpipeBlock) and a SIGPIPE it raised is consumed:
/// the write returns EPIPE, the frame is dropped, and this sink drops every later frame without
/// writing (the reader does not come back).
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
    if (broken_) return SendResult::dropped;
    SigpipeBlock block;
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_, bytes + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) {
          SigpipeBlock::consumePending();
          broken_ = true;  // the reader is gone for good
        }
        // A frame cut short stays cut: the reader's splitter skips to the next magic.
        return SendResult::dropped;  // EPIPE (reader gone), ENOSPC, EIO, ...
      }
      done += static_cast<size_t>(n);
    }
    return SendResult::written;
  }
  std::string describe() const override { return name_; }
  /// Whether a write failed with EPIPE (reader gone); later frames are dropped unwritten.
  bool broken() const { return broken_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  bool broken_ = false;
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
  uint64_t droppedQueueFull = 0; ///< frames refused because the queue was full (or the writer closed)
  uint64_t droppedSink = 0;      ///< frames the sink dropped (gone, EAGAIN, write error)
  uint64_t droppedAtClose = 0;   ///< frames still queued when close(timeout) gave up waiting
  uint64_t bytesWritten = 0;
};

/// A bounded queue of encoded frames drained by one background thread into a Sink.
///
/// The writer thread blocks SIGPIPE for itself (see blockSigpipeInThisThread), so a reader that
/// goes away (stdout piped into a collector that exits, a socket peer that closes) can never
/// kill the process: the write fails with EPIPE, the frame is counted as dropped.
///
/// Example:
///   FrameWriter writer(openSink("frames.bin"), 256);
///   writer.submit(encodedFrame);   // never blocks; false = dropped and counted
///   writer.close(std::chrono::seconds(5));  // drains what is queued, at most 5 s
class FrameWriter {
 public:
  FrameWriter(std::unique_ptr<Sink> sink, size_t queueCapacity) : state_(std::make_shared<State>(std::move(sink), queueCapacity)) {
    thread_ = std::thread([state = state_] { run(*state); });
  }
  ~FrameWriter() { close(); }
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  /// Queues one frame. Never blocks; returns false (and counts the drop) when the queue is full or closed.
  bool submit(std::vector<uint8_t> frame) {
    State& s = *state_;
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stats.submitted += 1;
    if (s.closed || s.queue.size() >= s.capacity) {
      s.stats.droppedQueueFull += 1;
      return false;
    }
    s.queue.push_back(std::move(frame));
    s.wake.notify_one();
    return true;
  }
  /// Waits until the queue is empty and the last frame was handed to the sink.
  void drain() {
    State& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    s.idle.wait(lock, [&s] { return (s.queue.empty() && !s.busy) || s.finished; });
  }
  /// Drains, stops the thread and flushes the sink, waiting as long as that takes (a file sink:
  /// every frame is written). Idempotent.
  void close() { closeWithin(nullptr); }
  /// As close(), but returns after at most about `timeout`: when the sink is still blocked (a
  /// stdout pipe whose reader stopped reading), the thread is left to finish on its own (it owns
  /// the sink and the queue, so nothing dangles) and the frames still queued are counted in
  /// stats().droppedAtClose. Returns true when everything queued reached the sink.
  bool close(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    return closeWithin(&deadline);
  }
  WriterStats stats() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->stats;
  }
  const Sink& sink() const { return *state_->sink; }

 private:
  struct State {
    State(std::unique_ptr<Sink> s, size_t queueCapacity) : sink(std::move(s)), capacity(queueCapacity == 0 ? 1 : queueCapacity) {}
    std::unique_ptr<Sink> sink;
    size_t capacity;
    mutable std::mutex mutex;
    std::condition_variable wake, idle;
    std::deque<std::vector<uint8_t>> queue;
    bool closed = false, busy = false, finished = false;
    WriterStats stats;
  };

  bool closeWithin(const std::chrono::steady_clock::time_point* deadline) {
    State& s = *state_;
    if (!thread_.joinable()) {  // closed before: joined (finished) or left behind by a timeout
      std::lock_guard<std::mutex> lock(s.mutex);
      return s.finished;
    }
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      if (!s.closed) {
        s.closed = true;
        s.wake.notify_one();
      }
      const auto done = [&s] { return s.finished; };
      if (deadline == nullptr) {
        s.idle.wait(lock, done);
      } else if (!s.idle.wait_until(lock, *deadline, done)) {
        s.stats.droppedAtClose += s.queue.size();
        s.queue.clear();  // the thread finishes the frame it is sending, then exits
        lock.unlock();
        if (thread_.joinable()) thread_.detach();
        return false;
      }
    }
    if (thread_.joinable()) thread_.join();
    return true;
  }

  static void run(State& s) {
    blockSigpipeInThisThread();
    pthread_setname_np(pthread_self(), "ww-writer");  // visible in top -H, /proc/PID/task/*/comm
    std::unique_lock<std::mutex> lock(s.mutex);
    for (;;) {
      s.wake.wait(lock, [&s] { return s.closed || !s.queue.empty(); });
      if (s.queue.empty()) break;  // closed and drained
      std::vector<uint8_t> frame = std::move(s.queue.front());
      s.queue.pop_front();
      s.busy = true;
      lock.unlock();
      const SendResult result = s.sink->send(frame.data(), frame.size());
      lock.lock();
      s.busy = false;
      if (result == SendResult::written) {
        s.stats.written += 1;
        s.stats.bytesWritten += frame.size();
      } else {
        s.stats.droppedSink += 1;
      }
      if (s.queue.empty()) s.idle.notify_all();
    }
    lock.unlock();
    s.sink->flush();
    lock.lock();
    s.finished = true;
    s.idle.notify_all();
  }

  std::shared_ptr<State> state_;  // shared with the thread: a thread left behind by close(timeout) keeps it alive
  std::thread thread_;
};

}  // namespace warpwatch
