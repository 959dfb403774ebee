#pragma once
/// Owning handles of device memory, events and streams for the bench (destructors never throw).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "pagecheck/cuda_check.h"

namespace pagecheck::bench::detail {

/// cudaMalloc'ed bytes; moved, never copied.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least 1) of device memory; throws CudaError naming the size.
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t err = cudaMalloc(&ptr_, bytes);
    if (err != cudaSuccess) {
      ptr_ = nullptr;
      throw_cuda_error(err, ("cudaMalloc(" + std::to_string(bytes) + " bytes)").c_str(), __FILE__,
                       __LINE__);
    }
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = o.bytes_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  /// Frees the memory (errors ignored: the context may already be broken).
  void reset() noexcept {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
    ptr_ = nullptr;
  }
  /// Device pointer (nullptr when empty).
  void* get() const { return ptr_; }
  /// Typed device pointer.
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  /// Size in bytes.
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Copies a host vector into a new device buffer on `stream` and waits for the copy (the
/// bench's streams do not synchronize with the legacy default stream).
template <typename T>
DeviceBuffer upload(const std::vector<T>& host, cudaStream_t stream) {
  DeviceBuffer buf(host.size() * sizeof(T));
  if (!host.empty()) {
    PAGECHECK_CUDA_CHECK(
        cudaMemcpyAsync(buf.get(), host.data(), buf.bytes(), cudaMemcpyHostToDevice, stream));
    PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return buf;
}

/// A CUDA event with timing enabled.
class Event {
 public:
  Event() { PAGECHECK_CUDA_CHECK(cudaEventCreate(&event_)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { (void)cudaEventDestroy(event_); }
  /// The event handle.
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_{};
};

/// A non-blocking CUDA stream.
class Stream {
 public:
  Stream() { PAGECHECK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { (void)cudaStreamDestroy(stream_); }
  /// The stream handle.
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_{};
};

}  // namespace pagecheck::bench::detail
