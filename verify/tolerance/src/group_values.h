#pragma once
/// Internal to pagecheck_tolerance: the decoded values of one (sequence, kv head) over the key
/// positions its query rows attend, for the error model's sums. The logits, their magnitudes and
/// the attended ranges come from the reference itself (ref::GroupIntermediates), the normalizer
/// from its lse; the values are read through the cache's own accessor (value_at) and scales
/// (PagedCacheLayout::scale_at).
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::detail {

/// Values of one (sequence, kv head) at key positions [lo, hi), decoded to double (fp8 codes
/// times their scale).
struct GroupValues {
  int64_t lo = 0;              ///< first key position held
  int64_t hi = 0;              ///< one past the last key position held
  std::vector<double> values;  ///< [hi - lo, head_size]
};

/// Decodes the values of sequence `seq` and kv head `kv_head` at key positions [lo, hi).
GroupValues decode_values(const ref::PagedAttentionProblem& problem, int64_t seq, int64_t kv_head,
                          int64_t lo, int64_t hi);

}  // namespace pagecheck::verify::detail
