#pragma once
/// Small problem builders for the reference's self-check and tests: a shape description plus
/// a content seed, so property tests shrink the shape while contents stay reproducible.
/// Every element the kernels must not read (unused slots and blocks, stride padding) is NaN,
/// and block-table entries past a sequence's last block hold out-of-range values.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::verify {

/// Shape and content knobs of one paged-attention problem.
struct AttentionSpec {
  DType dtype = DType::kFloat16;      ///< storage dtype
  int64_t num_heads = 4;              ///< query heads (a multiple of num_kv_heads)
  int64_t num_kv_heads = 4;           ///< kv heads
  int64_t head_size = 64;             ///< elements per head
  int64_t block_size = 16;            ///< slots per block
  std::vector<int32_t> context_lens;  ///< one entry per sequence, each >= 1
  int64_t extra_blocks = 2;           ///< physical blocks no sequence uses (NaN-filled)
  int64_t extra_table_cols = 1;       ///< block-table columns past the longest sequence
  bool alibi = false;                 ///< add ALiBi slopes
  bool share_prefix = false;          ///< sequences share leading blocks with sequence 0
  int64_t query_pad = 0;              ///< NaN padding after each query head and token
  int64_t cache_pad = 0;              ///< NaN padding added to every cache stride
  double spread = 1.0;                ///< std-dev of query/key entries (larger = peakier)
  uint64_t seed = 1;                  ///< content seed
  /// "float16 h64 b16 heads 4/4 ctx [1,17] alibi shared pad q2 c1 spread 1".
  std::string describe() const;
};

/// Builds the problem described by `spec` (scale = 1/sqrt(head_size)).
ref::PagedAttentionProblem make_attention_problem(const AttentionSpec& spec);

/// Shape and content knobs of one cache-copy problem.
struct CopySpec {
  DType dtype = DType::kFloat16;  ///< storage dtype
  int64_t num_kv_heads = 2;       ///< kv heads
  int64_t head_size = 64;         ///< elements per head
  int64_t block_size = 16;        ///< slots per block
  int64_t num_blocks = 4;         ///< physical blocks
  int64_t num_tokens = 8;         ///< tokens (at most num_blocks * block_size)
  double skip_fraction = 0.25;    ///< share of tokens whose slot is -1
  int64_t token_pad = 0;          ///< NaN padding after each head and token of key/value
  int64_t cache_pad = 0;          ///< NaN padding added to every cache stride
  uint64_t seed = 1;              ///< content seed
  /// "float16 h64 b16 kv 2 blocks 4 tokens 8 skip 0.25 pad t0 c0".
  std::string describe() const;
};

/// Builds the problem described by `spec`: distinct slots (some -1), random caches and tokens
/// (padding NaN).
ref::CacheCopyProblem make_copy_problem(const CopySpec& spec);

/// Cache layout with every stride enlarged by `pad` elements (pad 0 = packed).
ref::PagedCacheLayout padded_cache_layout(DType dtype, int64_t num_blocks, int64_t num_kv_heads,
                                          int64_t head_size, int64_t block_size, int64_t pad);
/// Token layout with `pad` elements after each head and each token.
ref::TokenLayout padded_token_layout(int64_t num_tokens, int64_t num_heads, int64_t head_size,
                                     int64_t pad);

/// Overwrites every element of `buffer` with NaN in `dtype`.
void fill_nan(DType dtype, std::vector<std::byte>& buffer);

}  // namespace pagecheck::verify
