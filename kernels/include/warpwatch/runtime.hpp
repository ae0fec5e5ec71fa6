// The few GPU-runtime calls the recorder (recorder-core.hpp) makes, behind a small interface, so
// that its host logic runs and is tested without a GPU:
//   * CudaRuntime (cuda-runtime.hpp): the CUDA runtime calls, a few lines each;
//   * FakeRuntime (fake-runtime.hpp): CPU "device" memory and fake streams whose operations run
//     in order on a worker thread, with injectable failures (tests, the CPU-path benchmark).
// Plain C++17; no CUDA header.
#pragma once

#include <cstddef>
#include <string>

namespace warpwatch {

/// An opaque stream handle (a cudaStream_t converts to it implicitly; nullptr = the default stream).
using StreamHandle = void*;

/// A host function the runtime runs in stream order (cudaHostFn_t's shape). It must not call the runtime.
using HostFunction = void (*)(void* userData);

/// Result of one runtime call: ok, or a failure that is either local to the call or sticky
/// (the context is unusable: every later call fails and queued host functions never run).
struct RuntimeStatus {
  bool ok = true;
  bool sticky = false;
  std::string message;  ///< what failed and the runtime's text; empty when ok

  static RuntimeStatus success() { return {}; }
  static RuntimeStatus failure(std::string what, bool isSticky) { return {false, isSticky, std::move(what)}; }
};

/// The calls a Recorder needs. Implementations are thread-safe: any host thread may call any
/// method at any time, and none may throw (failures are returned as a RuntimeStatus).
class RecorderRuntime {
 public:
  virtual ~RecorderRuntime() = default;

  /// Device memory of `bytes` bytes (never 0); nullptr with `status` set on failure.
  virtual void* allocateDevice(std::size_t bytes, RuntimeStatus& status) noexcept = 0;
  /// Page-locked host memory of `bytes` bytes; nullptr with `status` set on failure.
  virtual void* allocateHost(std::size_t bytes, RuntimeStatus& status) noexcept = 0;
  virtual void freeDevice(void* pointer) noexcept = 0;
  virtual void freeHost(void* pointer) noexcept = 0;

  /// Enqueues a clear of `bytes` bytes of device memory on `stream` (cudaMemsetAsync to 0).
  virtual RuntimeStatus clearAsync(void* device, std::size_t bytes, StreamHandle stream) noexcept = 0;
  /// Enqueues a device-to-host copy on `stream` (cudaMemcpyAsync).
  virtual RuntimeStatus copyToHostAsync(void* host, const void* device, std::size_t bytes, StreamHandle stream) noexcept = 0;
  /// Enqueues `function(userData)` on `stream`, run after the work enqueued before it (cudaLaunchHostFunc).
  virtual RuntimeStatus launchHostFunction(StreamHandle stream, HostFunction function, void* userData) noexcept = 0;

  /// Copies device memory to host memory and waits for it, on a stream of the runtime's own that
  /// does not wait for the job's streams (so it never delays them). Called from the recorder's
  /// encoder thread only, after the launch that wrote `device` has finished.
  virtual RuntimeStatus copyToHostPrivate(void* host, const void* device, std::size_t bytes) noexcept = 0;
};

}  // namespace warpwatch
