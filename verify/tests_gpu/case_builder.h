#pragma once
/// Fixed, seeded test problems for the GPU tests. Contents are random of mixed sign and never
/// zero; every cache element no sequence / token may read is NaN; block-table entries past a
/// sequence's last block hold an out-of-range index.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::gpu_test {

/// One paged-attention case.
struct AttentionCase {
  std::string name;                   ///< gtest parameter name
  DType dtype = DType::kFloat16;      ///< storage dtype
  int64_t head_size = 128;            ///< elements per head
  int64_t block_size = 16;            ///< slots per block
  int64_t num_heads = 4;              ///< query heads
  int64_t num_kv_heads = 4;           ///< kv heads (divides num_heads)
  std::vector<int32_t> context_lens;  ///< one entry per sequence
  bool alibi = false;                 ///< ALiBi slopes
  bool padded_cache = false;          ///< padded block / head / group / dim strides
  bool strided_query = false;         ///< query sliced from a fused QKV tensor
  bool strided_out = false;           ///< output written into a padded buffer
  bool peaked = false;                ///< logit spread of several units plus a dominant key
  bool shared_prefix = false;         ///< sequence 1 reuses sequence 0's first block
  int64_t extra_blocks = 3;           ///< unreferenced (NaN) physical blocks in the pool
  int64_t min_pool_blocks = 0;        ///< pool size at least this (large-cache cases)
  bool high_blocks = false;           ///< place referenced blocks at the end of the pool
  uint64_t seed = 1;                  ///< content seed
};

/// One KV-cache copy case (used for both gather and reshape).
struct CopyCase {
  std::string name;               ///< gtest parameter name
  DType dtype = DType::kFloat16;  ///< storage dtype
  int64_t head_size = 128;        ///< elements per head
  int64_t block_size = 16;        ///< slots per block
  int64_t num_kv_heads = 4;       ///< heads per token
  int64_t num_tokens = 16;        ///< rows
  int64_t num_blocks = 8;         ///< physical blocks in the pool
  int skip_every = 5;             ///< every n-th token gets slot -1 (0 = none)
  bool padded_cache = false;      ///< padded cache strides
  bool strided_tokens = false;    ///< padded token rows and heads
  bool high_slots = false;        ///< take slots from the last blocks of the pool
  uint64_t seed = 1;              ///< content seed
};

std::ostream& operator<<(std::ostream& os, const AttentionCase& c);
std::ostream& operator<<(std::ostream& os, const CopyCase& c);

/// Builds the problem of an attention case.
ref::PagedAttentionProblem build_attention_problem(const AttentionCase& c);
/// The device output layout of an attention case (padded when strided_out).
std::optional<ref::TokenLayout> attention_out_layout(const AttentionCase& c);
/// max |v| over the finite value-cache elements.
double max_abs_value(const ref::PagedAttentionProblem& p);

/// A gather problem: random cache contents (NaN in unused slots), outputs pre-filled with NaN.
ref::CacheCopyProblem build_gather_problem(const CopyCase& c);
/// A reshape problem: random key/value rows, caches pre-filled with NaN.
ref::CacheCopyProblem build_reshape_problem(const CopyCase& c);

}  // namespace pagecheck::gpu_test
