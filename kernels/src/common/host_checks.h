#pragma once
/// Small argument checks shared by the variants' can_implement functions. Each returns a
/// KernelStatus whose message names the offending field.
#include <cstdint>
#include <string>

#include "common/kernel_status.h"

namespace pagecheck::kernels {

/// Invalid when `ptr` is NULL.
KernelStatus require_pointer(const void* ptr, const char* name);
/// Unsupported when `ptr` is not 16-byte aligned (`why` says which access needs it).
KernelStatus require_aligned16(const void* ptr, const char* name, const char* why);
/// Invalid when `stride` < `min_value`.
KernelStatus require_min(int64_t value, int64_t min_value, const char* name);
/// Unsupported when `stride` is not a multiple of `x` elements (16-byte vector accesses).
KernelStatus require_vector_stride(int64_t stride, int64_t x, const char* name);
/// Invalid unless the layout's x equals 16 / element size and its sizes are positive;
/// unsupported when the head size or block size is not a compiled one.
KernelStatus check_cache_shape(const pc_cache_layout& cache, pc_dtype dtype);
/// The current device's opt-in shared memory per block (bytes), or a CUDA error status.
KernelStatus max_shared_memory_per_block(int64_t* bytes);

/// Runs the checks in order and returns the first failure (or success).
template <typename... Checks>
KernelStatus first_failure(const Checks&... checks) {
  KernelStatus result = KernelStatus::success();
  ((result.ok() ? (void)(result = checks) : (void)0), ...);
  return result;
}

}  // namespace pagecheck::kernels
