#pragma once
/// Internal to pagecheck_tolerance: the magnitudes of one query row and head that the error
/// model needs and the reference's result does not carry: the attended keys' logits and the
/// magnitude of each logit's dot product, and the decoded values. The softmax normalizer is
/// not recomputed: attention_tolerance() takes it from the reference (reference.lse) and
/// checks that these logits agree with it.
///
/// The logits follow the reference's documented definition (ref::paged_attention in
/// pagecheck/reference/paged_attention.h: scale, soft-cap, ALiBi, sink) over the vocabulary's
/// attended range (ref::attended_range) and scales (PagedCacheLayout::scale_at), through the
/// cache's own accessor (key_at / value_at). They move into the reference once it exposes
/// its per-row intermediates (docs/design.md, issue 12 item 5); this file is then deleted.
#include <cstdint>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::verify::detail {

/// Keys and values of one (sequence, kv head) over the key positions any of the sequence's
/// query rows attends, decoded to double (fp8 codes times their scale).
struct GroupValues {
  int64_t lo = 0;              ///< first key position held
  int64_t hi = 0;              ///< one past the last key position held
  std::vector<double> keys;    ///< [hi - lo, head_size]
  std::vector<double> values;  ///< [hi - lo, head_size]
};

/// Decodes the keys and values of (seq, kv head) that some query row of seq attends.
GroupValues decode_group(const ref::PagedAttentionProblem& problem, int64_t seq, int64_t kv_head);

/// The attended keys of one query row and head and their logits.
struct RowLogits {
  int64_t lo = 0;                  ///< first attended key position
  int64_t hi = 0;                  ///< one past the last (lo == hi: none)
  std::vector<double> logits;      ///< [hi - lo] final logits (scale, soft-cap, ALiBi)
  std::vector<double> magnitudes;  ///< [hi - lo] scale * sum_i |q_i k_ti| + |ALiBi term|
  bool has_sink = false;           ///< a sink logit joins the denominator
  double sink = 0;                 ///< the sink logit (has_sink)
};

/// Logits of query row `row_in_seq` of sequence `seq` and query head `head` over the keys of
/// `group` (decode_group of seq and head's kv head).
RowLogits row_logits(const ref::PagedAttentionProblem& problem, const GroupValues& group,
                     int64_t seq, int64_t row_in_seq, int64_t head);

}  // namespace pagecheck::verify::detail
