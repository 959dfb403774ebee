#pragma once
/// Layout descriptors of the paged KV cache and of contiguous token tensors, with the
/// reference's own offset arithmetic (never shared with the kernels).
#include <cstdint>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::ref {

/// Paged KV cache in the serving-engine layout. All strides are in elements.
/// key:   [num_blocks, num_kv_heads, head_size / x, block_size, x]   (innermost stride 1)
/// value: [num_blocks, num_kv_heads, head_size, block_size]          (innermost stride 1)
struct PagedCacheLayout {
  int64_t num_blocks = 0;          ///< physical blocks in the pool
  int64_t num_kv_heads = 0;        ///< key/value heads
  int64_t head_size = 0;           ///< elements per head
  int64_t block_size = 0;          ///< token slots per block
  int64_t x = 0;                   ///< elements per 16-byte vector: 16 / dtype_size
  int64_t key_stride_block = 0;    ///< key: elements between consecutive blocks
  int64_t key_stride_head = 0;     ///< key: elements between consecutive kv heads
  int64_t key_stride_group = 0;    ///< key: elements between consecutive x-groups of a head
  int64_t key_stride_slot = 0;     ///< key: elements between consecutive slots (>= x)
  int64_t value_stride_block = 0;  ///< value: elements between consecutive blocks
  int64_t value_stride_head = 0;   ///< value: elements between consecutive kv heads
  int64_t value_stride_dim = 0;    ///< value: elements between consecutive dims (>= block_size)

  /// The densely packed layout, as serving engines allocate it.
  static PagedCacheLayout packed(DType dtype, int64_t num_blocks, int64_t num_kv_heads,
                                 int64_t head_size, int64_t block_size);
  /// Throws std::invalid_argument naming the offending field when the layout is inconsistent
  /// for `dtype` (non-positive sizes, head_size not a multiple of x, overlapping strides).
  void validate(DType dtype) const;
  /// Element offset of key[block][head][dim / x][slot][dim % x].
  int64_t key_offset(int64_t block, int64_t head, int64_t dim, int64_t slot) const;
  /// Element offset of value[block][head][dim][slot].
  int64_t value_offset(int64_t block, int64_t head, int64_t dim, int64_t slot) const;
  /// Elements a key cache buffer must hold (largest offset + 1).
  int64_t key_span() const;
  /// Elements a value cache buffer must hold (largest offset + 1).
  int64_t value_span() const;
};

/// Contiguous token tensor [num_tokens, num_heads, head_size] with strided tokens and heads
/// (innermost stride 1), e.g. a query sliced out of a fused QKV tensor.
struct TokenLayout {
  int64_t num_tokens = 0;    ///< tokens (sequences for a decode query)
  int64_t num_heads = 0;     ///< heads
  int64_t head_size = 0;     ///< elements per head
  int64_t stride_token = 0;  ///< elements between consecutive tokens
  int64_t stride_head = 0;   ///< elements between consecutive heads

  /// Densely packed [num_tokens, num_heads, head_size].
  static TokenLayout packed(int64_t num_tokens, int64_t num_heads, int64_t head_size);
  /// Throws std::invalid_argument naming `name` and the offending field.
  void validate(const char* name) const;
  /// Element offset of [token][head][dim].
  int64_t offset(int64_t token, int64_t head, int64_t dim) const;
  /// Elements a buffer must hold (largest offset + 1; 0 when empty).
  int64_t span() const;
};

}  // namespace pagecheck::ref
