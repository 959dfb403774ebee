/// Logits and decoded values of the attended keys, for the error model (row_logits.h).
#include "row_logits.h"

#include <algorithm>
#include <cmath>

namespace pagecheck::verify::detail {
namespace {

/// Attended key positions [lo, hi) of query row `row_in_seq` of a sequence (ref::paged_attention
/// documents the rule: t <= p when causal, t > p - window when windowed).
void attended(const ref::PagedAttentionProblem& p, int64_t seq, int64_t row_in_seq,
              int64_t& position, int64_t& lo, int64_t& hi) {
  const int64_t ctx = p.batch.context_lens[seq];
  position = ctx - p.batch.query_len(seq) + row_in_seq;
  hi = p.features.causal ? std::min(position + 1, ctx) : ctx;
  lo = p.features.window > 0 ? std::max<int64_t>(0, position - p.features.window + 1) : 0;
  hi = std::max(hi, lo);
}

double head_scale(const std::vector<float>& scales, ref::ScaleKind kind, int64_t kv_head) {
  if (scales.empty()) return 1.0;
  return scales[kind == ref::ScaleKind::kPerKvHead ? kv_head : 0];
}

}  // namespace

GroupValues decode_group(const ref::PagedAttentionProblem& p, int64_t seq, int64_t kv) {
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t hs = c.head_size, bs = c.block_size;
  GroupValues g;
  g.lo = p.batch.context_lens[seq];
  for (int64_t i = 0; i < p.batch.query_len(seq); ++i) {
    int64_t position = 0, lo = 0, hi = 0;
    attended(p, seq, i, position, lo, hi);
    if (lo >= hi) continue;
    g.lo = std::min(g.lo, lo);
    g.hi = std::max(g.hi, hi);
  }
  if (g.lo >= g.hi) return {0, 0, {}, {}};
  const std::byte* value_buffer = c.combined ? p.key_cache.data() : p.value_cache.data();
  const double ks = head_scale(p.k_scale, c.scale_kind, kv);
  const double vs = head_scale(p.v_scale, c.scale_kind, kv);
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
  int64_t position = 0;
  attended(p, seq, row_in_seq, position, r.lo, r.hi);
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
