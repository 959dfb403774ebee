/// Property tests of the reference's intermediates (paged_attention with a GroupObserver, what
/// the tolerance model reads): every query row and head is handed over once, with the attended
/// range of the documented rule, logits and magnitudes that agree with a long double computation
/// over the dense oracle's keys (its own offset arithmetic) within their float64 rounding, and
/// logits the reference's own lse normalizes; observing changes no output bit.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "float64_bounds.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/dense_oracle.h"
#include "test_support.h"

namespace pagecheck {
namespace {

constexpr double kU = 0x1.0p-53;

/// What the observer handed over for one (row, head), copied out of the call.
struct Seen {
  int calls = 0;                   ///< how often it was handed over
  ref::AttendedRange range;        ///< its range
  bool null_when_empty = true;     ///< an empty range came with NULL pointers
  std::vector<double> logits;      ///< [hi - lo]
  std::vector<double> magnitudes;  ///< [hi - lo]
};

/// The intermediates of every (row, head) of `p`, indexed row * num_heads + head; also checks
/// that the observed run's result is the plain run's, bit for bit.
std::vector<Seen> observe(const ref::PagedAttentionProblem& p) {
  std::vector<Seen> seen(p.batch.num_query_tokens() * p.num_heads);
  std::mutex mutex;
  const ref::PagedAttentionResult observed =
      ref::paged_attention(p, {2}, [&](const ref::GroupIntermediates& g) {
        std::lock_guard<std::mutex> lock(mutex);
        for (const ref::RowIntermediates& r : g.rows) {
          Seen& s = seen.at(r.row * p.num_heads + r.head);
          ++s.calls;
          s.range = r.range;
          const int64_t n = r.range.hi - r.range.lo;
          if (n <= 0) {
            s.null_when_empty = r.logits == nullptr && r.magnitudes == nullptr;
            continue;
          }
          s.logits.assign(r.logits, r.logits + n);
          s.magnitudes.assign(r.magnitudes, r.magnitudes + n);
        }
      });
  const ref::PagedAttentionResult plain = ref::paged_attention(p, {2});
  RC_ASSERT(observed.out == plain.out);
  RC_ASSERT(observed.lse == plain.lse);
  return seen;
}

/// Checks row `i` of sequence `seq`, head `h` against long double arithmetic over `kv`.
void check_row(const ref::PagedAttentionProblem& p, const oracle::DenseSequenceKV& kv,
               const ref::PagedAttentionResult& result, const Seen& s, int64_t seq, int64_t i,
               int64_t h) {
  const ref::AttentionFeatures& f = p.features;
  const int64_t ctx = p.batch.context_lens[seq], q_len = p.batch.query_len(seq);
  const int64_t hs = p.head_size(), kv_head = h / (p.num_heads / p.num_kv_heads());
  const int64_t row = p.batch.query_begin(seq) + i, pos = ctx - q_len + i;
  // The documented rule (problems.h): [0, ctx), t <= p when causal, t > p - window.
  const int64_t lo = f.window > 0 ? std::max<int64_t>(0, pos - f.window + 1) : 0;
  const int64_t hi = f.causal ? std::min(ctx, pos + 1) : ctx;
  const std::string where = "row " + std::to_string(row) + " head " + std::to_string(h);
  RC_ASSERT(s.calls == 1);
  RC_ASSERT(s.range.position == pos);
  if (hi <= lo) {
    RC_ASSERT(s.range.empty());
    RC_ASSERT(s.null_when_empty);
    return;
  }
  RC_ASSERT(s.range.lo == lo);
  RC_ASSERT(s.range.hi == hi);
  std::vector<long double> q(hs);
  for (int64_t d = 0; d < hs; ++d) {
    q[d] = load_element(p.dtype, p.query.data(), p.query_layout.offset(row, h, d));
  }
  const long double scale = p.scale, cap = f.soft_cap;
  const long double slope = f.alibi_slopes.empty() ? 0.0L : f.alibi_slopes[h];
  const double lse = result.lse[row * p.num_heads + h];
  double total = f.sinks.empty() ? 0.0 : std::exp(static_cast<double>(f.sinks[h]) - lse);
  for (int64_t t = lo; t < hi; ++t) {
    long double dot = 0, sum = 0;
    for (int64_t d = 0; d < hs; ++d) {
      const long double k = kv.key[(t * kv.num_kv_heads + kv_head) * hs + d];
      dot += q[d] * k;
      sum += std::fabs(q[d] * k);
    }
    long double logit = scale * dot;
    if (cap > 0) logit = cap * std::tanh(logit / cap);
    const long double bias = slope * static_cast<long double>(t - pos);
    logit += bias;
    const long double magnitude = scale * sum + std::fabs(bias);
    const double got_logit = s.logits[t - lo], got_magnitude = s.magnitudes[t - lo];
    // A sum of hs non-negative terms in order, a product and a sum: (hs + 4) 2^-53 relative.
    if (!(std::fabs(got_magnitude - magnitude) <= (hs + 4) * kU * magnitude)) {
      RC_FAIL(where + " t " + std::to_string(t) + ": magnitude " + std::to_string(got_magnitude) +
              ", long double " + std::to_string(static_cast<double>(magnitude)));
    }
    // Eigen's dot product in some order: 2 (hs + 4) 2^-53 of the terms' magnitudes, plus the
    // soft-cap's tanh and the final sums rounding the logit itself.
    const long double allowed = 2 * (hs + 4) * kU * magnitude + 8 * kU * std::fabs(logit);
    if (!(std::fabs(got_logit - logit) <= allowed)) {
      RC_FAIL(where + " t " + std::to_string(t) + ": logit " + std::to_string(got_logit) +
              ", long double " + std::to_string(static_cast<double>(logit)));
    }
    total += std::exp(got_logit - lse);
  }
  // The logits are those the reference's own normalizer belongs to.
  RC_ASSERT(std::fabs(total - 1.0) <= 1e-12);
}

RC_GTEST_PROP(ReferenceIntermediates, AreEveryRowsLogitsAndMagnitudes, ()) {
  const verify::AttentionSpec spec = test::random_spec();
  RC_TAG(ref::cache_kind_name(spec.kind));
  RC_CLASSIFY(dtype_info(spec.kv_dtype()).fp8, "fp8 cache");
  RC_CLASSIFY(spec.alibi, "alibi");
  RC_CLASSIFY(spec.soft_cap > 0, "soft-cap");
  RC_CLASSIFY(spec.window > 0 || !spec.query_lens.empty(), "window/multi-token");
  const ref::PagedAttentionProblem p = verify::make_attention_problem(spec);
  const std::vector<Seen> seen = observe(p);
  const ref::PagedAttentionResult result = ref::paged_attention(p, {1});
  for (int64_t seq = 0; seq < p.num_seqs(); ++seq) {
    const oracle::DenseSequenceKV kv = oracle::dense_sequence_kv(p, seq);
    for (int64_t i = 0; i < p.batch.query_len(seq); ++i) {
      for (int64_t h = 0; h < p.num_heads; ++h) {
        check_row(p, kv, result, seen[(p.batch.query_begin(seq) + i) * p.num_heads + h], seq, i, h);
      }
    }
  }
}

/// An exception of the observer stops the run and reaches the caller.
TEST(ReferenceIntermediates, AnObserversExceptionReachesTheCaller) {
  verify::AttentionSpec spec;
  spec.context_lens = {5, 16, 0};
  const ref::PagedAttentionProblem p = verify::make_attention_problem(spec);
  EXPECT_THROW(ref::paged_attention(p, {2},
                                    [](const ref::GroupIntermediates& g) {
                                      if (g.seq == 1) throw std::domain_error("observer");
                                    }),
               std::domain_error);
}

}  // namespace
}  // namespace pagecheck
