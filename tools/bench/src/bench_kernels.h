#pragma once
/// The bench's own small device kernels (bench_kernels.cu): random fill, output check, the
/// streaming read and copy kernels of the ceilings, the empty kernel of the launch floor and the
/// blocking kernel of the cold timer.
/// Host-callable wrappers; each checks its launch and throws pagecheck::CudaError on failure.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "pagecheck/plugin.h"

namespace pagecheck::bench::detail {

/// Fills `count` elements of `dtype` at `data` with values uniform in [lo, hi) drawn from a
/// counter-based hash of (seed, index): finite, never all zero, reproducible (fp8 dtypes: the
/// values' codes).
void fill_random(void* data, int64_t count, pc_dtype dtype, uint64_t seed, float lo, float hi,
                 cudaStream_t stream);

/// Adds to *counter (device memory) the number of NaN or infinite elements among `count`
/// elements of `dtype` at `data`.
void count_nonfinite(const void* data, int64_t count, pc_dtype dtype, unsigned long long* counter,
                     cudaStream_t stream);

/// Launch configuration of the streaming kernels: loads in flight per thread (1, 2, 4 or 8)
/// and threads per block (256, 512 or 1024); the grid holds 2048 threads per SM.
struct StreamConfig {
  int unroll = 4;     ///< independent 16-byte loads per thread and step
  int threads = 256;  ///< threads per block
};

/// Reads `bytes` (a multiple of 16) at `data` once with 16-byte loads over the whole device
/// and writes (almost) nothing: one point of the read-ceiling sweep. `sink` (4 bytes of device
/// memory) is written only when the reduction hits a magic value.
void read_stream(const void* data, int64_t bytes, unsigned int* sink, int num_sms,
                 const StreamConfig& config, cudaStream_t stream);

/// Copies `bytes` (a multiple of 16) from `src` to `dst` with 16-byte loads and stores: one
/// point of the copy-ceiling sweep.
void copy_stream(void* dst, const void* src, int64_t bytes, int num_sms, const StreamConfig& config,
                 cudaStream_t stream);

/// Enqueues an empty kernel of one block of 32 threads: the launch floor's work.
void empty_launch(cudaStream_t stream);

/// Enqueues a one-thread kernel that spins until *flag (host-mapped) becomes non-zero, or
/// until `timeout_ns` passed, in which case it sets *timed_out (host-mapped) to 1.
void spin_until_released(const volatile int* flag, volatile int* timed_out, uint64_t timeout_ns,
                         cudaStream_t stream);

}  // namespace pagecheck::bench::detail
