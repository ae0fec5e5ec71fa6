// The recorder's host logic, independent of CUDA: staging slots, launch tickets, launch
// sampling, the encoder thread and the failure handling. It talks to the GPU only through
// RecorderRuntime (runtime.hpp), so it builds with any C++17 compiler and is tested on the CPU
// with FakeRuntime (fake-runtime.hpp). CUDA jobs use warpwatch::Recorder (recorder.hpp), which
// is this class with the CUDA runtime.
//
// Guarantees (docs/kernels.md "The recorder inside a production job"):
//  * Never stalls the job: beginLaunch/endLaunch only enqueue work (a clear of the totals, one
//    small copy, one host function) and never wait; with every staging slot in flight a launch is
//    not recorded (counted) and the kernel writes into scratch buffers nobody reads.
//  * Never throws after construction, never raises a signal (sink.hpp), never hangs: close(timeout)
//    returns in bounded time and says how many launches could not be recorded.
//  * Thread-safe: any number of host threads and streams may interleave beginLaunch/endLaunch;
//    each launch's ticket names its slot, so tickets can end in any order.
//  * A failed runtime call frees the launch's slot; a sticky error (a faulted context) disables
//    the recorder, reported once on stderr.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "launch-frames.hpp"
#include "launch-totals.hpp"
#include "runtime.hpp"
#include "sink.hpp"

namespace warpwatch {

/// Options of a recorder.
struct RecorderOptions {
  std::string sink;                     ///< "" none, "-" stdout, "unix:PATH" collector socket, else a file
  std::size_t queueCapacityFrames = 256;
  unsigned int sampleCapacity = 4096;   ///< sample slots per launch (device buffer), 1..2^31
  unsigned int stagingSlots = 4;        ///< launches in flight at once, >= 1
  /// Launch sampling: record one launch in this many of each kernel (job + kernel name), the
  /// first, the (K+1)-th, ...; 1 = every launch.
  std::uint32_t launchSampleEvery = 1;
  /// Launch budget: at most this many recorded launches per second of each kernel (a token
  /// bucket holding up to one second's worth); 0 = no budget. Applies after launchSampleEvery.
  double maxLaunchesPerSecond = 0;
  /// Aggregation: successive launches of one kernel (job, kernel, n, sync) on one stream add into
  /// the same device totals for this long and are written as one LaunchSummary (sums over every
  /// group of every launch; groupCount = their total); samples come from the first launch only.
  /// Host cost per aggregated launch: no runtime call and no frame. 0 = off (one frame per launch).
  std::chrono::milliseconds aggregateInterval{0};
  /// How long close() and the destructor wait for launches in flight and the sink.
  std::chrono::milliseconds closeTimeout{10000};
};

/// Counters of a recorder (monotonic). Every launch begun is counted in one of recorded,
/// sampledOut, skipped, failed, abandoned, disabled, notRecordedAtClose (a launch still in flight
/// when close gave up; if its ticket ends after close it is also counted in disabled).
struct RecorderStats {
  std::uint64_t launchesBegun = 0;        ///< beginLaunch calls
  std::uint64_t launchesRecorded = 0;     ///< launches whose data went into frames queued for the sink (aggregated ones included)
  std::uint64_t launchesAggregated = 0;   ///< of those, launches added into an earlier launch's frame (aggregateInterval)
  std::uint64_t launchesSampledOut = 0;   ///< not recorded by launch sampling (launchSampleEvery, maxLaunchesPerSecond)
  std::uint64_t launchesSkipped = 0;      ///< no free staging slot: not recorded, job not delayed
  std::uint64_t launchesFailed = 0;       ///< a runtime call failed (non-sticky): not recorded, slot freed
  std::uint64_t launchesAbandoned = 0;    ///< ticket destroyed without endLaunch
  std::uint64_t launchesDisabled = 0;     ///< begun after a sticky error disabled the recorder, or after close
  std::uint64_t launchesNotRecordedAtClose = 0;  ///< still in flight when close(timeout) gave up
  bool disabled = false;                  ///< a sticky runtime error stopped recording
  WriterStats writer;
};

/// What close(timeout) achieved.
struct CloseResult {
  bool complete = true;                   ///< every launch ended before close was recorded and every queued frame reached the sink
  std::uint64_t launchesNotRecorded = 0;  ///< launches in flight (ended, not yet encoded) when the wait ran out or the context died
  std::uint64_t framesNotWritten = 0;     ///< frames still queued for the sink when the wait ran out
};

/// The device and frame source a recorder describes in its frames.
struct RecorderDevice {
  DeviceInfo info;
  Source source = Source::Cuda;
};

namespace detail {
class RecorderCore;

/// Pinned host + device buffers of one launch in flight.
struct StagingSlot {
  LaunchTotals* deviceTotals = nullptr;
  GroupSampleSlot* deviceSamples = nullptr;
  LaunchTotals* hostTotals = nullptr;
  GroupSampleSlot* hostSamples = nullptr;
  LaunchInfo info;
  RecorderCore* core = nullptr;
  bool abandoned = false;  ///< the ticket died without endLaunch: the host function only frees the slot
  std::uint64_t launches = 0;     ///< launches in this slot (> 1 when aggregated)
  // Aggregation (under the core's mutex): open while in RecorderCore::open_.
  bool aggregating = false;
  unsigned openTickets = 0;       ///< member tickets not ended yet
  std::string aggregateKey;
  std::chrono::steady_clock::time_point openedAt{};
  StreamHandle stream = nullptr;  ///< the stream of the launch(es)
};
}  // namespace detail

/// One launch's claim on the recorder, from beginLaunch to endLaunch (which consumes it).
/// Move-only. Pass buffers() to the kernel. A ticket destroyed without endLaunch gives its slot
/// back once the stream reaches that point (counted as abandoned). A ticket whose launch is not
/// recorded (sampled out, no free slot, disabled) holds scratch buffers with sampling off.
class LaunchTicket {
 public:
  LaunchTicket() = default;
  LaunchTicket(LaunchTicket&& other) noexcept { *this = std::move(other); }
  LaunchTicket& operator=(LaunchTicket&& other) noexcept;
  LaunchTicket(const LaunchTicket&) = delete;
  LaunchTicket& operator=(const LaunchTicket&) = delete;
  ~LaunchTicket();

  /// The probe's buffers for this launch (by value into the kernel).
  const ProbeBuffers& buffers() const { return buffers_; }
  /// Whether this launch holds a staging slot (will be recorded unless a later call fails).
  bool recording() const { return slot_ != nullptr; }

 private:
  friend class BasicRecorder;
  friend class detail::RecorderCore;
  std::shared_ptr<detail::RecorderCore> core_;
  detail::StagingSlot* slot_ = nullptr;
  StreamHandle stream_ = nullptr;
  ProbeBuffers buffers_;
};

namespace detail {

inline std::vector<std::shared_ptr<RecorderCore>>& abandonedCores();
inline std::mutex& abandonedCoresMutex();

/// The shared state. Held by the recorder and by each live ticket; kept alive forever (in
/// abandonedCores()) when the recorder dies while the runtime may still call its host function.
class RecorderCore {
 public:
  RecorderCore(const RecorderOptions& options, std::shared_ptr<RecorderRuntime> runtime)
      : options_(options), runtime_(std::move(runtime)), frames_(openSink(options.sink), options.queueCapacityFrames) {
    if (options_.sampleCapacity == 0 || options_.sampleCapacity > (1u << 31)) throw std::invalid_argument("RecorderOptions.sampleCapacity must be 1..2^31");
    if (options_.stagingSlots == 0) throw std::invalid_argument("RecorderOptions.stagingSlots must be at least 1");
    if (options_.launchSampleEvery == 0) throw std::invalid_argument("RecorderOptions.launchSampleEvery must be at least 1");
    if (!(options_.maxLaunchesPerSecond >= 0)) throw std::invalid_argument("RecorderOptions.maxLaunchesPerSecond must be >= 0");
    try {
      scratch_ = allocateSlot();
      for (unsigned i = 0; i < options_.stagingSlots; ++i) {
        slots_.push_back(allocateSlot());
        free_.push_back(slots_.back().get());
      }
    } catch (...) {
      releaseAll();
      throw;
    }
  }
  ~RecorderCore() { releaseAll(); }
  RecorderCore(const RecorderCore&) = delete;
  RecorderCore& operator=(const RecorderCore&) = delete;

  void start(std::shared_ptr<RecorderCore> self) {
    encoder_ = std::thread([self] { self->encodeLoop(); });
  }

  LaunchTicket begin(const std::shared_ptr<RecorderCore>& self, StreamHandle stream, const LaunchInfo& info) noexcept {
    LaunchTicket ticket;
    ticket.buffers_ = scratchBuffers(info);
    StagingSlot* slot = nullptr;
    std::string aggregateKey;
    KernelRate* rate = nullptr;
    std::uint64_t carriedGroups = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.launchesBegun += 1;
      if (disabled_ || closed_) {
        stats_.launchesDisabled += 1;
        return ticket;
      }
      bool selected = false;
      try {
        selected = selectLaunch(info, rate);
      } catch (...) {
        selected = false;  // out of memory for the kernel's rate entry: not recorded
      }
      if (!selected) {
        stats_.launchesSampledOut += 1;
        return ticket;
      }
      if (rate != nullptr) {
        carriedGroups = rate->skippedGroups;  // the groups this launch's summary stands for besides its own
        rate->skippedGroups = 0;
      }
      if (options_.aggregateInterval.count() > 0) {
        try {
          aggregateKey = makeAggregateKey(info, stream);
        } catch (...) {
          aggregateKey.clear();  // out of memory: this launch gets its own frame
        }
        const auto open = aggregateKey.empty() ? open_.end() : open_.find(aggregateKey);
        if (open != open_.end()) {
          StagingSlot* member = open->second;
          member->openTickets += 1;
          member->launches += 1;
          if (member->info.samplesGroupCount == 0) member->info.samplesGroupCount = member->info.groupCount;  // the samples' launch
          member->info.groupCount += info.groupCount + carriedGroups;
          ticket.core_ = self;
          ticket.slot_ = member;
          ticket.stream_ = stream;
          ticket.buffers_.totals = member->deviceTotals;
          ticket.buffers_.samples = member->deviceSamples;  // samplingStride stays 0: samples only from the first launch
          return ticket;
        }
      }
      if (free_.empty()) {
        stats_.launchesSkipped += 1;
        if (rate != nullptr) rate->skippedGroups += carriedGroups + info.groupCount;  // the next summary carries them
        return ticket;
      }
      slot = free_.front();
      free_.pop_front();
    }
    try {
      slot->info = info;  // strings: may allocate
    } catch (...) {
      giveBack(slot, RuntimeStatus::failure("copying the launch info: out of memory", false), "beginLaunch");
      return ticket;
    }
    // Thin the sampling rate when this launch's sampled groups would not fit the sample buffer
    // (first come would be kept otherwise: a biased sample); the frame records the stride used.
    slot->info.samplingStride = fitSamplingStride(info.selection, info.samplingStride, info.groupCount, options_.sampleCapacity, info.groupsPerBlock);
    if (carriedGroups > 0) {
      slot->info.samplesGroupCount = info.groupCount;
      slot->info.groupCount += carriedGroups;
    }
    slot->abandoned = false;
    slot->stream = stream;
    slot->launches = 1;
    slot->aggregating = false;
    slot->openTickets = 1;
    const RuntimeStatus cleared = runtime_->clearAsync(slot->deviceTotals, sizeof(LaunchTotals), stream);
    if (!cleared.ok) {
      giveBack(slot, cleared, "beginLaunch: clearing the launch totals");
      return ticket;
    }
    if (!aggregateKey.empty()) {
      // Open an aggregate (unless another thread opened one for the key meanwhile: then this
      // launch keeps its own slot and frame).
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        if (open_.emplace(aggregateKey, slot).second) {
          slot->aggregating = true;
          slot->aggregateKey = std::move(aggregateKey);
          slot->openedAt = std::chrono::steady_clock::now();
        }
      } catch (...) {
        slot->aggregating = false;
      }
    }
    ticket.core_ = self;
    ticket.slot_ = slot;
    ticket.stream_ = stream;
    ticket.buffers_.totals = slot->deviceTotals;
    ticket.buffers_.samples = slot->deviceSamples;
    ticket.buffers_.sampleCapacity = options_.sampleCapacity;
    ticket.buffers_.samplingStride = slot->info.samplingStride;
    return ticket;
  }

  void end(LaunchTicket& ticket) noexcept {
    StagingSlot* slot = ticket.slot_;
    const StreamHandle stream = ticket.stream_;
    ticket.slot_ = nullptr;
    if (slot == nullptr) return;
    if (parkIfClosed(ticket.core_, "launchesDisabled")) return;
    ticket.core_.reset();
    if (!leaveAggregate(slot, false)) return;  // the aggregate stays open: nothing to enqueue yet
    flush(slot, stream);
  }

  /// Enqueues the copy of the totals and the host function of a slot whose launches are all enqueued.
  void flush(StagingSlot* slot, StreamHandle stream) noexcept {
    const RuntimeStatus copied = runtime_->copyToHostAsync(slot->hostTotals, slot->deviceTotals, sizeof(LaunchTotals), stream);
    if (!copied.ok) {
      giveBack(slot, copied, "endLaunch: copying the launch totals");
      return;
    }
    enqueueHostFunction(slot, stream, "endLaunch: enqueueing the host function");
  }

  /// A ticket destroyed without endLaunch: its slot comes back once the stream passes this point.
  void abandon(LaunchTicket& ticket) noexcept {
    StagingSlot* slot = ticket.slot_;
    ticket.slot_ = nullptr;
    if (slot == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.launchesAbandoned += 1;
    }
    if (parkIfClosed(ticket.core_, nullptr)) return;
    bool member = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      member = slot->launches > 1;
      if (member) slot->launches -= 1;  // counted as abandoned, not recorded
    }
    if (member) {
      // A member of an aggregate: the other launches are still worth their frame.
      if (leaveAggregate(slot, false)) flush(slot, ticket.stream_);
      return;
    }
    leaveAggregate(slot, true);
    slot->abandoned = true;
    enqueueHostFunction(slot, ticket.stream_, "abandoned ticket: enqueueing the host function");
  }

  /// A ticket of `slot` ends: true when the slot is to be flushed now (not aggregating, or the
  /// last open ticket of an aggregate whose interval has passed, or `force`); then it is closed
  /// to new members.
  bool leaveAggregate(StagingSlot* slot, bool force) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    slot->openTickets -= 1;
    if (!slot->aggregating) return true;
    const bool due = force || closed_ || std::chrono::steady_clock::now() - slot->openedAt >= options_.aggregateInterval;
    if (slot->openTickets > 0 || !due) return false;
    open_.erase(slot->aggregateKey);
    slot->aggregating = false;
    return true;
  }

  CloseResult close(std::chrono::milliseconds timeout) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mutex_);
    if (closing_) {  // closed, or being closed by another thread: its result
      idle_.wait(lock, [this] { return closeDone_; });
      return closeResult_;
    }
    closing_ = true;
    // Open aggregates whose tickets have all ended: write them now (their stream order is kept).
    std::vector<std::pair<StagingSlot*, StreamHandle>> toFlush;
    try {
      toFlush.reserve(open_.size());
      for (auto it = open_.begin(); it != open_.end();) {
        StagingSlot* slot = it->second;
        if (slot->openTickets == 0) {
          slot->aggregating = false;
          toFlush.emplace_back(slot, slot->stream);
          it = open_.erase(it);
        } else {
          ++it;
        }
      }
    } catch (...) {
      // out of memory: the aggregates left in open_ are counted as not recorded below
    }
    lock.unlock();
    for (const auto& [slot, stream] : toFlush) flush(slot, stream);
    lock.lock();
    // Host functions queued before a sticky error never run: do not wait for them.
    idle_.wait_until(lock, deadline, [this] { return disabled_ || (pending_ == 0 && ready_.empty() && !encoding_); });
    closed_ = true;
    wake_.notify_all();
    const bool encoderDone = idle_.wait_until(lock, deadline, [this] { return encoderFinished_; });
    CloseResult result;
    result.launchesNotRecorded = pendingLaunches_ + encodingLaunches_;
    for (const StagingSlot* slot : ready_) result.launchesNotRecorded += slot->launches;
    for (const auto& entry : open_) result.launchesNotRecorded += entry.second->launches;  // tickets still open
    stats_.launchesNotRecordedAtClose = result.launchesNotRecorded;
    const bool wasDisabled = disabled_;
    lock.unlock();
    if (encoder_.joinable()) {
      if (encoderDone) {
        encoder_.join();
      } else {
        encoder_.detach();  // stuck in a runtime call; it holds the core, which stays alive
      }
    }
    const auto left = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    const bool drained = frames_.close(left);
    result.framesNotWritten = frames_.stats().droppedAtClose;
    result.complete = result.launchesNotRecorded == 0 && drained;
    if (!result.complete) {
      std::fprintf(stderr,
                   "warpwatch recorder: WW_ERR_KERNELS_RECORDER_CLOSE_INCOMPLETE: closing after %lld ms left %llu launch(es) not recorded and %llu frame(s) not "
                   "written%s\n",
                   static_cast<long long>(timeout.count()), static_cast<unsigned long long>(result.launchesNotRecorded),
                   static_cast<unsigned long long>(result.framesNotWritten), wasDisabled ? " (the recorder was disabled by a sticky error)" : "");
    }
    lock.lock();
    closeResult_ = result;
    closeDone_ = true;
    idle_.notify_all();
    return result;
  }

  /// True when the runtime may still call into this core (a host function not run yet, or the
  /// encoder thread left behind): then the core must outlive its recorder.
  bool stillReferencedByRuntime() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_ > 0 || !encoderFinished_;
  }

  RecorderStats stats() const {
    RecorderStats s;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s = stats_;
      s.disabled = disabled_;
    }
    s.writer = frames_.stats();
    return s;
  }

  const RecorderOptions& options() const { return options_; }

 private:
  struct KernelRate {
    std::uint64_t seen = 0;
    std::uint64_t skippedGroups = 0;  ///< groups of the launches not recorded since the last recorded one
    double tokens = 0;
    std::chrono::steady_clock::time_point refilled{};
  };

  /// A ticket ending after close: nothing is enqueued (no encoder is left to take it), and the
  /// core is kept alive for good, because the kernel may still write into the ticket's slot.
  bool parkIfClosed(const std::shared_ptr<RecorderCore>& self, const char* counter) noexcept;

  ProbeBuffers scratchBuffers(const LaunchInfo& info) const {
    ProbeBuffers buffers;
    buffers.totals = scratch_->deviceTotals;
    buffers.samples = scratch_->deviceSamples;
    buffers.sampleCapacity = 0;  // nothing is ever written to the scratch samples
    buffers.samplingStride = 0;
    buffers.launchId = info.launchId;
    buffers.selection = info.selection;
    buffers.groupsPerBlock = info.groupsPerBlock;
    return buffers;
  }

  /// Aggregation key: job, kernel, n, sync and stream (under mutex_; may throw bad_alloc).
  static std::string makeAggregateKey(const LaunchInfo& info, StreamHandle stream) {
    char tail[64];
    std::snprintf(tail, sizeof tail, "\n%u\n%d\n%p", info.groupSize, info.sync ? 1 : 0, stream);
    std::string key;
    key.reserve(info.job.size() + info.kernel.size() + 40);
    key.append(info.job).push_back('/');
    key.append(info.kernel).append(tail);
    return key;
  }

  /// Launch sampling (under mutex_): one in launchSampleEvery, then the per-second budget.
  /// A launch not selected adds its groups to its kernel's skippedGroups; `rateOut` is the
  /// kernel's entry (nullptr when launch sampling is off).
  bool selectLaunch(const LaunchInfo& info, KernelRate*& rateOut) {
    rateOut = nullptr;
    if (options_.launchSampleEvery <= 1 && options_.maxLaunchesPerSecond <= 0) return true;
    std::string key;
    key.reserve(info.job.size() + 1 + info.kernel.size());
    key.append(info.job).push_back('/');
    key.append(info.kernel);
    KernelRate& rate = rates_[key];  // unordered_map: references stay valid across rehashing
    rateOut = &rate;
    const std::uint64_t index = rate.seen++;
    if (!admit(rate, index)) {
      rate.skippedGroups += info.groupCount;
      return false;
    }
    return true;
  }
  bool admit(KernelRate& rate, std::uint64_t index) {
    if (index % options_.launchSampleEvery != 0) return false;
    if (options_.maxLaunchesPerSecond <= 0) return true;
    const auto now = std::chrono::steady_clock::now();
    const double burst = std::max(1.0, options_.maxLaunchesPerSecond);
    if (index == 0) {
      rate.tokens = burst;
    } else {
      const double seconds = std::chrono::duration<double>(now - rate.refilled).count();
      rate.tokens = std::min(burst, rate.tokens + seconds * options_.maxLaunchesPerSecond);
    }
    rate.refilled = now;
    if (rate.tokens < 1.0) return false;
    rate.tokens -= 1.0;
    return true;
  }

  void enqueueHostFunction(StagingSlot* slot, StreamHandle stream, const char* what) noexcept {
    slot->core = this;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += 1;
      if (!slot->abandoned) pendingLaunches_ += slot->launches;
    }
    const RuntimeStatus launched = runtime_->launchHostFunction(stream, &RecorderCore::onStreamReached, slot);
    if (!launched.ok) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_ -= 1;
        if (!slot->abandoned) pendingLaunches_ -= slot->launches;
      }
      if (slot->abandoned) {
        reportFailure(launched, what);
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(slot);
        idle_.notify_all();
      } else {
        giveBack(slot, launched, what);
      }
    }
  }

  /// The runtime's thread, in stream order after the copy of the totals: must not call the runtime.
  static void onStreamReached(void* userData) {
    auto* slot = static_cast<StagingSlot*>(userData);
    RecorderCore* self = slot->core;
    const std::uint64_t now = unixNanosNow();
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->pending_ -= 1;
    if (!slot->abandoned) self->pendingLaunches_ -= slot->launches;
    if (slot->abandoned) {
      self->free_.push_back(slot);
      self->idle_.notify_all();
      return;
    }
    slot->info.endUnixNanos = now;
    self->ready_.push_back(slot);
    self->wake_.notify_all();
  }

  /// A launch that could not be recorded: count it, report it, free its slot.
  void giveBack(StagingSlot* slot, const RuntimeStatus& status, const char* what) noexcept {
    reportFailure(status, what);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status.sticky) stats_.launchesFailed += slot->launches;
    else stats_.launchesDisabled += slot->launches;
    free_.push_back(slot);
    idle_.notify_all();
  }

  /// One stderr line per kind of failure (a sticky error once, local failures once).
  void reportFailure(const RuntimeStatus& status, const char* what) noexcept {
    bool print = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (status.sticky) {
        print = !disabled_;
        disabled_ = true;
        idle_.notify_all();
      } else {
        print = !reportedLocalFailure_;
        reportedLocalFailure_ = true;
      }
    }
    if (!print) return;
    if (status.sticky) {
      std::fprintf(stderr,
                   "warpwatch recorder: WW_ERR_KERNELS_RECORDER_DISABLED: %s: %s; the GPU context has a sticky error, so recording stops for the rest "
                   "of this job (the job's own CUDA calls fail too)\n",
                   what, status.message.c_str());
    } else {
      std::fprintf(stderr,
                   "warpwatch recorder: WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED: %s: %s; that launch is not recorded (this and later failures are "
                   "counted in stats().launchesFailed, not printed again)\n",
                   what, status.message.c_str());
    }
  }

  void encodeLoop() {
    pthread_setname_np(pthread_self(), "ww-encoder");  // visible in top -H, /proc/PID/task/*/comm
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return closed_ || !ready_.empty(); });
      if (ready_.empty() || disabled_) break;  // closed (and drained), or nothing more can be copied
      StagingSlot* slot = ready_.front();
      ready_.pop_front();
      encoding_ = true;
      encodingLaunches_ = slot->launches;
      lock.unlock();
      const EncodeOutcome outcome = encode(*slot);
      lock.lock();
      // The count and the freed slot change under one lock: whoever sees the launch counted can
      // already use its slot (a caller waiting on stats() never races the free list).
      if (outcome == EncodeOutcome::Recorded) {
        stats_.launchesRecorded += slot->launches;
        stats_.launchesAggregated += slot->launches - 1;
      } else if (outcome == EncodeOutcome::Disabled) {
        stats_.launchesDisabled += slot->launches;
      } else {
        stats_.launchesFailed += slot->launches;
      }
      encoding_ = false;
      encodingLaunches_ = 0;
      free_.push_back(slot);
      idle_.notify_all();
    }
    encoderFinished_ = true;
    idle_.notify_all();
  }

  /// What encode() did with a launch; the encoder loop counts it when it frees the slot.
  enum class EncodeOutcome { Recorded, Failed, Disabled };

  /// Copies the claimed samples (now that the launch has finished), builds and queues the frames.
  EncodeOutcome encode(StagingSlot& slot) noexcept {
    const LaunchTotals& totals = *slot.hostTotals;
    const std::size_t claimed = std::min<std::size_t>(totals.sampleSlotsClaimed, options_.sampleCapacity);
    if (claimed > 0) {
      const RuntimeStatus copied = runtime_->copyToHostPrivate(slot.hostSamples, slot.deviceSamples, claimed * sizeof(GroupSampleSlot));
      if (!copied.ok) {
        reportFailure(copied, "encoder: copying the claimed samples");
        return copied.sticky ? EncodeOutcome::Disabled : EncodeOutcome::Failed;
      }
    }
    try {
      frames_.recordLaunch(slot.info, totals, slot.hostSamples, claimed);
      return EncodeOutcome::Recorded;
    } catch (const std::exception& error) {
      reportFailure(RuntimeStatus::failure(std::string("the launch's frames could not be built: ") + error.what(), false), "encoder");
      return EncodeOutcome::Failed;
    } catch (...) {
      return EncodeOutcome::Failed;
    }
  }

  std::unique_ptr<StagingSlot> allocateSlot() {
    auto slot = std::make_unique<StagingSlot>();
    RuntimeStatus status;
    const std::size_t sampleBytes = sizeof(GroupSampleSlot) * options_.sampleCapacity;
    slot->deviceTotals = static_cast<LaunchTotals*>(runtime_->allocateDevice(sizeof(LaunchTotals), status));
    if (status.ok) slot->deviceSamples = static_cast<GroupSampleSlot*>(runtime_->allocateDevice(sampleBytes, status));
    if (status.ok) slot->hostTotals = static_cast<LaunchTotals*>(runtime_->allocateHost(sizeof(LaunchTotals), status));
    if (status.ok) slot->hostSamples = static_cast<GroupSampleSlot*>(runtime_->allocateHost(sampleBytes, status));
    if (!status.ok) {
      releaseSlot(*slot);
      throw std::runtime_error("warpwatch recorder: allocating staging buffers failed: " + status.message);
    }
    return slot;
  }
  void releaseSlot(StagingSlot& slot) noexcept {
    runtime_->freeDevice(slot.deviceTotals);
    runtime_->freeDevice(slot.deviceSamples);
    runtime_->freeHost(slot.hostTotals);
    runtime_->freeHost(slot.hostSamples);
    slot.deviceTotals = nullptr;
    slot.deviceSamples = nullptr;
    slot.hostTotals = nullptr;
    slot.hostSamples = nullptr;
  }
  void releaseAll() noexcept {
    if (encoder_.joinable()) encoder_.detach();  // only reached after close() joined or gave up on it
    for (auto& slot : slots_) releaseSlot(*slot);
    if (scratch_) releaseSlot(*scratch_);
  }

  RecorderOptions options_;
  std::shared_ptr<RecorderRuntime> runtime_;
  LaunchRecorder frames_;
  std::unique_ptr<StagingSlot> scratch_;
  std::vector<std::unique_ptr<StagingSlot>> slots_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<StagingSlot*> free_, ready_;
  std::unordered_map<std::string, KernelRate> rates_;
  std::uint64_t pending_ = 0;            ///< host functions enqueued, not run yet
  std::uint64_t pendingLaunches_ = 0;    ///< launches in those slots (abandoned ones not counted)
  std::uint64_t encodingLaunches_ = 0;
  std::unordered_map<std::string, StagingSlot*> open_;  ///< open aggregates by makeAggregateKey
  bool closing_ = false, closeDone_ = false;  ///< close() started / finished (closeResult_ set)
  bool closed_ = false, disabled_ = false, encoding_ = false, encoderFinished_ = false, reportedLocalFailure_ = false;
  RecorderStats stats_;
  CloseResult closeResult_;
  std::thread encoder_;
};

/// Cores whose recorder died while the runtime could still call them (close timed out, or a
/// sticky error left host functions that never run). Kept reachable on purpose: a late host
/// function finds valid memory, and leak checkers see no leak. At most one per such recorder.
inline std::vector<std::shared_ptr<RecorderCore>>& abandonedCores() {
  static auto* cores = new std::vector<std::shared_ptr<RecorderCore>>();  // never destroyed: outlives exit-time host functions
  return *cores;
}
inline std::mutex& abandonedCoresMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

inline bool RecorderCore::parkIfClosed(const std::shared_ptr<RecorderCore>& self, const char* counter) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!closed_) return false;
    if (counter != nullptr) stats_.launchesDisabled += 1;
  }
  std::lock_guard<std::mutex> lock(abandonedCoresMutex());
  try {
    abandonedCores().push_back(self);
  } catch (...) {
    new std::shared_ptr<RecorderCore>(self);  // out of memory: leak rather than free memory a kernel may write
  }
  return true;
}

}  // namespace detail

inline LaunchTicket& LaunchTicket::operator=(LaunchTicket&& other) noexcept {
  if (this != &other) {
    if (core_ && slot_) core_->abandon(*this);
    core_ = std::move(other.core_);
    slot_ = other.slot_;
    stream_ = other.stream_;
    buffers_ = other.buffers_;
    other.slot_ = nullptr;
    other.core_.reset();
  }
  return *this;
}

inline LaunchTicket::~LaunchTicket() {
  if (core_ && slot_) core_->abandon(*this);
}

/// The recorder over any RecorderRuntime. CUDA jobs use warpwatch::Recorder (recorder.hpp);
/// tests and the CPU benchmark use BasicRecorder with FakeRuntime.
///
/// Example (any number of threads and streams; tickets end in any order):
///   warpwatch::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("job", "kernel", 32, groups, true));
///   kernel<<<blocks, 256, 0, stream>>>(..., ticket.buffers());
///   recorder.endLaunch(std::move(ticket));
///   ...
///   warpwatch::CloseResult closed = recorder.close(std::chrono::seconds(5));
class BasicRecorder {
 public:
  /// Allocates the staging slots and starts the encoder and writer threads.
  /// Throws std::invalid_argument (bad options), std::runtime_error (the sink cannot be opened,
  /// the runtime cannot allocate). Nothing after construction throws.
  BasicRecorder(RecorderOptions options, std::shared_ptr<RecorderRuntime> runtime, RecorderDevice device)
      : device_(std::move(device)), core_(std::make_shared<detail::RecorderCore>(options, std::move(runtime))) {
    core_->start(core_);
  }
  /// close(options.closeTimeout); the core outlives this object when the runtime may still call it.
  ~BasicRecorder() {
    close();
    if (core_->stillReferencedByRuntime()) {
      std::lock_guard<std::mutex> lock(detail::abandonedCoresMutex());
      try {
        detail::abandonedCores().push_back(core_);
      } catch (...) {
        new std::shared_ptr<detail::RecorderCore>(core_);  // out of memory: leak it rather than free it under a live callback
      }
    }
  }
  BasicRecorder(const BasicRecorder&) = delete;
  BasicRecorder& operator=(const BasicRecorder&) = delete;

  /// The device as frames describe it (name, uuid, compute capability, clock).
  const DeviceInfo& device() const { return device_.info; }

  /// A LaunchInfo with this device and source, a fresh launch id and the current time.
  /// `samplingStride`: one group in this many sampled (0 = none); `selection`: hash (default,
  /// unbiased) or stride (aliases with row-major 2-D layouts). Never throws: out of memory for
  /// the strings gives an empty job, which the encoder refuses (counted in launchesFailed).
  LaunchInfo launchInfo(const std::string& job, const std::string& kernel, unsigned groupSize, std::uint64_t groupCount, bool sync,
                        std::uint32_t samplingStride = 64, Selection selection = Selection::Hash) const noexcept {
    try {
      return makeLaunchInfo(job, kernel, groupSize, groupCount, sync, samplingStride, selection);
    } catch (...) {
      LaunchInfo info;
      info.job.clear();
      return info;
    }
  }

 private:
  LaunchInfo makeLaunchInfo(const std::string& job, const std::string& kernel, unsigned groupSize, std::uint64_t groupCount, bool sync,
                            std::uint32_t samplingStride, Selection selection) const {
    LaunchInfo info;
    info.job = job;
    info.kernel = kernel;
    info.source = device_.source;
    info.groupSize = groupSize;
    info.sync = sync;
    info.device = device_.info;
    info.launchId = splitmix64(unixNanosNow() ^ (nextLaunch_.fetch_add(1, std::memory_order_relaxed) * 0x9E3779B97F4A7C15ull));
    info.groupCount = groupCount;
    info.selection = selection;
    info.samplingStride = samplingStride;
    info.startUnixNanos = unixNanosNow();
    return info;
  }

 public:
  /// Starts recording one launch on `stream`: claims a staging slot and enqueues the clear of its
  /// totals. Never blocks, never throws; when the launch is not recorded (launch sampling, no free
  /// slot, a failed call, disabled, closed) the ticket holds scratch buffers with sampling off.
  LaunchTicket beginLaunch(StreamHandle stream, const LaunchInfo& info) noexcept { return core_->begin(core_, stream, info); }

  /// After the kernel launch on the ticket's stream: enqueues the copy of the totals and a host
  /// function that hands the slot to the encoder thread (which then copies only the claimed
  /// samples). Consumes the ticket. Never blocks, never throws.
  void endLaunch(LaunchTicket&& ticket) noexcept {
    LaunchTicket consumed = std::move(ticket);
    if (consumed.core_) consumed.core_->end(consumed);
  }

  /// Waits at most `timeout` for the launches in flight and the sink, then stops. Idempotent
  /// (a second call returns the first result). Launches begun afterwards are not recorded.
  CloseResult close(std::chrono::milliseconds timeout) noexcept { return core_->close(timeout); }
  /// close(options.closeTimeout).
  CloseResult close() noexcept { return core_->close(core_->options().closeTimeout); }

  RecorderStats stats() const { return core_->stats(); }

 private:
  RecorderDevice device_;
  std::shared_ptr<detail::RecorderCore> core_;
  mutable std::atomic<std::uint64_t> nextLaunch_{0};
};

}  // namespace warpwatch
