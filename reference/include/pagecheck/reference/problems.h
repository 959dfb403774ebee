#pragma once
/// Host-side problem descriptions: every input of one kernel call, in raw storage bytes.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::ref {

/// One paged-attention decode call: one query token per sequence.
struct PagedAttentionProblem {
  DType dtype = DType::kFloat16;       ///< storage dtype of query, caches and output
  int64_t num_seqs = 0;                ///< sequences in the batch
  int64_t num_heads = 0;               ///< query heads (a multiple of cache.num_kv_heads)
  int64_t max_blocks_per_seq = 0;      ///< columns of the block table
  float scale = 1.0f;                  ///< logit scale, usually 1/sqrt(head_size)
  TokenLayout query_layout;            ///< query [num_seqs, num_heads, head_size]
  PagedCacheLayout cache;              ///< key and value cache layout
  std::vector<std::byte> query;        ///< raw storage, query_layout.span() elements
  std::vector<std::byte> key_cache;    ///< raw storage, cache.key_span() elements
  std::vector<std::byte> value_cache;  ///< raw storage, cache.value_span() elements
  std::vector<int32_t> block_table;    ///< [num_seqs, max_blocks_per_seq], row-major dense
  std::vector<int32_t> context_lens;   ///< [num_seqs], each in [1, max_blocks_per_seq*block_size]
  std::vector<float> alibi_slopes;     ///< [num_heads], or empty for no ALiBi
  /// Entries between block-table rows in the table a kernel receives (0 = max_blocks_per_seq).
  /// block_table above stays dense; strided_block_table() builds the kernel's table, whose
  /// entries between the rows hold block_table_padding. The reference never reads them.
  int64_t block_table_stride = 0;
  int32_t block_table_padding = -1;  ///< entry written into the rows' padding
  /// The host-side max_context_len a kernel receives (0 = the largest context); at least the
  /// largest context and at most max_blocks_per_seq * block_size.
  int64_t context_len_bound = 0;

  int64_t head_size() const { return cache.head_size; }
  int64_t block_size() const { return cache.block_size; }
  int64_t num_kv_heads() const { return cache.num_kv_heads; }
  /// Largest context length in the batch.
  int64_t max_context_len() const;
  /// The max_context_len a kernel receives: context_len_bound, or the largest context.
  int64_t host_max_context_len() const;
  /// The block-table row stride a kernel receives: block_table_stride, or max_blocks_per_seq.
  int64_t table_stride() const;
  /// The block table as a kernel receives it: [num_seqs, table_stride()], each row's entries
  /// past max_blocks_per_seq set to block_table_padding.
  std::vector<int32_t> strided_block_table() const;
  /// Throws std::invalid_argument naming the argument when shapes or indices are inconsistent:
  /// buffer sizes, num_heads % num_kv_heads, a used block index outside [0, num_blocks), a
  /// context length of 0 or longer than the block table, alibi_slopes of the wrong length, a
  /// block_table_stride below max_blocks_per_seq, a context_len_bound outside
  /// [largest context, max_blocks_per_seq * block_size].
  void validate() const;
};

/// One KV-cache copy call between the paged cache and contiguous K/V.
/// gather_cached_kv: cache -> key/value; reshape_and_cache: key/value -> cache.
struct CacheCopyProblem {
  DType dtype = DType::kFloat16;       ///< storage dtype of every tensor
  PagedCacheLayout cache;              ///< key and value cache layout
  TokenLayout key_layout;              ///< contiguous key [num_tokens, num_kv_heads, head_size]
  TokenLayout value_layout;            ///< contiguous value [num_tokens, num_kv_heads, head_size]
  std::vector<int64_t> slot_mapping;   ///< [num_tokens]: block * block_size + offset, or -1 = skip
  std::vector<std::byte> key_cache;    ///< raw storage, cache.key_span() elements
  std::vector<std::byte> value_cache;  ///< raw storage, cache.value_span() elements
  std::vector<std::byte> key;          ///< raw storage, key_layout.span() elements
  std::vector<std::byte> value;        ///< raw storage, value_layout.span() elements

  int64_t num_tokens() const { return key_layout.num_tokens; }
  /// Throws std::invalid_argument naming the argument: layouts that disagree, buffer sizes,
  /// a slot outside [-1, num_blocks * block_size).
  void validate() const;
};

}  // namespace pagecheck::ref
