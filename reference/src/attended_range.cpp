/// The one rule for the keys a query row attends (problems.h): context, causal new tokens,
/// window.
#include <algorithm>

#include "pagecheck/reference/problems.h"

namespace pagecheck::ref {

AttendedRange attended_range(const AttentionFeatures& f, int64_t context_len, int64_t query_len,
                             int64_t row) {
  AttendedRange r;
  r.position = context_len - query_len + row;
  r.hi = f.causal ? std::min(r.position + 1, context_len) : context_len;
  r.lo = f.window > 0 ? std::max<int64_t>(0, r.position - f.window + 1) : 0;
  r.hi = std::max(r.hi, r.lo);
  return r;
}

AttendedRange PagedAttentionProblem::attended(int64_t seq, int64_t row_in_seq) const {
  return attended_range(features, batch.context_lens[seq], batch.query_len(seq), row_in_seq);
}

}  // namespace pagecheck::ref
