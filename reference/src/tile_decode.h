#pragma once
/// Internal to the reference: decodes one (block, kv head) tile of the paged caches into
/// doubles. Float16 goes through the F16C instruction when the CPU has it (an exact IEEE
/// conversion), otherwise (or when the environment variable PAGECHECK_REFERENCE_NO_F16C is
/// set) through a 65536-entry table built with Eigen::half; bfloat16 is a
/// 16-bit shift into a float; float32 is widened. All three are exact.
#include <cstddef>
#include <cstdint>

#include "pagecheck/reference/layout.h"

namespace pagecheck::ref::detail {

/// Decodes slots [0, rows) of key tile (block, head): dst[slot * head_size + dim].
/// Slots >= rows are never read.
void decode_key_tile(DType dtype, const PagedCacheLayout& cache, const std::byte* key_cache,
                     int64_t block, int64_t head, int64_t rows, double* dst);

/// Decodes slots [0, cols) of value tile (block, head): dst[dim * block_size + slot].
/// Slots >= cols are never read.
void decode_value_tile(DType dtype, const PagedCacheLayout& cache, const std::byte* value_cache,
                       int64_t block, int64_t head, int64_t cols, double* dst);

/// Asks the CPU to start loading key tile (block, head): a cache hint, no value is read.
void prefetch_key_tile(DType dtype, const PagedCacheLayout& cache, const std::byte* key_cache,
                       int64_t block, int64_t head);
/// Asks the CPU to start loading value tile (block, head): a cache hint, no value is read.
void prefetch_value_tile(DType dtype, const PagedCacheLayout& cache, const std::byte* value_cache,
                         int64_t block, int64_t head);

/// True when float16 tiles are decoded with F16C on this CPU.
bool float16_uses_f16c();

}  // namespace pagecheck::ref::detail
