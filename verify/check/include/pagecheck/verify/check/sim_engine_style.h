#pragma once
/// A test-only CPU variant that computes paged attention as serving engines' kernels do
/// (issue 13 §2): float32 logits, split-K partitions of 256 tokens, softmax weights normalized
/// per partition and rounded to the storage dtype, weight * value products rounded and summed
/// in the storage dtype in chunks of 8 terms (each chunk then joins a float32 accumulator),
/// per-partition outputs rounded to the storage dtype, and a float32 merge of the partitions.
/// It is correct: it passes under its declaration (engine_style_precision()) and fails under
/// the strict float32 model on many fp16 / bf16 problems. It is written from the problem's
/// descriptors (the cache's key_at / value_at accessor), not from the reference's attention.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/precision.h"

namespace pagecheck::verify::check {

/// Knobs of the simulation; the defaults are the correct engine-style kernel.
struct EngineStyleOptions {
  int64_t partition_size = 256;  ///< split-K partition length in tokens
  int32_t chunk_terms = 8;       ///< products per storage-dtype partial sum
  /// Planted bug: the merge loop stops one partition early (a split-K merge off by one
  /// partition); only when a row has two partitions or more.
  bool drop_last_partition = false;
};

/// What the simulation declares: softmax weights, products and per-partition outputs rounded
/// to the storage dtype, P.V summed in the storage dtype over `chunk_terms` terms. With the
/// default 8 terms this is exactly as loose as PrecisionModel::loosest().
PrecisionModel engine_style_precision(const EngineStyleOptions& options = {});

/// The output [num_query_tokens, num_heads, head_size] (float32 values, as doubles; the
/// caller rounds them to the storage dtype as the kernel's last store does). Every feature of
/// the problem is honoured: multi-token rows, causal, window, ALiBi, soft-cap, sinks, fp8
/// caches with scales; a row that attends nothing gives 0.
std::vector<double> engine_style_attention(const ref::PagedAttentionProblem& problem,
                                           const EngineStyleOptions& options = {});

}  // namespace pagecheck::verify::check
