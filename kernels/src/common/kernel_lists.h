#pragma once
/// The head sizes and block sizes the kernels are compiled for (CMake cache lists), as arrays.
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "pagecheck/kernel_config.h"
#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// PAGECHECK_HEAD_SIZES.
inline constexpr int32_t kHeadSizes[] = {
#define PAGECHECK_LIST_ITEM_(N) N,
    PAGECHECK_FOR_EACH_HEAD_SIZE(PAGECHECK_LIST_ITEM_)
#undef PAGECHECK_LIST_ITEM_
};
/// PAGECHECK_BLOCK_SIZES.
inline constexpr int32_t kBlockSizes[] = {
#define PAGECHECK_LIST_ITEM_(N) N,
    PAGECHECK_FOR_EACH_BLOCK_SIZE(PAGECHECK_LIST_ITEM_)
#undef PAGECHECK_LIST_ITEM_
};
inline constexpr int32_t kNumHeadSizes = static_cast<int32_t>(std::size(kHeadSizes));
inline constexpr int32_t kNumBlockSizes = static_cast<int32_t>(std::size(kBlockSizes));

/// True when head_size is in PAGECHECK_HEAD_SIZES.
inline bool compiled_head_size(int64_t head_size) {
  return std::find(std::begin(kHeadSizes), std::end(kHeadSizes), head_size) != std::end(kHeadSizes);
}
/// True when block_size is in PAGECHECK_BLOCK_SIZES.
inline bool compiled_block_size(int64_t block_size) {
  return std::find(std::begin(kBlockSizes), std::end(kBlockSizes), block_size) !=
         std::end(kBlockSizes);
}

/// Bytes per element of a dtype, 0 for an unknown value.
inline int64_t element_bytes(pc_dtype dtype) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return 4;
    case PC_DTYPE_FLOAT16:
      return 2;
    case PC_DTYPE_BFLOAT16:
      return 2;
  }
  return 0;
}
/// "float32", "float16", "bfloat16" or "unknown".
inline const char* dtype_label(pc_dtype dtype) {
  switch (dtype) {
    case PC_DTYPE_FLOAT32:
      return "float32";
    case PC_DTYPE_FLOAT16:
      return "float16";
    case PC_DTYPE_BFLOAT16:
      return "bfloat16";
  }
  return "unknown";
}

}  // namespace pagecheck::kernels
