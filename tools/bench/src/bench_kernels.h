#pragma once
/// The bench's own small device kernels (bench_kernels.cu): random fill, output check,
/// read-only streaming ceiling and the blocking kernel of the cold timer. Host-callable
/// wrappers; each checks its launch and throws pagecheck::CudaError on failure.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "pagecheck/plugin.h"

namespace pagecheck::bench::detail {

/// Fills `count` elements of `dtype` at `data` with values uniform in [lo, hi) drawn from a
/// counter-based hash of (seed, index): finite, never all zero, reproducible.
void fill_random(void* data, int64_t count, pc_dtype dtype, uint64_t seed, float lo, float hi,
                 cudaStream_t stream);

/// Adds to *counter (device memory) the number of NaN or infinite elements among `count`
/// elements of `dtype` at `data`.
void count_nonfinite(const void* data, int64_t count, pc_dtype dtype, unsigned long long* counter,
                     cudaStream_t stream);

/// Reads `bytes` (a multiple of 16) at `data` once with 16-byte loads over the whole device
/// and writes (almost) nothing: the read-only streaming ceiling. `sink` (4 bytes of device
/// memory) is written only when the reduction hits a magic value.
void read_stream(const void* data, int64_t bytes, unsigned int* sink, int num_sms,
                 cudaStream_t stream);

/// Enqueues a one-thread kernel that spins until *flag (host-mapped) becomes non-zero, or
/// until `timeout_ns` passed, in which case it sets *timed_out (host-mapped) to 1.
void spin_until_released(const volatile int* flag, volatile int* timed_out, uint64_t timeout_ns,
                         cudaStream_t stream);

}  // namespace pagecheck::bench::detail
