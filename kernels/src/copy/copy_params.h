#pragma once
/// Kernel-side parameters of the KV-cache copy kernels (gather_cached_kv, reshape_and_cache),
/// built on the host from the plugin args and passed by value. Strides in elements of each
/// tensor's own dtype, 64-bit. Every cache offset comes from the strides (the layout kind is not
/// seen by the kernels): element (block, head, slot, dim) of a cache tensor is at
/// block*block + head*head + slot*slot + (dim / dim_split)*group + (dim % dim_split)*dim.
#include <cstdint>

#include "pagecheck/plugin.h"

namespace pagecheck::kernels {

/// One cache tensor (K, or V; V of a combined cache points value_base elements into K's buffer).
struct CacheTensor {
  void* data;         ///< element (0, 0, 0, 0)
  int64_t block;      ///< elements between blocks
  int64_t head;       ///< elements between kv heads
  int64_t slot;       ///< elements between slots of a block
  int64_t group;      ///< elements between dim groups (unused when dim_split == head_size)
  int64_t dim;        ///< elements between dims of a group
  int32_t dim_split;  ///< dims per group (>= 1, divides head_size)
  int32_t vector;     ///< non-zero: every chunk of 16 bytes of cache elements is contiguous and
                      ///< 16-byte aligned (dim == 1, dim_split a multiple of the chunk, aligned
                      ///< data and strides), so the vectorized kernels use one 16-byte access
  int32_t slot_rows;  ///< non-zero (only where vector is zero): slots are contiguous (slot == 1)
                      ///< and a run of kTileTokens slots from an offset that is a multiple of
                      ///< kTileTokens is one aligned row piece (copy_slot_rows.cuh), as in
                      ///< x-split values
};

/// One contiguous token tensor [num_tokens, num_kv_heads, head_size] with dim stride 1.
struct TokenTensor {
  void* data;            ///< element (0, 0, 0)
  int64_t stride_token;  ///< elements between token rows
  int64_t stride_head;   ///< elements between heads of a row
};

/// Division of a dividend in [0, 2^31) by a run-time constant d >= 1 without a divide sequence:
/// q = (umulhi(n, multiplier) + n) >> shift (built by make_fast_div in copy_plan.h).
struct FastDiv {
  uint32_t divisor;     ///< d
  uint32_t multiplier;  ///< floor(2^32 (2^shift - d) / d) + 1; 0 for d = 1
  uint32_t shift;       ///< ceil(log2 d)
};

/// The two copy directions share one description: the cache side and the token side.
struct CopyParams {
  int64_t num_tokens;           ///< rows of the token tensors
  int32_t num_kv_heads;         ///< heads per token
  int32_t head_size;            ///< elements per head
  int32_t block_size;           ///< slots per cache block
  CacheTensor key_cache;        ///< K of the cache
  CacheTensor value_cache;      ///< V of the cache
  TokenTensor key;              ///< contiguous K (gather: output, reshape: input)
  TokenTensor value;            ///< contiguous V
  const int64_t* slot_mapping;  ///< [num_tokens]: block * block_size + offset, or -1 (skip)
  const float* k_scale;         ///< fp8 conversions: K scale(s); unused by raw copies
  const float* v_scale;         ///< fp8 conversions: V scale(s)
  int32_t scale_per_head;       ///< non-zero: scale index = kv head (PER_KV_HEAD), else 0
  int32_t fp8_e5m2;             ///< fp8 conversions: non-zero E5M2, zero E4M3
  int32_t token_fastest;        ///< vectorized: lanes walk 8 consecutive tokens of one chunk
                                ///< (x-split style); zero: lanes walk the chunks of a token
  int32_t unroll;               ///< vectorized: items per thread, 1 or large_unroll() (the
                                ///< kernels' template argument)
  FastDiv item_div;             ///< vectorized: items per tile (token_fastest: kTileTokens x
                                ///< chunks per token) or chunks per token (otherwise); staged
                                ///< x-split kernels: blocks per tile (copy_plan.h staged_runs)
  FastDiv chunk_div;            ///< vectorized: chunks per head
  FastDiv block_div;            ///< block_size
};

/// Which element conversion a copy needs: the token-side and cache-side dtypes
/// (copy_dispatch.cuh maps it to a codec of copy_codec.cuh).
struct CopyCodecKey {
  pc_dtype token;  ///< dtype of the contiguous K / V
  pc_dtype cache;  ///< dtype of the cache (equal: raw copy; fp8 with a 16/32-bit token: convert)
};

/// The built-in copy designs (docs/kernels.md).
enum class CopyVariant : int {
  kScalar = 0,      ///< one thread per element, scalar loads and stores ("naive", "scalar")
  kVectorized = 1,  ///< 16-byte chunks: token side always vector, cache side where contiguous
};

}  // namespace pagecheck::kernels
