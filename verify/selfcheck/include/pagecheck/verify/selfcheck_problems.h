#pragma once
/// Small problem builders for the reference's self-check and tests: a shape description plus
/// a content seed, so property tests shrink the shape while contents stay reproducible.
/// Every element the reference must not read (unused slots and blocks, stride padding, and
/// tokens no query row attends) is NaN, and block-table entries past a sequence's last block
/// hold out-of-range values. Cache layouts come from ref::make_cache_layout only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::verify {

/// Shape and content knobs of one paged-attention problem.
struct AttentionSpec {
  DType dtype = DType::kFloat16;  ///< storage dtype of query and output
  int64_t num_heads = 4;          ///< query heads (a multiple of num_kv_heads)
  int64_t num_kv_heads = 4;       ///< kv heads
  int64_t head_size = 64;         ///< elements per head
  int64_t block_size = 16;        ///< slots per block
  /// One entry per sequence, each >= 0 (0: a padding row that attends nothing).
  std::vector<int32_t> context_lens;
  /// New query tokens per sequence, each <= its context unless the context is 0; empty = one
  /// per sequence (decode).
  std::vector<int32_t> query_lens;
  int64_t extra_blocks = 2;      ///< physical blocks no sequence uses (NaN-filled)
  int64_t extra_table_cols = 1;  ///< block-table columns past the longest sequence
  bool alibi = false;            ///< add ALiBi slopes 2^(-8 (h + 1) / num_heads)
  bool sinks = false;            ///< add sink logits drawn from the seed in [-3, 5]
  int64_t window = 0;            ///< sliding window (0 = none)
  float soft_cap = 0.0f;         ///< logit soft-cap (0 = none)
  bool causal = true;            ///< causal among a sequence's new tokens
  bool share_prefix = false;     ///< sequences share leading blocks with sequence 0
  int64_t query_pad = 0;         ///< NaN padding after each query head and token
  int64_t cache_pad = 0;         ///< NaN padding added to the block, head and slot strides
  ref::CacheKind kind = ref::CacheKind::kXSplit;  ///< page layout
  std::optional<DType> cache_dtype;               ///< storage dtype of K and V (empty = dtype)
  /// fp8 scales (kNone for a 16/32-bit cache); values drawn from the seed, each a float with
  /// at most 9 significant bits, so a dequantized fp8 value is exact in float32.
  ref::ScaleKind scale_kind = ref::ScaleKind::kNone;
  bool combined = false;  ///< K and V in one allocation
  double spread = 1.0;    ///< std-dev of query/key entries (larger = peakier)
  uint64_t seed = 1;      ///< content seed
  /// The KV storage dtype: cache_dtype, or dtype.
  DType kv_dtype() const { return cache_dtype.value_or(dtype); }
  /// "float16 h64 b16 heads 4/4 ctx [1,17] q [1,3] alibi sinks window 8 cap 30 noncausal
  /// shared pad q2 c1 nhd kv fp8_e4m3 per_kv_head combined spread 1".
  std::string describe() const;
};

/// Builds the problem described by `spec` (scale = 1/sqrt(head_size)).
ref::PagedAttentionProblem make_attention_problem(const AttentionSpec& spec);

/// Shape and content knobs of one cache-copy problem.
struct CopySpec {
  DType dtype = DType::kFloat16;  ///< storage dtype of the contiguous key / value
  int64_t num_kv_heads = 2;       ///< kv heads
  int64_t head_size = 64;         ///< elements per head
  int64_t block_size = 16;        ///< slots per block
  int64_t num_blocks = 4;         ///< physical blocks
  int64_t num_tokens = 8;         ///< tokens (at most num_blocks * block_size)
  double skip_fraction = 0.25;    ///< share of tokens whose slot is -1
  int64_t token_pad = 0;          ///< NaN padding after each head and token of key/value
  int64_t cache_pad = 0;          ///< NaN padding added to the block, head and slot strides
  ref::CacheKind kind = ref::CacheKind::kXSplit;      ///< page layout
  std::optional<DType> cache_dtype;                   ///< storage dtype of K and V (empty = dtype)
  ref::ScaleKind scale_kind = ref::ScaleKind::kNone;  ///< fp8 scales, as in AttentionSpec
  bool combined = false;                              ///< K and V in one allocation
  bool dequantize = false;  ///< gather: rows receive code * scale in dtype
  uint64_t seed = 1;        ///< content seed
  /// The KV storage dtype: cache_dtype, or dtype.
  DType kv_dtype() const { return cache_dtype.value_or(dtype); }
  /// "float16 h64 b16 kv 2 blocks 4 tokens 8 skip 0.25 pad t0 c0 nhd kv fp8_e4m3 per_tensor".
  std::string describe() const;
};

/// Builds the problem described by `spec`: distinct slots (some -1), random caches and tokens
/// (padding NaN).
ref::CacheCopyProblem make_copy_problem(const CopySpec& spec);

/// The padding make_cache_layout receives for a spec's `cache_pad`: `pad` added to the block,
/// head and slot strides of K and of V.
ref::CachePadding uniform_cache_padding(int64_t pad);
/// Token layout with `pad` elements after each head and each token.
ref::TokenLayout padded_token_layout(int64_t num_tokens, int64_t num_heads, int64_t head_size,
                                     int64_t pad);

/// Overwrites every element of `buffer` with NaN in `dtype`.
void fill_nan(DType dtype, std::vector<std::byte>& buffer);

}  // namespace pagecheck::verify
