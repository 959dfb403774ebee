#pragma once
/// RAII device allocations for the runner: plain buffers for inputs, guarded buffers (canary
/// bytes before and after) for outputs. Setup failures throw pagecheck::CudaError; destructors
/// never throw (they also run after a sticky error).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pagecheck::verify::detail {

/// cudaMalloc'ed bytes (256-byte aligned); freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least 1).
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  /// get() as a T*.
  template <typename T>
  T* typed() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const { return bytes_; }
  /// Copies `bytes` host bytes to offset `offset`.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  /// Copies `bytes` bytes at `offset` to the host.
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  /// Sets `bytes` bytes at `offset` to `value`.
  void fill(uint8_t value, std::size_t bytes, std::size_t offset = 0);

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Uploads a host buffer into a new device buffer (nullptr-free even when empty).
DeviceBuffer upload_new(const void* host, std::size_t bytes);
/// Uploads a host vector into a new device buffer (nullptr-free even when empty).
template <typename T>
DeviceBuffer upload_vector(const std::vector<T>& host) {
  return upload_new(host.data(), host.size() * sizeof(T));
}

/// An output buffer of `size` bytes with guard zones: the data starts 256-byte aligned after a
/// pre-guard of at least `guard_bytes` (rounded up to 256), followed by `guard_bytes` bytes.
class GuardedBuffer {
 public:
  GuardedBuffer(std::size_t size, int64_t guard_bytes, uint8_t pattern);
  void* data() const { return static_cast<char*>(raw_.get()) + pre_; }
  std::size_t size() const { return size_; }
  /// Writes the data region from the host.
  void upload(const void* host) { raw_.upload(host, size_, pre_); }
  /// Sets every data byte to `value`.
  void fill(uint8_t value) { raw_.fill(value, size_, pre_); }
  /// Reads the data region to the host.
  void download(void* host) const { raw_.download(host, size_, pre_); }
  /// Empty when every guard byte still holds the pattern, else e.g. "key_out: 16 bytes changed
  /// after the end, first at +0".
  std::string check_guards(const std::string& name) const;

 private:
  DeviceBuffer raw_;
  std::size_t pre_ = 0;
  std::size_t size_ = 0;
  std::size_t post_ = 0;
  uint8_t pattern_ = 0;
};

}  // namespace pagecheck::verify::detail
