/// The attention error model of docs/tolerances.md, evaluated per output element under the
/// variant's declared precision.
#include "pagecheck/verify/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "group_values.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::verify {
namespace {

constexpr double kU32 = 0x1.0p-24;

/// Absolute rounding error bound of one tiny intermediate in the storage dtype: half the
/// float16 subnormal spacing, or the smallest float32/bfloat16 normal (a kernel may flush
/// those subnormals to zero).
double tiny_error(DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  return dtype == DType::kFloat16 ? info.min_normal * unit_roundoff(dtype) : info.min_normal;
}

/// Sums of one output element over the attended keys (and the sink): the magnitudes of
/// docs/tolerances.md.
struct Sums {
  double s1 = 0, s2 = 0, s3 = 0, vmax = 0;
};

/// The bound of one element with sums `s`, `T` attended keys, head size `D`, dot-product
/// magnitude `big_l`, soft-cap `cap` (0 = none), `f8` = 1 for an fp8 cache, logit scale
/// `scale` and reference value `o`; `n` holds the declaration's rounding counts.
double element_tolerance(const ToleranceModel& m, DType dtype, const PrecisionTerms& n,
                         const Sums& s, double T, double D, double big_l, double cap, double f8,
                         double scale, double o) {
  const double us = unit_roundoff(dtype), eta = tiny_error(dtype);
  // Float32 arithmetic (steps 1-4), with the safety factor.
  const double delta = kU32 * (D + 4.0 + f8) * big_l;
  double a = m.safety * (kU32 * (2.0 * T + 16.0 + f8) * s.s1 +
                         (2.0 * delta + m.c_tanh * kU32 * cap + m.c_exp * kU32) * s.s2 +
                         m.c_arg * kU32 * s.s3 + std::ldexp(1.0, -126) * T * s.vmax);
  // Declared roundings to the storage dtype (step 5): exact first-order counts, no safety.
  if (n.logit > 0) {
    const double ds = n.logit * (us * big_l + eta * std::max(1.0, scale)) / (1.0 - n.logit * us);
    a += std::expm1(2.0 * ds) * s.s2;
  }
  if (n.value + n.weight > 0) {
    a +=
        (n.value * s.s1 + n.weight * std::max(s.s1, s.s2)) * us / (1.0 - (n.value + n.weight) * us);
  }
  a += n.tiny * eta * T * std::max(1.0, s.vmax);
  // Final rounding (step 6).
  return a + 0.5 * ulp(dtype, std::fabs(o) + a);
}

/// The key positions any query vector of group `g` attends: [lo, hi) (lo >= hi: none).
std::pair<int64_t, int64_t> attended_span(const ref::GroupIntermediates& g) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const ref::RowIntermediates& v : g.rows) {
    if (v.range.empty()) continue;
    lo = std::min(lo, v.range.lo);
    hi = std::max(hi, v.range.hi);
  }
  return {lo, hi};
}

/// Computes the tolerance of every query vector of group `g` (a sequence's query rows times the
/// heads of one kv head) from the reference's own logits and magnitudes.
void group_tolerance(const ref::PagedAttentionProblem& p, const ref::PagedAttentionResult& r,
                     const ToleranceModel& m, const ref::GroupIntermediates& g,
                     std::vector<double>& tol) {
  const int64_t hs = p.head_size();
  const auto [span_lo, span_hi] = attended_span(g);
  const detail::GroupValues values = detail::decode_values(p, g.seq, g.kv_head, span_lo, span_hi);
  const double D = static_cast<double>(hs);
  const double cap = p.features.soft_cap;
  const double f8 = dtype_info(p.cache.dtype).fp8 ? 1.0 : 0.0;
  const bool has_sink = !p.features.sinks.empty();
  std::vector<double> weights;
  for (const ref::RowIntermediates& lr : g.rows) {
    const int64_t row = lr.row, head = lr.head;
    double* t_out = tol.data() + (row * p.num_heads + head) * hs;
    const int64_t n = lr.range.hi - lr.range.lo;
    if (n <= 0) {  // attends nothing: the reference's 0, exactly
      std::fill(t_out, t_out + hs, 0.0);
      continue;
    }
    // Weights from the reference's own normalizer; they must sum to 1 with the sink's.
    const double sink = has_sink ? static_cast<double>(p.features.sinks[head]) : 0.0;
    const double lse = r.lse[row * p.num_heads + head];
    double lmax = has_sink ? sink : -INFINITY, big_l = 0, total = 0;
    weights.resize(n);
    for (int64_t t = 0; t < n; ++t) {
      lmax = std::max(lmax, lr.logits[t]);
      big_l = std::max(big_l, lr.magnitudes[t]);
      total += (weights[t] = std::exp(lr.logits[t] - lse));
    }
    const double sink_weight = has_sink ? std::exp(sink - lse) : 0.0;
    total += sink_weight;
    if (!(std::fabs(total - 1.0) <= 1e-9)) {
      throw std::runtime_error("attention_tolerance: the reference's lse at (row " +
                               std::to_string(row) + ", head " + std::to_string(head) +
                               ") gives softmax weights summing to " + std::to_string(total) +
                               ", not 1: reference and tolerance model disagree");
    }
    const double* out = r.out.data() + (row * p.num_heads + head) * hs;
    const PrecisionTerms terms = m.precision.terms(hs, n);
    const double us = unit_roundoff(p.dtype);
    if (std::max(terms.logit, terms.value + terms.weight) * us >= 0.5) {
      throw std::invalid_argument("attention_tolerance: precision '" + m.precision.describe() +
                                  "' rounds " + std::to_string(terms.value + terms.weight) +
                                  " times per term (" + std::to_string(terms.logit) +
                                  " per logit) over " + std::to_string(n) +
                                  " keys: too often for a bound (pagecheck accepts at most '" +
                                  PrecisionModel::loosest().describe() + "')");
    }
    for (int64_t d = 0; d < hs; ++d) {
      Sums s;
      for (int64_t t = 0; t < n; ++t) {
        const double v = values.values[(lr.range.lo + t - values.lo) * hs + d];
        const double dv = std::fabs(v - out[d]);
        s.s1 += weights[t] * std::fabs(v);
        s.s2 += weights[t] * dv;
        s.s3 += weights[t] * (lmax - lr.logits[t]) * dv;
        s.vmax = std::max(s.vmax, std::fabs(v));
      }
      // The sink is a key of value 0.
      s.s2 += sink_weight * std::fabs(out[d]);
      s.s3 += sink_weight * (lmax - sink) * std::fabs(out[d]);
      t_out[d] = element_tolerance(m, p.dtype, terms, s, static_cast<double>(n), D, big_l, cap, f8,
                                   p.scale, out[d]);
    }
  }
}

}  // namespace

std::string ToleranceModel::describe() const {
  char text[96];
  std::snprintf(text, sizeof text, " (c_exp=%g, c_arg=%g, c_tanh=%g, safety=%g)", c_exp, c_arg,
                c_tanh, safety);
  return precision.describe() + text;
}

void to_json(nlohmann::json& j, const ToleranceModel& m) {
  j = nlohmann::json{{"precision", m.precision},
                     {"c_exp", m.c_exp},
                     {"c_arg", m.c_arg},
                     {"c_tanh", m.c_tanh},
                     {"safety", m.safety}};
}

double unit_roundoff(DType dtype) {
  return std::ldexp(1.0, -dtype_info(dtype).mantissa_bits);
}

double ulp(DType dtype, double magnitude) {
  const DTypeInfo& info = dtype_info(dtype);
  const int p = info.mantissa_bits;
  const int emin = std::ilogb(info.min_normal);
  if (!(magnitude >= info.min_normal)) return std::ldexp(1.0, emin - (p - 1));  // subnormal
  int e = 0;
  std::frexp(magnitude, &e);  // magnitude in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 1 - (p - 1));
}

std::vector<double> attention_tolerance(const ref::PagedAttentionProblem& p,
                                        const ref::PagedAttentionResult& r,
                                        const ToleranceModel& model, int num_threads) {
  model.precision.validate();
  const int64_t hs = p.head_size(), rows = p.batch.num_query_tokens();
  if (static_cast<int64_t>(r.out.size()) != rows * p.num_heads * hs ||
      static_cast<int64_t>(r.lse.size()) != rows * p.num_heads) {
    throw std::invalid_argument("attention_tolerance: reference result has the wrong size (out " +
                                std::to_string(r.out.size()) + ", lse " +
                                std::to_string(r.lse.size()) + ", expected " +
                                std::to_string(rows) + " rows x " + std::to_string(p.num_heads) +
                                " heads x " + std::to_string(hs) + ")");
  }
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (!std::isfinite(r.out[i])) {
      throw std::runtime_error("the reference output is not finite at flat index " +
                               std::to_string(i) + " (did it read a poisoned element?)");
    }
  }
  std::vector<double> tol(r.out.size(), 0.0);
  // The reference runs again for its intermediates (the logits before the softmax and their
  // magnitudes, one group at a time); the bound uses the given result's out and lse.
  ref::paged_attention(p, {num_threads}, [&](const ref::GroupIntermediates& g) {
    group_tolerance(p, r, model, g, tol);
  });
  return tol;
}

}  // namespace pagecheck::verify
