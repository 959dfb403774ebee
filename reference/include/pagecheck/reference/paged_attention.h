#pragma once
/// Reference paged attention over a ragged batch, accumulated in double.
#include <cstdint>
#include <functional>
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

/// What the reference forms for one query vector (query row `row`, query head `head`) before
/// its softmax, over the attended key positions [range.lo, range.hi). The pointers are valid
/// during the observer's call only.
struct RowIntermediates {
  int64_t row = 0;      ///< query row of the batch
  int64_t head = 0;     ///< query head
  AttendedRange range;  ///< attended key positions and the row's position
  /// [range.hi - range.lo]: the logits the softmax starts from, before the max subtraction:
  /// scale * q.k_t, soft-capped, plus slope[h] * (t - p) (the reference's own products).
  const double* logits = nullptr;
  /// [range.hi - range.lo]: scale * sum_d |q_d k_td| + |slope[h] * (t - p)|, the size of the
  /// terms each logit sums (summed over d in order, in double): what a rounding bound of the
  /// logit scales with.
  const double* magnitudes = nullptr;
};

/// The intermediates of one (sequence, kv head) group: every query row of `seq` times the
/// query heads of `kv_head`, row-major over (row of the sequence, head of the group).
struct GroupIntermediates {
  int64_t seq = 0;                     ///< sequence
  int64_t kv_head = 0;                 ///< kv head
  std::vector<RowIntermediates> rows;  ///< query_len(seq) x (num_heads / num_kv_heads)
};

/// Receives each group's intermediates once, after the group's out and lse are written; called
/// from the reference's worker threads, several groups at once. An exception it throws stops
/// the run and is rethrown by paged_attention.
using GroupObserver = std::function<void(const GroupIntermediates&)>;

/// paged_attention() that also hands every group's intermediates to `observe` (the per-row
/// logits and magnitudes, kept for one group at a time). The result is the same bit for bit.
PagedAttentionResult paged_attention(const PagedAttentionProblem& problem,
                                     const ReferenceOptions& options, const GroupObserver& observe);

}  // namespace pagecheck::ref
