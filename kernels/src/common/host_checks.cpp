/// Shared argument checks of the built-in variants.
#include "common/host_checks.h"

#include "common/kernel_lists.h"

namespace pagecheck::kernels {

KernelStatus require_pointer(const void* ptr, const char* name) {
  if (ptr == nullptr) return KernelStatus::invalid(std::string(name) + " is NULL");
  return KernelStatus::success();
}

KernelStatus require_aligned16(const void* ptr, const char* name, const char* why) {
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) {
    return KernelStatus::unsupported(std::string(name) + " is not 16-byte aligned (" + why + ")");
  }
  return KernelStatus::success();
}

KernelStatus require_min(int64_t value, int64_t min_value, const char* name) {
  if (value < min_value) {
    return KernelStatus::invalid(std::string(name) + " (" + std::to_string(value) +
                                 ") must be >= " + std::to_string(min_value));
  }
  return KernelStatus::success();
}

KernelStatus require_vector_stride(int64_t stride, int64_t x, const char* name) {
  if (stride % x != 0) {
    return KernelStatus::unsupported(std::string(name) + " (" + std::to_string(stride) +
                                     ") is not a multiple of x = " + std::to_string(x) +
                                     " elements (16-byte vector accesses)");
  }
  return KernelStatus::success();
}

KernelStatus check_cache_shape(const pc_cache_layout& c, pc_dtype dtype) {
  const int64_t bytes = element_bytes(dtype);
  if (bytes == 0) {
    return KernelStatus::unsupported("unsupported dtype: " +
                                     std::to_string(static_cast<int>(dtype)));
  }
  const int64_t x = 16 / bytes;
  if (c.x != x) {
    return KernelStatus::invalid("cache.x (" + std::to_string(c.x) +
                                 ") must be 16 / element size = " + std::to_string(x) + " for " +
                                 dtype_label(dtype));
  }
  KernelStatus st = first_failure(require_min(c.num_blocks, 1, "cache.num_blocks"),
                                  require_min(c.num_kv_heads, 1, "cache.num_kv_heads"),
                                  require_min(c.head_size, 1, "cache.head_size"),
                                  require_min(c.block_size, 1, "cache.block_size"));
  if (!st.ok()) return st;
  if (c.head_size % x != 0) {
    return KernelStatus::invalid("cache.head_size (" + std::to_string(c.head_size) +
                                 ") is not a multiple of x = " + std::to_string(x));
  }
  if (!compiled_head_size(c.head_size)) {
    return KernelStatus::unsupported("unsupported head_size: " + std::to_string(c.head_size));
  }
  if (!compiled_block_size(c.block_size)) {
    return KernelStatus::unsupported("unsupported block_size: " + std::to_string(c.block_size));
  }
  return first_failure(require_min(c.key_stride_slot, x, "cache.key_stride_slot"),
                       require_min(c.key_stride_group, 1, "cache.key_stride_group"),
                       require_min(c.key_stride_head, 1, "cache.key_stride_head"),
                       require_min(c.key_stride_block, 1, "cache.key_stride_block"),
                       require_min(c.value_stride_dim, 1, "cache.value_stride_dim"),
                       require_min(c.value_stride_head, 1, "cache.value_stride_head"),
                       require_min(c.value_stride_block, 1, "cache.value_stride_block"));
}

KernelStatus max_shared_memory_per_block(int64_t* bytes) {
  int device = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(cudaGetDevice(&device));
  int value = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(
      cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  *bytes = value;
  return KernelStatus::success();
}

}  // namespace pagecheck::kernels
