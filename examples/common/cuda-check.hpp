// CUDA error check for the example programs: throws std::runtime_error naming the call.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace example {

inline void cudaCheck(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

/// A device copy of a host vector (freed by the caller with cudaFree).
template <typename T>
T* toDevice(const std::vector<T>& host) {
  T* device = nullptr;
  cudaCheck(cudaMalloc(&device, sizeof(T) * (host.empty() ? 1 : host.size())), "cudaMalloc");
  if (!host.empty()) cudaCheck(cudaMemcpy(device, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  return device;
}

}  // namespace example
