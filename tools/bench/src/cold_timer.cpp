/// Cold sampling loop (see cold_timer.h).
#include "cold_timer.h"

#include <chrono>
#include <vector>

#include "bench_kernels.h"

namespace pagecheck::bench::detail {

namespace {
/// How long the blocking kernel waits for the host before giving up.
constexpr uint64_t kSpinTimeoutNs = 5ull * 1000 * 1000 * 1000;

/// Releases the blocking kernel when leaving scope, also when the launch throws.
struct ReleaseGuard {
  volatile int* flag;
  ~ReleaseGuard() { *flag = 1; }
};
}  // namespace

ColdTimer::ColdTimer(int64_t flush_bytes, cudaStream_t stream)
    : flush_(static_cast<std::size_t>(flush_bytes)), stream_(stream) {
  void* host = nullptr;
  PAGECHECK_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host_flags_ = static_cast<volatile int*>(host);
  host_flags_[0] = 0;
  host_flags_[1] = 0;
  void* device = nullptr;
  PAGECHECK_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flags_ = static_cast<int*>(device);
  // Load the blocking kernel now (CUDA lazy loading), released at once: modules must not be
  // loaded while it holds the stream.
  host_flags_[0] = 1;
  spin_until_released(device_flags_, device_flags_ + 1, kSpinTimeoutNs, stream_);
  PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

ColdTimer::~ColdTimer() {
  if (host_flags_ != nullptr) {
    host_flags_[0] = 1;  // never leave a blocking kernel spinning
    (void)cudaStreamSynchronize(stream_);
    (void)cudaFreeHost(const_cast<int*>(host_flags_));
  }
}

void ColdTimer::flush() {
  flush_value_ ^= 0x5A;
  PAGECHECK_CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_, flush_.bytes(), stream_));
}

Measurement ColdTimer::measure(const std::function<void(cudaStream_t)>& launch,
                               const MeasureSettings& s) {
  for (int64_t i = 0; i < s.warmup; ++i) launch(stream_);
  PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream_));

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(s.max_samples));
  Measurement m;
  const auto wall_start = std::chrono::steady_clock::now();
  while (static_cast<int64_t>(samples.size()) < s.max_samples) {
    flush();
    host_flags_[0] = 0;
    host_flags_[1] = 0;
    spin_until_released(device_flags_, device_flags_ + 1, kSpinTimeoutNs, stream_);
    {
      ReleaseGuard release{host_flags_};
      PAGECHECK_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
      launch(stream_);
      PAGECHECK_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    }
    PAGECHECK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (host_flags_[1] != 0) {
      throw MeasureError(
          "the blocking kernel timed out while the launch was enqueued: the variant's launch "
          "function synchronizes (forbidden by the plugin ABI) or loads a kernel the warm-up "
          "did not launch (CUDA lazy loading), so it cannot be timed cold");
    }
    float ms = 0;
    PAGECHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    samples.push_back(static_cast<double>(ms) * 1000.0);

    const auto n = static_cast<int64_t>(samples.size());
    if (n >= s.min_samples && (n % 4 == 0 || n == s.min_samples)) {
      if (summarize(samples).noise <= s.max_noise) {
        m.converged = true;
        break;
      }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (n >= 5 && wall > s.timeout_s) break;
  }
  m.time_us = summarize(samples);
  return m;
}

}  // namespace pagecheck::bench::detail
