/// Logits and decoded values of the attended keys, for the error model (row_logits.h).
#include "row_logits.h"

#include <algorithm>
#include <cmath>

namespace pagecheck::verify::detail {

GroupValues decode_group(const ref::PagedAttentionProblem& p, int64_t seq, int64_t kv) {
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t hs = c.head_size, bs = c.block_size;
  GroupValues g;
  g.lo = p.batch.context_lens[seq];
  for (int64_t i = 0; i < p.batch.query_len(seq); ++i) {
    const ref::AttendedRange range = p.attended(seq, i);
    if (range.empty()) continue;
    g.lo = std::min(g.lo, range.lo);
    g.hi = std::max(g.hi, range.hi);
  }
  if (g.lo >= g.hi) return {0, 0, {}, {}};
  const std::byte* value_buffer = c.combined ? p.key_cache.data() : p.value_cache.data();
  const double ks = c.scale_at(p.k_scale, kv);
  const double vs = c.scale_at(p.v_scale, kv);
  const int64_t n = g.hi - g.lo;
  g.keys.resize(n * hs);
  g.values.resize(n * hs);
  for (int64_t t = g.lo; t < g.hi; ++t) {
    const int64_t block = p.batch.block_table[seq * p.batch.max_blocks_per_seq + t / bs];
    for (int64_t d = 0; d < hs; ++d) {
      g.keys[(t - g.lo) * hs + d] =
          ks * load_element(c.dtype, p.key_cache.data(), c.key_at(block, kv, t % bs, d));
      g.values[(t - g.lo) * hs + d] =
          vs * load_element(c.dtype, value_buffer, c.value_at(block, kv, t % bs, d));
    }
  }
  return g;
}

RowLogits row_logits(const ref::PagedAttentionProblem& p, const GroupValues& g, int64_t seq,
                     int64_t row_in_seq, int64_t head) {
  const int64_t hs = p.head_size();
  const ref::AttentionFeatures& f = p.features;
  RowLogits r;
  const ref::AttendedRange range = p.attended(seq, row_in_seq);
  const int64_t position = range.position;
  r.lo = range.lo;
  r.hi = range.hi;
  r.has_sink = !f.sinks.empty();
  if (r.has_sink) r.sink = f.sinks[head];
  if (r.lo >= r.hi) return r;
  const int64_t row = p.batch.query_begin(seq) + row_in_seq;
  std::vector<double> q(hs);
  for (int64_t d = 0; d < hs; ++d) {
    q[d] = load_element(p.dtype, p.query.data(), p.query_layout.offset(row, head, d));
  }
  const double scale = p.scale, cap = f.soft_cap;
  const double slope = f.alibi_slopes.empty() ? 0.0 : f.alibi_slopes[head];
  r.logits.resize(r.hi - r.lo);
  r.magnitudes.resize(r.hi - r.lo);
  for (int64_t t = r.lo; t < r.hi; ++t) {
    const double* k = g.keys.data() + (t - g.lo) * hs;
    double dot = 0, mag = 0;
    for (int64_t d = 0; d < hs; ++d) {
      dot += q[d] * k[d];
      mag += std::fabs(q[d] * k[d]);
    }
    double logit = scale * dot;
    if (cap > 0) logit = cap * std::tanh(logit / cap);
    const double bias = slope * static_cast<double>(t - position);
    r.logits[t - r.lo] = logit + bias;
    r.magnitudes[t - r.lo] = scale * mag + std::fabs(bias);
  }
  return r;
}

}  // namespace pagecheck::verify::detail
