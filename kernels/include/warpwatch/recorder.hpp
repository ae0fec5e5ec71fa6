// warpwatch host recorder for CUDA jobs: allocates and clears the probe's device buffers,
// collects them after each launch without blocking the job's streams, and writes frames through
// the shared sink/writer code (sink.hpp, launch-frames.hpp). The host logic is BasicRecorder
// (recorder-core.hpp, tested on the CPU); this file adds the CUDA runtime calls (CudaRuntime).
//
//   warpwatch::Recorder recorder({"frames.bin"});           // or "unix:/run/warpwatch.sock", "-"
//   // any host thread, any stream:
//   warpwatch::LaunchTicket ticket = recorder.beginLaunch(stream, recorder.launchInfo("my-job", "my-kernel", 32, groups, true));
//   kernel<<<blocks, 256, 0, stream>>>(..., ticket.buffers());
//   recorder.endLaunch(std::move(ticket));                 // copy of the totals + a host function
//   ...
//   warpwatch::CloseResult closed = recorder.close(std::chrono::seconds(5));  // bounded
//
// Never stalls, never throws after construction, never raises a signal, never hangs: see
// recorder-core.hpp and docs/kernels.md "The recorder inside a production job".
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "probe.cuh"
#include "recorder-core.hpp"
#include "runtime.hpp"

namespace warpwatch {

/// Throws std::runtime_error naming the call and CUDA's message when `status` is an error.
inline void checkCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

/// RecorderRuntime over the CUDA runtime of the current device.
class CudaRuntime : public RecorderRuntime {
 public:
  /// On the current device: creates the private non-blocking stream for copyToHostPrivate.
  /// Throws std::runtime_error.
  CudaRuntime() {
    checkCuda(cudaGetDevice(&device_), "cudaGetDevice");
    checkCuda(cudaStreamCreateWithFlags(&private_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  ~CudaRuntime() override { cudaStreamDestroy(private_); }
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  /// Errors after which the context is unusable (every later call fails, queued host functions never run).
  static bool isSticky(cudaError_t error) {
    switch (error) {
      case cudaErrorIllegalAddress:
      case cudaErrorLaunchFailure:
      case cudaErrorHardwareStackError:
      case cudaErrorIllegalInstruction:
      case cudaErrorMisalignedAddress:
      case cudaErrorInvalidAddressSpace:
      case cudaErrorInvalidPc:
      case cudaErrorAssert:
      case cudaErrorLaunchTimeout:
      case cudaErrorECCUncorrectable:
      case cudaErrorContextIsDestroyed:
      case cudaErrorCudartUnloading:
        return true;
      default:
        return false;
    }
  }
  static RuntimeStatus statusOf(cudaError_t error, const char* what) {
    if (error == cudaSuccess) return RuntimeStatus::success();
    try {
      return RuntimeStatus::failure(std::string(what) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")", isSticky(error));
    } catch (...) {
      return RuntimeStatus{false, isSticky(error), {}};
    }
  }

  /// The current device as frames describe it. Throws std::runtime_error.
  static RecorderDevice currentDevice() {
    int device = 0;
    checkCuda(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp properties{};
    checkCuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
    RecorderDevice result;
    result.source = Source::Cuda;
    result.info.name = properties.name;
    if (result.info.name.size() > 255) result.info.name.resize(255);
    for (int i = 0; i < 16; ++i) result.info.uuid[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(properties.uuid.bytes[i]);
    result.info.computeCapabilityMajor = static_cast<std::uint8_t>(properties.major);
    result.info.computeCapabilityMinor = static_cast<std::uint8_t>(properties.minor);
    int clockKiloHertz = 0;
    checkCuda(cudaDeviceGetAttribute(&clockKiloHertz, cudaDevAttrClockRate, device), "cudaDeviceGetAttribute(clock rate)");
    result.info.clockHz = static_cast<std::uint64_t>(clockKiloHertz) * 1000ull;  // clock64() ticks at the SM clock
    return result;
  }

  void* allocateDevice(std::size_t bytes, RuntimeStatus& status) noexcept override {
    void* pointer = nullptr;
    status = statusOf(cudaMalloc(&pointer, bytes), "cudaMalloc");
    return status.ok ? pointer : nullptr;
  }
  void* allocateHost(std::size_t bytes, RuntimeStatus& status) noexcept override {
    void* pointer = nullptr;
    status = statusOf(cudaMallocHost(&pointer, bytes), "cudaMallocHost");
    return status.ok ? pointer : nullptr;
  }
  void freeDevice(void* pointer) noexcept override {
    if (pointer != nullptr) cudaFree(pointer);
  }
  void freeHost(void* pointer) noexcept override {
    if (pointer != nullptr) cudaFreeHost(pointer);
  }
  RuntimeStatus clearAsync(void* device, std::size_t bytes, StreamHandle stream) noexcept override {
    // A stream being captured into a CUDA graph would bake this launch's slot into every replay.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    const cudaError_t queried = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture);
    if (queried != cudaSuccess) return statusOf(queried, "cudaStreamIsCapturing");
    if (capture != cudaStreamCaptureStatusNone) return RuntimeStatus::failure("the stream is capturing a CUDA graph; launches inside a capture are not recorded", false);
    return statusOf(cudaMemsetAsync(device, 0, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
  }
  RuntimeStatus copyToHostAsync(void* host, const void* device, std::size_t bytes, StreamHandle stream) noexcept override {
    return statusOf(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync");
  }
  RuntimeStatus launchHostFunction(StreamHandle stream, HostFunction function, void* userData) noexcept override {
    return statusOf(cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), function, userData), "cudaLaunchHostFunc");
  }
  RuntimeStatus copyToHostPrivate(void* host, const void* device, std::size_t bytes) noexcept override {
    // The encoder thread's current device is CUDA's default until set: make it the recorder's.
    const RuntimeStatus selected = statusOf(cudaSetDevice(device_), "cudaSetDevice");
    if (!selected.ok) return selected;
    const RuntimeStatus copied = statusOf(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, private_), "cudaMemcpyAsync(samples)");
    if (!copied.ok) return copied;
    return statusOf(cudaStreamSynchronize(private_), "cudaStreamSynchronize(recorder stream)");
  }

 private:
  int device_ = 0;
  cudaStream_t private_ = nullptr;
};

/// The recorder of a CUDA job: BasicRecorder (recorder-core.hpp) over CudaRuntime, on the
/// device current when it is constructed (one Recorder per device in a multi-GPU job; launch
/// its tickets on streams of that device). Construction throws std::invalid_argument / std::runtime_error (bad options,
/// sink, no device, allocation); nothing afterwards throws.
class Recorder : public BasicRecorder {
 public:
  explicit Recorder(RecorderOptions options) : BasicRecorder(std::move(options), std::make_shared<CudaRuntime>(), CudaRuntime::currentDevice()) {}
};

}  // namespace warpwatch
