#pragma once
/// Shared by the metamorphic and feature properties of the reference: the random problem shape
/// they start from, and bounds on how far two float64 reference runs may differ by rounding
/// alone, derived from the problems (a flat relative bound flakes once head sizes and logits
/// grow).
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"
#include "test_support.h"

namespace pagecheck::test {

/// A random problem shape with queries of a random dtype.
inline verify::AttentionSpec random_spec() {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  return *gen_attention_spec(dtype);
}

/// How far two float64 reference runs may differ by rounding alone, for problems whose exact
/// logits agree up to a per-row shift but which sum each logit's terms in different orders.
struct RoundingBound {
  /// Any logit: it sums head_size + 1 terms (the products scale q_d k_d and the ALiBi term), so
  /// two orders differ by at most 2 (head_size + 1) 2^-53 times the sum of the terms'
  /// magnitudes (Higham's gamma_n, twice for the two orders), its largest over every row, head
  /// and token.
  double logit = 0;
  /// Per output element, absolute: 2 max|v| (logit + (2 T + 2 L + 5) 2^-53), softmax moving each
  /// weight by at most a factor e^(2 logit) and each run rounding its weights (exp of l - max,
  /// L = the largest logit spread), their sum of T terms, the weighted sum and the division.
  double out = 0;
  /// Per lse, absolute: logit + 2 (T + L + 4) 2^-53 (the sum of the weights, its log and the
  /// max added back, in each run) plus 4 2^-53 |lse| via lse_allowed().
  double lse = 0;

  /// The allowed |difference| of an lse of magnitude `lse_value`.
  double lse_allowed(double lse_value) const { return lse + 4.0 * 0x1p-53 * std::fabs(lse_value); }
};

/// Sum of the magnitudes of the terms of the logits of `p`, its largest over every row, head and
/// token (a bound on every |logit| as well).
inline double largest_logit_terms(const ref::PagedAttentionProblem& p) {
  const ref::RaggedBatch& b = p.batch;
  const int64_t group = p.num_heads / p.num_kv_heads();
  double largest = 0;
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    for (int64_t i = 0; i < b.query_len(s); ++i) {
      const int64_t row = b.query_begin(s) + i;
      for (int64_t h = 0; h < p.num_heads; ++h) {
        const double slope =
            p.features.alibi_slopes.empty() ? 0.0 : std::fabs(p.features.alibi_slopes[h]);
        for (int64_t t = 0; t < b.context_lens[s]; ++t) {
          const int64_t block = b.block_table[s * b.max_blocks_per_seq + t / p.block_size()];
          double sum = slope * static_cast<double>(b.context_lens[s]);
          for (int64_t d = 0; d < p.head_size(); ++d) {
            const double q =
                load_element(p.dtype, p.query.data(), p.query_layout.offset(row, h, d));
            const double k = load_element(p.cache.dtype, p.key_cache.data(),
                                          p.cache.key_at(block, h / group, t % p.block_size(), d));
            sum += std::fabs(static_cast<double>(p.scale) * q * k);
          }
          largest = std::max(largest, sum);
        }
      }
    }
  }
  return largest;
}

/// The largest |value| of the tokens `p`'s sequences hold.
inline double max_abs_value(const ref::PagedAttentionProblem& p) {
  const ref::RaggedBatch& b = p.batch;
  double largest = 0;
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    for (int64_t t = 0; t < b.context_lens[s]; ++t) {
      const int64_t block = b.block_table[s * b.max_blocks_per_seq + t / p.block_size()];
      for (int64_t h = 0; h < p.num_kv_heads(); ++h) {
        for (int64_t d = 0; d < p.head_size(); ++d) {
          const int64_t at = p.cache.value_at(block, h, t % p.block_size(), d);
          const std::byte* base = p.cache.combined ? p.key_cache.data() : p.value_cache.data();
          largest = std::max(largest, std::fabs(load_element(p.cache.dtype, base, at)));
        }
      }
    }
  }
  return largest;
}

/// The rounding bound of two runs, of `a` and of `b` (the same batch and values; the larger of
/// the two problems' logit terms counts).
inline RoundingBound rounding_bound(const ref::PagedAttentionProblem& a,
                                    const ref::PagedAttentionProblem& b) {
  constexpr double u = 0x1p-53;
  const double terms = std::max(largest_logit_terms(a), largest_logit_terms(b));
  const double T = static_cast<double>(std::max<int64_t>(a.batch.max_context_len(), 1));
  const double L = 2.0 * terms;  // logits lie in [-terms, terms]
  RoundingBound r;
  r.logit = 2.0 * static_cast<double>(a.head_size() + 1) * u * terms;
  r.out = 2.0 * std::max(max_abs_value(a), max_abs_value(b)) *
          (r.logit + (2.0 * T + 2.0 * L + 5.0) * u);
  r.lse = r.logit + 2.0 * (T + L + 4.0) * u;
  return r;
}

/// Outputs of a and b agree within bound.out and b's lse values are a's plus lse_shift
/// [num_rows, num_heads] within bound.lse_allowed (equal infinities pass).
inline void expect_within(const ref::PagedAttentionResult& a, const ref::PagedAttentionResult& b,
                          const std::vector<double>& lse_shift, const RoundingBound& bound) {
  const ref::ErrorMetrics m =
      ref::compare(a.out, b.out, {a.num_rows, a.num_heads, a.head_size}, 1e-2);
  if (m.max_abs > bound.out || m.num_nonfinite > 0) {
    RC_FAIL("outputs differ beyond the rounding bound " + std::to_string(bound.out) + ": " +
            m.to_string());
  }
  for (std::size_t i = 0; i < a.lse.size(); ++i) {
    if (a.lse[i] == b.lse[i] && !std::isfinite(a.lse[i])) continue;
    const double expected = a.lse[i] + lse_shift[i];
    RC_ASSERT(std::fabs(b.lse[i] - expected) <= bound.lse_allowed(expected));
  }
}

}  // namespace pagecheck::test
