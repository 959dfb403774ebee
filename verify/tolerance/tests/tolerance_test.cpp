/// The attention error model: the strict float32 model is today's documented bound (checked
/// term by term on problems whose softmax is known in closed form), each declared rounding
/// adds its documented amount, the bound grows with the declaration, the reference's lse is
/// cross-checked, and every feature of the vocabulary (multi-token rows, window, sinks,
/// soft-cap, context 0, fp8 caches) gets a finite bound the rounded reference meets.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/selfcheck_problems.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::verify {
namespace {

constexpr double kU = 0x1.0p-24;

/// One float32 sequence of two tokens, head size 4, one head (NHD, so any head size works):
/// q = (1, 0, 0, 0), k_1 = 0, k_2 = (2, 0, 0, 0), scale 1/2 and ALiBi slope `slope`, so the
/// logits are (-slope, 1) exactly.
ref::PagedAttentionProblem two_tokens(double slope, int32_t context = 2) {
  AttentionSpec d;
  d.dtype = DType::kFloat32;
  d.kind = ref::CacheKind::kNHD;
  d.num_heads = d.num_kv_heads = 1;
  d.head_size = 4;
  d.block_size = 4;
  d.context_lens = {context};
  ref::PagedAttentionProblem p = make_attention_problem(d);
  p.scale = 0.5f;
  if (slope != 0) p.features.alibi_slopes = {static_cast<float>(slope)};
  const double q[4] = {1, 0, 0, 0};
  const double k[2][4] = {{0, 0, 0, 0}, {2, 0, 0, 0}};
  const double v[2][4] = {{1, -1, 0.5, 0.25}, {-0.5, 2, 0, 1}};
  const int32_t block = p.batch.block_table[0];
  for (int64_t dim = 0; dim < 4; ++dim) {
    store_element(p.dtype, p.query.data(), p.query_layout.offset(0, 0, dim), q[dim]);
    for (int64_t t = 0; t < context; ++t) {
      store_element(p.cache.dtype, p.key_cache.data(), p.cache.key_at(block, 0, t, dim), k[t][dim]);
      store_element(p.cache.dtype, p.value_cache.data(), p.cache.value_at(block, 0, t, dim),
                    v[t][dim]);
    }
  }
  return p;
}

double half_ulp32(double x) {
  return 0.5 * ulp(DType::kFloat32, x);
}

TEST(Tolerance, StrictModelOnOneTokenIsTheDocumentedBound) {
  // T = 1: p = 1, o = v, S1 = V = |v|, S2 = S3 = 0.
  const ref::PagedAttentionProblem p = two_tokens(0, 1);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  const std::vector<double> tol = attention_tolerance(p, r, {}, 1);
  const double v[4] = {1, -1, 0.5, 0.25};
  for (int d = 0; d < 4; ++d) {
    const double a =
        2 * (kU * (2 + 16) * std::fabs(v[d]) + std::ldexp(1.0, -126) * std::fabs(v[d]));
    EXPECT_DOUBLE_EQ(tol[d], a + half_ulp32(std::fabs(v[d]) + a)) << d;
  }
}

TEST(Tolerance, StrictModelOnTwoTokensIsTheDocumentedBound) {
  const double slope = 0.5;
  const ref::PagedAttentionProblem p = two_tokens(slope);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  const std::vector<double> tol = attention_tolerance(p, r, {}, 1);
  // Logits (-1/2, 1): the magnitudes are |alibi| = 1/2 and scale * |1 * 2| = 1, so L = 1.
  const double l[2] = {-slope, 1.0}, m = 1.0, big_l = 1.0;
  const double p2 = 1 / (1 + std::exp(l[0] - l[1])), w[2] = {1 - p2, p2};
  const double v[2][4] = {{1, -1, 0.5, 0.25}, {-0.5, 2, 0, 1}};
  const double delta = kU * (4 + 4) * big_l;
  for (int d = 0; d < 4; ++d) {
    const double o = w[0] * v[0][d] + w[1] * v[1][d];
    EXPECT_NEAR(r.out[d], o, 1e-15);
    double s1 = 0, s2 = 0, s3 = 0, vmax = 0;
    for (int t = 0; t < 2; ++t) {
      s1 += w[t] * std::fabs(v[t][d]);
      s2 += w[t] * std::fabs(v[t][d] - o);
      s3 += w[t] * (m - l[t]) * std::fabs(v[t][d] - o);
      vmax = std::max(vmax, std::fabs(v[t][d]));
    }
    const double a = 2 * (kU * (2 * 2 + 16) * s1 + (2 * delta + 8 * kU) * s2 + 4 * kU * s3 +
                          std::ldexp(1.0, -126) * 2 * vmax);
    EXPECT_NEAR(tol[d], a + half_ulp32(std::fabs(o) + a), 1e-12 * tol[d]) << d;
  }
}

TEST(Tolerance, RoundedLogitsAddTheirDocumentedAmount) {
  const ref::PagedAttentionProblem p = two_tokens(0.5);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  const std::vector<double> strict = attention_tolerance(p, r, {}, 1);
  ToleranceModel logits;
  logits.precision.round_logits = true;  // not accepted by pagecheck, but it has a bound
  const std::vector<double> wide = attention_tolerance(p, r, logits, 1);
  const double l[2] = {-0.5, 1.0}, big_l = 1.0;
  const double p2 = 1 / (1 + std::exp(l[0] - l[1])), w[2] = {1 - p2, p2};
  const double v[2][4] = {{1, -1, 0.5, 0.25}, {-0.5, 2, 0, 1}};
  for (int d = 0; d < 4; ++d) {
    double s2 = 0;
    for (int t = 0; t < 2; ++t) s2 += w[t] * std::fabs(v[t][d] - r.out[d]);
    // One rounding per logit: d_s = (u_s L + eta_s) / (1 - u_s), acting as (e^(2 d_s) - 1) S2.
    const double ds = (kU * big_l + std::ldexp(1.0, -126)) / (1 - kU);
    const double extra = std::expm1(2 * ds) * s2;
    EXPECT_NEAR(wide[d] - strict[d], extra, 1e-9 * extra) << d;
  }
}

TEST(Tolerance, ADeclarationTooLooseForAnyBoundIsRefused) {
  AttentionSpec d;
  d.context_lens = {4096};
  d.num_heads = d.num_kv_heads = 1;
  const ref::PagedAttentionProblem p = make_attention_problem(d);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  ToleranceModel whole;
  whole.precision.pv = Accum::kStorage;  // all 4096 products summed in float16: 4096 u_s = 2
  EXPECT_THROW(attention_tolerance(p, r, whole, 1), std::invalid_argument);
}

TEST(Tolerance, EachDeclaredRoundingAddsItsDocumentedAmount) {
  const ref::PagedAttentionProblem p = two_tokens(0.5);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  const std::vector<double> strict = attention_tolerance(p, r, {}, 1);
  ToleranceModel loosest;
  loosest.precision = PrecisionModel::loosest();
  const std::vector<double> wide = attention_tolerance(p, r, loosest, 1);
  const double l[2] = {-0.5, 1.0};
  const double p2 = 1 / (1 + std::exp(l[0] - l[1])), w[2] = {1 - p2, p2};
  const double v[2][4] = {{1, -1, 0.5, 0.25}, {-0.5, 2, 0, 1}};
  for (int d = 0; d < 4; ++d) {
    const double o = r.out[d];
    double s1 = 0, s2 = 0, vmax = 0;
    for (int t = 0; t < 2; ++t) {
      s1 += w[t] * std::fabs(v[t][d]);
      s2 += w[t] * std::fabs(v[t][d] - o);
      vmax = std::max(vmax, std::fabs(v[t][d]));
    }
    // float32 storage: u_s = u, eta_s = 2^-126. Two keys: the 8-term sums have 2 terms, so
    // n_v = 2 + 1 (partition output), n_w = 1, n_t = 4.
    const double extra = (3 * s1 + std::max(s1, s2)) * kU / (1 - 4 * kU) +
                         4 * std::ldexp(1.0, -126) * 2 * std::max(1.0, vmax);
    // The final half ulp may only grow with a; below a binade edge it is unchanged.
    EXPECT_NEAR(wide[d] - strict[d], extra, 1e-9 * extra) << d;
  }
}

/// A spread of problems over the vocabulary's features.
std::vector<AttentionSpec> feature_specs() {
  std::vector<AttentionSpec> specs;
  uint64_t seed = 100;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    AttentionSpec d;
    d.dtype = dtype;
    d.num_kv_heads = 2;
    d.context_lens = {1, 16, 17, 300};
    d.alibi = dtype != DType::kFloat32;
    d.spread = dtype == DType::kBFloat16 ? 2.0 : 1.0;  // peaked / flat
    d.seed = ++seed;
    specs.push_back(d);
    d.context_lens = {5, 0, 40};
    d.query_lens = {3, 2, 4};
    d.sinks = true;
    d.window = 7;
    d.soft_cap = 2.5f;
    d.kind = ref::CacheKind::kHND;
    d.seed = ++seed;
    specs.push_back(d);
    d.causal = false;
    d.window = 0;
    d.kind = ref::CacheKind::kNHD;
    d.cache_pad = 3;
    d.seed = ++seed;
    specs.push_back(d);
  }
  AttentionSpec fp8;
  fp8.cache_dtype = DType::kFloat8E4M3;
  fp8.scale_kind = ref::ScaleKind::kPerKvHead;
  fp8.kind = ref::CacheKind::kNHD;
  fp8.num_kv_heads = 2;
  fp8.context_lens = {33, 9};
  specs.push_back(fp8);
  return specs;
}

TEST(Tolerance, EveryFeatureGetsABoundTheRoundedReferenceMeets) {
  ToleranceModel loosest;
  loosest.precision = PrecisionModel::loosest();
  for (const AttentionSpec& d : feature_specs()) {
    const ref::PagedAttentionProblem p = make_attention_problem(d);
    const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
    const std::vector<double> strict = attention_tolerance(p, r, {}, 2);
    const std::vector<double> wide = attention_tolerance(p, r, loosest, 2);
    const AttentionComparison c = compare_attention(p, r, strict, r.out_storage(p.dtype));
    EXPECT_TRUE(c.passed()) << d.describe() << ": " << c.describe();
    int64_t zero_rows = 0;
    for (std::size_t i = 0; i < strict.size(); ++i) {
      ASSERT_TRUE(std::isfinite(strict[i]) && std::isfinite(wide[i])) << i;
      EXPECT_LE(strict[i], wide[i]) << i;
      zero_rows += strict[i] == 0;
    }
    // Only the rows of the context-0 sequence have a zero bound (the reference's exact 0).
    int64_t expected_zero = 0;
    for (int64_t s = 0; s < p.num_seqs(); ++s) {
      if (p.batch.context_lens[s] == 0) expected_zero += p.batch.query_len(s);
    }
    EXPECT_EQ(zero_rows, expected_zero * p.num_heads * p.head_size());
  }
}

TEST(Tolerance, BoundGrowsWithTheDeclaration) {
  // strict <= any accepted declaration <= loosest, element by element.
  std::mt19937_64 rng(5);
  ToleranceModel loosest;
  loosest.precision = PrecisionModel::loosest();
  int checked = 0;
  for (int i = 0; i < 40 && checked < 8; ++i) {
    ToleranceModel m;
    m.precision.round_weights = rng() % 2;
    m.precision.round_products = rng() % 2;
    m.precision.round_partition_outputs = rng() % 2;
    if (rng() % 2) {
      m.precision.pv = Accum::kStorage;
      m.precision.storage_sum_terms = 1 + rng() % 8;
    }
    if (!m.precision.accepted() || m.precision.is_strict()) continue;
    ++checked;
    AttentionSpec d;
    d.dtype = i % 2 ? DType::kBFloat16 : DType::kFloat16;
    d.context_lens = {static_cast<int32_t>(1 + rng() % 600), 3};
    d.seed = rng();
    const ref::PagedAttentionProblem p = make_attention_problem(d);
    const ref::PagedAttentionResult r = ref::paged_attention(p, {1});
    const auto strict = attention_tolerance(p, r, {}, 2);
    const auto mid = attention_tolerance(p, r, m, 2);
    const auto wide = attention_tolerance(p, r, loosest, 2);
    for (std::size_t e = 0; e < mid.size(); ++e) {
      ASSERT_LT(strict[e], mid[e]) << m.precision.describe();
      ASSERT_LE(mid[e], wide[e]) << m.precision.describe();
    }
  }
  EXPECT_EQ(checked, 8);
}

TEST(Tolerance, AReferenceWhoseLseDisagreesIsRefused) {
  AttentionSpec d;
  d.context_lens = {17, 3};
  d.sinks = true;
  const ref::PagedAttentionProblem p = make_attention_problem(d);
  ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  EXPECT_NO_THROW(attention_tolerance(p, r, {}, 1));
  r.lse[1] += 1e-6;  // a normalizer off by one part in a million
  EXPECT_THROW(attention_tolerance(p, r, {}, 1), std::runtime_error);
}

TEST(Tolerance, BadInputIsNamed) {
  const ref::PagedAttentionProblem p = two_tokens(0);
  ref::PagedAttentionResult r = ref::paged_attention(p, {1});
  ToleranceModel bad;
  bad.precision.storage_sum_terms = 8;  // no storage accumulator
  EXPECT_THROW(attention_tolerance(p, r, bad, 1), std::invalid_argument);
  r.lse.pop_back();
  EXPECT_THROW(attention_tolerance(p, r, {}, 1), std::invalid_argument);
}

TEST(Tolerance, DescribeNamesTheDeclarationAndConstants) {
  EXPECT_EQ(ToleranceModel{}.describe(), "float32 strict (c_exp=8, c_arg=4, c_tanh=8, safety=2)");
  ToleranceModel m;
  m.precision = PrecisionModel::loosest();
  const nlohmann::json j = m;
  EXPECT_EQ(j["precision"]["storage_sum_terms"], 8);
  EXPECT_EQ(j["safety"], 2.0);
}

}  // namespace
}  // namespace pagecheck::verify
