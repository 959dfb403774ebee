#pragma once
/// nvbench-style cold timing: before every sample the L2 is flushed (memset of a buffer at
/// least twice the L2 size) and a blocking kernel holds the stream while the host enqueues the
/// start event, the launch and the stop event, so the events time the GPU work only, not the
/// host's launch overhead. Sampling stops once the noise (IQR / median) is low enough, at the
/// sample cap, or at the time cap.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <stdexcept>

#include "device_buffer.h"
#include "pagecheck/bench/statistics.h"

namespace pagecheck::bench::detail {

/// A measurement that could not be taken (the launch failed, or the blocking kernel timed
/// out because the launch synchronized); the message says which.
struct MeasureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Stopping rules of one measurement.
struct MeasureSettings {
  int64_t warmup = 3;         ///< untimed launches first
  int64_t min_samples = 20;   ///< samples taken at least (unless the time cap hits)
  int64_t max_samples = 400;  ///< samples taken at most
  double max_noise = 0.02;    ///< stop when IQR / median <= this
  double timeout_s = 1.5;     ///< wall-time cap of the sampling loop (after 5 samples)
};

/// Result of one measurement.
struct Measurement {
  SampleSummary time_us;   ///< per-call time, microseconds
  bool converged = false;  ///< stopped because the noise target was met
};

/// Times enqueued GPU work cold. One per stream; not thread safe.
class ColdTimer {
 public:
  /// `flush_bytes`: size of the L2 flush buffer (callers pass >= 2 x L2).
  ColdTimer(int64_t flush_bytes, cudaStream_t stream);
  ~ColdTimer();
  ColdTimer(const ColdTimer&) = delete;
  ColdTimer& operator=(const ColdTimer&) = delete;

  /// Measures `launch`, which enqueues the work on the stream it is given and throws on
  /// failure (MeasureError for a refused launch, CudaError for a CUDA failure).
  Measurement measure(const std::function<void(cudaStream_t)>& launch,
                      const MeasureSettings& settings);
  /// Flushes the L2 (enqueued on the stream).
  void flush();
  /// Size of the flush buffer in bytes.
  int64_t flush_bytes() const { return static_cast<int64_t>(flush_.bytes()); }

 private:
  DeviceBuffer flush_;
  cudaStream_t stream_;
  volatile int* host_flags_ = nullptr;  ///< [0]: release flag, [1]: timed-out flag (mapped)
  int* device_flags_ = nullptr;         ///< device view of host_flags_
  Event start_;
  Event stop_;
  int flush_value_ = 0;
};

}  // namespace pagecheck::bench::detail
