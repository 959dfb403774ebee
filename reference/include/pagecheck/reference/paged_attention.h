#pragma once
/// Reference paged-attention decode, accumulated in double.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

/// Result of the reference: dense [num_seqs, num_heads, head_size] in float64.
struct PagedAttentionResult {
  int64_t num_seqs = 0;     ///< rows
  int64_t num_heads = 0;    ///< heads per row
  int64_t head_size = 0;    ///< elements per head
  std::vector<double> out;  ///< [num_seqs, num_heads, head_size] float64 output
  std::vector<double> lse;  ///< [num_seqs, num_heads] natural-log sum of exp(logits)
  /// The output rounded to the storage dtype, densely packed (raw bytes).
  std::vector<std::byte> out_storage(DType dtype) const;
};

/// Options of the reference run.
struct ReferenceOptions {
  int num_threads = 0;  ///< 0 = std::thread::hardware_concurrency()
};

/// out[s,h,:] = sum_t softmax_t(scale * q[s,h].k[t] + alibi) * v[t] over the sequence's
/// context_lens[s] tokens, with kv head = h / (num_heads / num_kv_heads). Validates first.
PagedAttentionResult paged_attention(const PagedAttentionProblem& problem,
                                     const ReferenceOptions& options = {});

}  // namespace pagecheck::ref
