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

/// True for the dtypes the kernels are compiled for (float32, float16, bfloat16; no fp8).
inline bool kernel_dtype(pc_dtype dtype) {
  return dtype == PC_DTYPE_FLOAT32 || dtype == PC_DTYPE_FLOAT16 || dtype == PC_DTYPE_BFLOAT16;
}

}  // namespace pagecheck::kernels
