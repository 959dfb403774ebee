#pragma once
/// Reference paged attention over a ragged batch, accumulated in double.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

/// Result of the reference: dense [num_rows, num_heads, head_size] in float64, one row per query
/// token of the batch (problem.batch.num_query_tokens()).
struct PagedAttentionResult {
  int64_t num_rows = 0;     ///< query rows (query tokens of the batch)
  int64_t num_heads = 0;    ///< heads per row
  int64_t head_size = 0;    ///< elements per head
  std::vector<double> out;  ///< [num_rows, num_heads, head_size] float64 output
  /// [num_rows, num_heads]: natural log of the softmax denominator, sum over the attended
  /// tokens of exp(logit) plus exp(sink) when sinks are given; -inf for a row that attends no
  /// token (a context of 0).
  std::vector<double> lse;
  /// The output rounded to the storage dtype, densely packed (raw bytes).
  std::vector<std::byte> out_storage(DType dtype) const;
};

/// Options of the reference run.
struct ReferenceOptions {
  int num_threads = 0;  ///< 0 = std::thread::hardware_concurrency()
};

/// For query row i of sequence s at position p = context_lens[s] - query_len(s) + i and query
/// head h (kv head h / (num_heads / num_kv_heads)): the attended key positions are
/// t in [0, context_lens[s]) with t <= p when causal and t > p - window when window > 0;
/// logit_t = scale * q.k_t, soft-capped (cap * tanh(logit / cap)), plus slope[h] * (t - p);
/// out = sum_t softmax_t * v_t where the softmax denominator also holds exp(sinks[h]). fp8
/// K and V are their codes times k_scale / v_scale. A row with no attended token gives
/// out = 0 and lse = -inf. docs/reference.md writes the order out. Validates first.
PagedAttentionResult paged_attention(const PagedAttentionProblem& problem,
                                     const ReferenceOptions& options = {});

}  // namespace pagecheck::ref
