#pragma once
/// Host-side problem descriptions: every input of one kernel call, in raw storage bytes. These
/// structs are pagecheck's one vocabulary for a problem (docs/design.md): the generators, the
/// device runner, goldens, self-check, GPU tests, bench and the Python package all describe a
/// call with them, and the plugin ABI v2 mirrors them field for field.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::ref {

/// The ragged batch of one attention call: per sequence, its new query tokens and its context
/// (the tokens in the cache, new tokens included), reached through a block table.
struct RaggedBatch {
  int64_t num_seqs = 0;  ///< sequences in the batch
  /// [num_seqs + 1] cumulative query tokens: sequence s owns query rows
  /// [query_start[s], query_start[s + 1]). Empty = one query token per sequence (decode).
  std::vector<int32_t> query_start;
  /// [num_seqs] tokens in the cache per sequence, the sequence's new tokens included (so
  /// context_lens[s] >= its query length), or 0 for a padding row of the batch (its query rows
  /// attend to nothing; the variant declares what it writes there).
  std::vector<int32_t> context_lens;
  int64_t max_blocks_per_seq = 0;    ///< columns of the block table
  std::vector<int32_t> block_table;  ///< [num_seqs, max_blocks_per_seq], row-major dense
  /// Entries between block-table rows in the table a kernel receives (0 = max_blocks_per_seq).
  /// block_table above stays dense; strided_block_table() builds the kernel's table, whose
  /// entries between the rows hold block_table_padding. The reference never reads them.
  int64_t block_table_stride = 0;
  int32_t block_table_padding = -1;  ///< entry written into the rows' padding
  /// The host-side max_context_len a kernel receives (0 = the largest context); at least the
  /// largest context and at most max_blocks_per_seq * block_size.
  int64_t context_len_bound = 0;

  /// Query tokens of sequence `seq` (1 when query_start is empty).
  int64_t query_len(int64_t seq) const;
  /// First query row of sequence `seq`.
  int64_t query_begin(int64_t seq) const;
  /// Query rows of the whole batch.
  int64_t num_query_tokens() const;
  /// Longest query of the batch.
  int64_t max_query_len() const;
  /// Largest context length in the batch.
  int64_t max_context_len() const;
  /// The max_context_len a kernel receives: context_len_bound, or the largest context.
  int64_t host_max_context_len() const;
  /// The block-table row stride a kernel receives: block_table_stride, or max_blocks_per_seq.
  int64_t table_stride() const;
  /// The block table as a kernel receives it: [num_seqs, table_stride()], each row's entries
  /// past max_blocks_per_seq set to block_table_padding.
  std::vector<int32_t> strided_block_table() const;
};

/// Attention features beyond plain softmax(scale q.k) v. The order in which they apply is
/// written once, in docs/reference.md: scale, soft-cap, ALiBi, window mask, sink.
struct AttentionFeatures {
  /// [num_heads], or empty: logit += slope[h] * (t - p) for key position t and query position p.
  std::vector<float> alibi_slopes;
  /// [num_heads], or empty: a learned logit per head that joins the softmax denominator (no
  /// value, so it only scales the output down).
  std::vector<float> sinks;
  /// 0 = no window; W > 0: the query at position p attends only to key positions t > p - W
  /// (with causal, that is (p - W, p]).
  int64_t window = 0;
  /// 0 = no soft-cap; cap > 0: logit = cap * tanh(scale * q.k / cap), before ALiBi.
  float soft_cap = 0.0f;
  /// True: new tokens of a sequence attend causally to each other (key position <= query
  /// position). False: every query row attends to the whole context.
  bool causal = true;

  /// True when any feature differs from plain attention (ALiBi excepted).
  bool any_beyond_alibi() const { return !sinks.empty() || window > 0 || soft_cap > 0 || !causal; }
};

/// Key positions [lo, hi) that one query row attends (lo == hi: none).
struct AttendedRange {
  int64_t position = 0;  ///< the row's position p = context_len - query_len + row
  int64_t lo = 0;        ///< first attended key position
  int64_t hi = 0;        ///< one past the last attended key position (hi >= lo)

  /// True when the row attends no key.
  bool empty() const { return lo >= hi; }
};

/// The one rule for which keys a query row attends: row `row` (0 <= row < query_len) of a
/// sequence with `context_len` cached tokens (its new tokens included) sits at position
/// p = context_len - query_len + row and attends [0, context_len), cut to t <= p when causal
/// and to t > p - window when windowed (docs/reference.md).
AttendedRange attended_range(const AttentionFeatures& features, int64_t context_len,
                             int64_t query_len, int64_t row);

/// One paged-attention call: the query rows of a ragged batch against the paged cache.
/// Query row i of sequence s (0 <= i < q_len) sits at position p = context_len - q_len + i.
struct PagedAttentionProblem {
  DType dtype = DType::kFloat16;       ///< storage dtype of query and output (not fp8)
  int64_t num_heads = 0;               ///< query heads (a multiple of cache.num_kv_heads)
  float scale = 1.0f;                  ///< logit scale, usually 1/sqrt(head_size)
  TokenLayout query_layout;            ///< query [num_query_tokens, num_heads, head_size]
  PagedCacheLayout cache;              ///< key and value cache (its own dtype, may be fp8)
  RaggedBatch batch;                   ///< sequences, contexts, block table
  AttentionFeatures features;          ///< ALiBi, sinks, window, soft-cap, causal
  std::vector<std::byte> query;        ///< raw storage, query_layout.span() elements
  std::vector<std::byte> key_cache;    ///< raw storage, cache.key_span() elements
  std::vector<std::byte> value_cache;  ///< raw storage, cache.value_span() elements
  /// Scales of an fp8 cache: 1 entry (per tensor) or num_kv_heads (per KV head); empty for
  /// ScaleKind::kNone.
  std::vector<float> k_scale;
  std::vector<float> v_scale;  ///< as k_scale, for V

  int64_t head_size() const { return cache.head_size; }
  int64_t block_size() const { return cache.block_size; }
  int64_t num_kv_heads() const { return cache.num_kv_heads; }
  int64_t num_seqs() const { return batch.num_seqs; }
  /// The keys query row `row_in_seq` of sequence `seq` attends (attended_range).
  AttendedRange attended(int64_t seq, int64_t row_in_seq) const;
  /// Throws std::invalid_argument naming the argument when shapes or indices are inconsistent:
  /// buffer sizes, num_heads % num_kv_heads, a used block index outside [0, num_blocks), a
  /// context shorter than its query (other than 0) or longer than the block table, query_start
  /// decreasing or not running from 0 to query_layout.num_tokens (a sequence may have no query
  /// rows), feature arrays of the wrong length, a
  /// negative window or soft-cap, scales that disagree with cache.scale_kind or are not finite
  /// and positive, a block_table_stride below max_blocks_per_seq, a context_len_bound outside
  /// [largest context, max_blocks_per_seq * block_size].
  void validate() const;
};

/// One KV-cache copy call between the paged cache and contiguous K/V.
/// gather_cached_kv: cache -> key/value; reshape_and_cache: key/value -> cache.
struct CacheCopyProblem {
  DType dtype = DType::kFloat16;       ///< storage dtype of the contiguous key / value
  PagedCacheLayout cache;              ///< key and value cache (its own dtype, may be fp8)
  TokenLayout key_layout;              ///< contiguous key [num_tokens, num_kv_heads, head_size]
  TokenLayout value_layout;            ///< contiguous value [num_tokens, num_kv_heads, head_size]
  std::vector<int64_t> slot_mapping;   ///< [num_tokens]: block * block_size + offset, or -1 = skip
  std::vector<std::byte> key_cache;    ///< raw storage, cache.key_span() elements
  std::vector<std::byte> value_cache;  ///< raw storage, cache.value_span() elements
  std::vector<std::byte> key;          ///< raw storage, key_layout.span() elements of dtype
  std::vector<std::byte> value;        ///< raw storage, value_layout.span() elements of dtype
  std::vector<float> k_scale;          ///< fp8 scales as in PagedAttentionProblem
  std::vector<float> v_scale;          ///< fp8 scales as in PagedAttentionProblem
  /// gather only: true = the rows receive dequantized values in `dtype`; false = raw codes,
  /// and then dtype must equal cache.dtype. reshape_and_cache always converts (quantizes when
  /// the cache is fp8; otherwise dtype must equal cache.dtype and the copy is exact).
  bool dequantize = false;

  int64_t num_tokens() const { return key_layout.num_tokens; }
  /// Throws std::invalid_argument naming the argument: layouts that disagree, buffer sizes,
  /// a slot outside [-1, num_blocks * block_size), dtypes the copy cannot convert, scales that
  /// disagree with cache.scale_kind.
  void validate() const;
};

}  // namespace pagecheck::ref
