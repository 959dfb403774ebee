#pragma once
/// Runtime -> compile-time dispatch for the kernels' template parameters. Each helper calls
/// `f` with a tag for the matching compile-time value; an unknown value is an "unsupported ..."
/// status, never an exception. The head-size and block-size cases come from the CMake cache
/// lists through the generated pagecheck/kernel_config.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/kernel_status.h"
#include "pagecheck/kernel_config.h"

namespace pagecheck::kernels {

/// Carries a storage type through a generic lambda.
template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<float | __half | __nv_bfloat16>{}).
template <typename F>
KernelStatus dispatch_dtype(pc_dtype dtype, F&& f) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case PC_DTYPE_FLOAT16:
      return f(TypeTag<__half>{});
    case PC_DTYPE_BFLOAT16:
      return f(TypeTag<__nv_bfloat16>{});
  }
  return KernelStatus::unsupported("unsupported dtype: " + std::to_string(static_cast<int>(dtype)));
}

/// Calls f(std::integral_constant<int, HEAD_SIZE>{}) for a head size of PAGECHECK_HEAD_SIZES.
template <typename F>
KernelStatus dispatch_head_size(int64_t head_size, F&& f) {
  switch (head_size) {
#define PAGECHECK_HEAD_CASE_(N) \
  case N:                       \
    return f(std::integral_constant<int, N>{});
    PAGECHECK_FOR_EACH_HEAD_SIZE(PAGECHECK_HEAD_CASE_)
#undef PAGECHECK_HEAD_CASE_
    default:
      return KernelStatus::unsupported("unsupported head_size: " + std::to_string(head_size));
  }
}

/// Calls f(std::integral_constant<int, BLOCK_SIZE>{}) for a block size of PAGECHECK_BLOCK_SIZES.
template <typename F>
KernelStatus dispatch_block_size(int64_t block_size, F&& f) {
  switch (block_size) {
#define PAGECHECK_BLOCK_CASE_(N) \
  case N:                        \
    return f(std::integral_constant<int, N>{});
    PAGECHECK_FOR_EACH_BLOCK_SIZE(PAGECHECK_BLOCK_CASE_)
#undef PAGECHECK_BLOCK_CASE_
    default:
      return KernelStatus::unsupported("unsupported block_size: " + std::to_string(block_size));
  }
}

/// Calls f(std::integral_constant<int, BYTES>{}) for an element size of 2 or 4 bytes (the copy
/// kernels move raw bits, so float16 and bfloat16 share one instantiation).
template <typename F>
KernelStatus dispatch_element_bytes(pc_dtype dtype, F&& f) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return f(std::integral_constant<int, 4>{});
    case PC_DTYPE_FLOAT16:
    case PC_DTYPE_BFLOAT16:
      return f(std::integral_constant<int, 2>{});
  }
  return KernelStatus::unsupported("unsupported dtype: " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace pagecheck::kernels
