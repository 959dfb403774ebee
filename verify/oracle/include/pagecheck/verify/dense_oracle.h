#pragma once
/// An independently written oracle for the reference: dense per-sequence K/V built with its own
/// offset arithmetic from the layouts' raw stride fields (no layout methods, no reference code
/// but dtype loads and stores), attention in long double with a two-pass softmax over a token
/// set it decides token by token, and plain copy loops. Slow on purpose (plain loops); meant
/// for small problems.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::oracle {

/// Keys and values of one sequence, densely packed [context_len, num_kv_heads, head_size],
/// dequantized (an fp8 code times its scale).
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

/// Oracle attention output, in long double, one row per query token of the batch.
struct OracleAttention {
  int64_t num_rows = 0;          ///< query rows
  int64_t num_heads = 0;         ///< heads per row
  int64_t head_size = 0;         ///< elements per head
  std::vector<long double> out;  ///< [num_rows, num_heads, head_size]
  /// [num_rows, num_heads], natural log of the softmax denominator (sink included); -inf for a
  /// row that attends no token.
  std::vector<long double> lse;
  /// [num_rows, num_heads]: max over attended tokens of |scale| * sum_d |q_d k_d| + |ALiBi
  /// term|, and |sink| (the magnitude the logit sums pass through; sets how much a double
  /// computation may round).
  std::vector<long double> logit_magnitude;
  /// [num_rows, num_heads]: max |v| over the tokens the row attends.
  std::vector<long double> value_magnitude;
  /// [num_rows]: tokens the row attends.
  std::vector<int64_t> attended;
  /// `out` rounded to double.
  std::vector<double> out_double() const;
  /// `lse` rounded to double.
  std::vector<double> lse_double() const;
};

/// For query row i of sequence s at position p = context_len - q_len + i: token t attends
/// when t < context_len, (not causal or t <= p) and (window 0 or t > p - window);
/// l_t = cap * tanh(scale q.k_t / cap) (or scale q.k_t without a cap) + slope[h] * (t - p);
/// out = sum_t exp(l_t - m) v_t / (sum_t exp(l_t - m) + exp(sink - m)), m = max(max_t l_t,
/// sink), kv head = h / (num_heads / num_kv_heads). Throws std::out_of_range on out-of-buffer
/// reads.
OracleAttention paged_attention(const ref::PagedAttentionProblem& problem);

/// The buffers a copy oracle produces.
struct CopyBuffers {
  std::vector<std::byte> key;    ///< gather: contiguous key; reshape: key cache
  std::vector<std::byte> value;  ///< gather: contiguous value; reshape: value cache (empty
                                 ///< for a combined cache: both halves are in `key`)
};

/// problem.key / problem.value after copying every token with slot != -1 out of the caches
/// (raw elements when problem.dtype is the cache's dtype; otherwise the float32 product
/// code * scale, rounded to problem.dtype).
CopyBuffers gather_cached_kv(const ref::CacheCopyProblem& problem);
/// problem.key_cache / problem.value_cache after writing every token with slot != -1 into
/// them (raw elements when problem.dtype is the cache's dtype; otherwise the float32 quotient
/// value / scale, rounded to the fp8 grid).
CopyBuffers reshape_and_cache(const ref::CacheCopyProblem& problem);

}  // namespace pagecheck::oracle
