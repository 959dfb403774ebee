/// Device buffers and guard zones of the runner.
#include "device_buffer.h"

#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

#include "pagecheck/cuda_check.h"

namespace pagecheck::verify::detail {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  PAGECHECK_CUDA_CHECK(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)cudaFree(ptr_);  // may fail after a sticky error: ignored
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  PAGECHECK_CUDA_CHECK(
      cudaMemcpy(static_cast<char*>(ptr_) + offset, host, bytes, cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  PAGECHECK_CUDA_CHECK(
      cudaMemcpy(host, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost));
}

void DeviceBuffer::fill(uint8_t value, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  PAGECHECK_CUDA_CHECK(cudaMemset(static_cast<char*>(ptr_) + offset, value, bytes));
}

DeviceBuffer upload_new(const void* host, std::size_t bytes) {
  DeviceBuffer buffer(bytes);
  buffer.upload(host, bytes);
  return buffer;
}

GuardedBuffer::GuardedBuffer(std::size_t size, int64_t guard_bytes, uint8_t pattern)
    : size_(size), pattern_(pattern) {
  const std::size_t guard = guard_bytes > 0 ? static_cast<std::size_t>(guard_bytes) : 0;
  pre_ = (guard + 255) / 256 * 256;
  post_ = guard;
  raw_ = DeviceBuffer(pre_ + size_ + post_);
  raw_.fill(pattern_, pre_, 0);
  raw_.fill(pattern_, post_, pre_ + size_);
}

namespace {
/// "N bytes changed <where>, first at <offset>" or empty.
std::string describe(const std::vector<uint8_t>& bytes, uint8_t pattern, const std::string& where,
                     bool before) {
  std::size_t changed = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != pattern) {
      // Before the start: report the change closest to the data (largest index).
      if (changed == 0 || before) first = i;
      ++changed;
    }
  }
  if (changed == 0) return {};
  const std::string at =
      before ? "-" + std::to_string(bytes.size() - first) : "+" + std::to_string(first);
  return std::to_string(changed) + " bytes changed " + where + ", first at " + at;
}
}  // namespace

std::string GuardedBuffer::check_guards(const std::string& name) const {
  std::vector<uint8_t> pre(pre_), post(post_);
  raw_.download(pre.data(), pre_, 0);
  raw_.download(post.data(), post_, pre_ + size_);
  std::string report;
  const std::string a = describe(pre, pattern_, "before the start", true);
  const std::string b = describe(post, pattern_, "after the end", false);
  if (!a.empty()) report = name + ": " + a;
  if (!b.empty()) report += (report.empty() ? "" : "; ") + name + ": " + b;
  return report;
}

}  // namespace pagecheck::verify::detail
