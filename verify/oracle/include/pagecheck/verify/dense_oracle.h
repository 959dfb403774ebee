#pragma once
/// An independently written oracle for the reference: dense per-sequence K/V built with its own
/// offset arithmetic from the layouts' public fields (no layout methods, no reference code but
/// dtype loads), attention in long double with a two-pass softmax, and plain copy loops.
/// Slow on purpose (plain loops); meant for small problems.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::oracle {

/// Keys and values of one sequence, densely packed [context_len, num_kv_heads, head_size].
struct DenseSequenceKV {
  int64_t context_len = 0;         ///< tokens of the sequence
  int64_t num_kv_heads = 0;        ///< kv heads
  int64_t head_size = 0;           ///< elements per head
  std::vector<long double> key;    ///< [context_len, num_kv_heads, head_size]
  std::vector<long double> value;  ///< [context_len, num_kv_heads, head_size]
};

/// Gathers sequence `seq`'s context from the paged caches through its block-table row. Throws
/// std::out_of_range when a used block index or an element offset falls outside the buffers.
DenseSequenceKV dense_sequence_kv(const ref::PagedAttentionProblem& problem, int64_t seq);

/// Oracle attention output, in long double.
struct OracleAttention {
  int64_t num_seqs = 0;          ///< rows
  int64_t num_heads = 0;         ///< heads per row
  int64_t head_size = 0;         ///< elements per head
  std::vector<long double> out;  ///< [num_seqs, num_heads, head_size]
  std::vector<long double> lse;  ///< [num_seqs, num_heads], natural log of sum exp(logits)
  /// [num_seqs, num_heads]: max over tokens of |scale| * sum_d |q_d k_d| + |alibi term|, the
  /// magnitude the logit sums pass through (sets how much a double computation may round).
  std::vector<long double> logit_magnitude;
  /// [num_seqs, num_heads]: max |v| over the head's context.
  std::vector<long double> value_magnitude;
  /// `out` rounded to double.
  std::vector<double> out_double() const;
  /// `lse` rounded to double.
  std::vector<double> lse_double() const;
};

/// out[s,h] = sum_t exp(l_t - m) v_t / sum_t exp(l_t - m) with
/// l_t = scale * q.k_t + alibi_slopes[h] * (t - context_len + 1), m = max_t l_t (two passes),
/// kv head = h / (num_heads / num_kv_heads). Throws std::out_of_range on out-of-buffer reads.
OracleAttention paged_attention(const ref::PagedAttentionProblem& problem);

/// The buffers a copy oracle produces.
struct CopyBuffers {
  std::vector<std::byte> key;    ///< gather: contiguous key; reshape: key cache
  std::vector<std::byte> value;  ///< gather: contiguous value; reshape: value cache
};

/// problem.key / problem.value after copying every token with slot != -1 out of the caches.
CopyBuffers gather_cached_kv(const ref::CacheCopyProblem& problem);
/// problem.key_cache / problem.value_cache after writing every token with slot != -1 into them.
CopyBuffers reshape_and_cache(const ref::CacheCopyProblem& problem);

}  // namespace pagecheck::oracle
