#pragma once
/// Kernel-side parameters of the KV-cache copy kernels (gather_cached_kv, reshape_and_cache),
/// built on the host from the plugin args and passed by value. Strides in elements, 64-bit.
#include <cstdint>

namespace pagecheck::kernels {

/// The two copy directions share one description: the cache side and the token side.
struct CopyParams {
  int64_t num_tokens;           ///< rows of the token tensors
  int32_t num_kv_heads;         ///< heads per token
  int32_t head_size;            ///< elements per head
  int32_t block_size;           ///< slots per cache block
  void* key_cache;              ///< [blocks, kv_heads, head_size / x, block_size, x]
  int64_t kc_stride_block;      ///< key cache: elements between blocks
  int64_t kc_stride_head;       ///< key cache: elements between kv heads
  int64_t kc_stride_group;      ///< key cache: elements between x-groups
  int64_t kc_stride_slot;       ///< key cache: elements between slots
  void* value_cache;            ///< [blocks, kv_heads, head_size, block_size]
  int64_t vc_stride_block;      ///< value cache: elements between blocks
  int64_t vc_stride_head;       ///< value cache: elements between kv heads
  int64_t vc_stride_dim;        ///< value cache: elements between dims
  void* key;                    ///< [num_tokens, num_kv_heads, head_size]
  int64_t key_stride_token;     ///< elements between key rows
  int64_t key_stride_head;      ///< elements between key heads
  void* value;                  ///< [num_tokens, num_kv_heads, head_size]
  int64_t value_stride_token;   ///< elements between value rows
  int64_t value_stride_head;    ///< elements between value heads
  const int64_t* slot_mapping;  ///< [num_tokens]: block * block_size + offset, or -1 (skip)
};

/// The built-in copy designs (docs/kernels.md).
enum class CopyVariant : int {
  kScalar = 0,      ///< one thread per element, scalar loads and stores ("naive", "scalar")
  kVectorized = 1,  ///< tokens per block, 16-byte key accesses, 16-byte token-side accesses
};

}  // namespace pagecheck::kernels
