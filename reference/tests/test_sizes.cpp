/// The reference at the edges of the sizes served models use (issue 16): head sizes 32 and
/// 512, block sizes 1 and 256, with every feature the random shapes draw (ALiBi, sinks,
/// windows, soft-caps, multi-token and padding rows, fp8 caches, every page layout). Each
/// problem agrees with the dense long-double oracle within a bound derived from the problem
/// (as AlibiEqualsAPositionKeyDimension in test_metamorphic.cpp derives its own), and within
/// the self-check's agreement (storage outputs identical up to rounding ties).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "float64_bounds.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/dense_oracle.h"
#include "pagecheck/verify/oracle_agreement.h"
#include "test_support.h"

namespace pagecheck {
namespace {

constexpr double kU = 0x1p-53;

/// The scale of kv head `h` (one per tensor or one per head; 1 without scales).
double scale_of(const std::vector<float>& scales, int64_t h) {
  if (scales.empty()) return 1.0;
  return scales.size() == 1 ? scales[0] : scales[h];
}

/// Largest over every row, head and attended token of the sum of the magnitudes of the
/// logit's terms (scale |q_d k_d|, keys dequantized, and the ALiBi term), and the largest
/// dequantized |v|.
struct Magnitudes {
  double terms = 0;  ///< bounds every |logit| before the soft-cap
  double value = 0;  ///< largest |v|
};

Magnitudes magnitudes(const ref::PagedAttentionProblem& p) {
  const ref::RaggedBatch& b = p.batch;
  const int64_t group = p.num_heads / p.num_kv_heads();
  const std::byte* values = p.cache.combined ? p.key_cache.data() : p.value_cache.data();
  Magnitudes m;
  for (int64_t s = 0; s < b.num_seqs; ++s) {
    for (int64_t t = 0; t < b.context_lens[s]; ++t) {
      const int64_t block = b.block_table[s * b.max_blocks_per_seq + t / p.block_size()];
      const int64_t slot = t % p.block_size();
      for (int64_t kv = 0; kv < p.num_kv_heads(); ++kv) {
        for (int64_t d = 0; d < p.head_size(); ++d) {
          const double v =
              load_element(p.cache.dtype, values, p.cache.value_at(block, kv, slot, d));
          m.value = std::max(m.value, std::fabs(v) * scale_of(p.v_scale, kv));
        }
      }
      for (int64_t i = 0; i < b.query_len(s); ++i) {
        for (int64_t h = 0; h < p.num_heads; ++h) {
          const int64_t kv = h / group;
          const double slope =
              p.features.alibi_slopes.empty() ? 0.0 : std::fabs(p.features.alibi_slopes[h]);
          double sum = slope * static_cast<double>(b.context_lens[s]);
          for (int64_t d = 0; d < p.head_size(); ++d) {
            const double q = load_element(p.dtype, p.query.data(),
                                          p.query_layout.offset(b.query_begin(s) + i, h, d));
            const double k =
                load_element(p.cache.dtype, p.key_cache.data(), p.cache.key_at(block, kv, slot, d));
            sum += std::fabs(static_cast<double>(p.scale) * q * k * scale_of(p.k_scale, kv));
          }
          m.terms = std::max(m.terms, sum);
        }
      }
    }
  }
  return m;
}

/// How far the float64 reference and the long-double oracle may differ: each differs from the
/// exact result by at most one float64 run's rounding, so test::RoundingBound's two-run bound
/// (two orders of D + 1 terms per logit, the softmax's T weights over a logit spread L, the
/// weighted sum and the division) covers both, with L taking the sinks' magnitude as well and
/// the soft-cap adding its own rounding: cap * tanh(l / cap) moves the logit error by at most
/// its own size (tanh' <= 1) plus 4 roundings of a result of magnitude <= cap, per run.
test::RoundingBound oracle_bound(const ref::PagedAttentionProblem& p) {
  const Magnitudes m = magnitudes(p);
  double sink = 0;
  for (float s : p.features.sinks) sink = std::max(sink, std::fabs(static_cast<double>(s)));
  const double T = static_cast<double>(std::max<int64_t>(p.batch.max_context_len(), 1)) + 1.0;
  const double L = 2.0 * std::max(m.terms, sink);
  test::RoundingBound r;
  r.logit = 2.0 * static_cast<double>(p.head_size() + 1) * kU * m.terms +
            2.0 * 4.0 * kU * static_cast<double>(p.features.soft_cap);
  r.out = 2.0 * m.value * (r.logit + (2.0 * T + 2.0 * L + 5.0) * kU);
  r.lse = r.logit + 2.0 * (T + L + 4.0) * kU;
  return r;
}

/// Where the reference and the oracle disagree on `spec` beyond oracle_bound or the
/// self-check's agreement (which also compares the storage-rounded outputs); empty when they
/// agree.
std::string oracle_disagreement(const verify::AttentionSpec& spec) {
  const ref::PagedAttentionProblem p = verify::make_attention_problem(spec);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {2});
  const oracle::OracleAttention o = oracle::paged_attention(p);
  const test::RoundingBound bound = oracle_bound(p);
  if (o.out.size() != r.out.size() || o.lse.size() != r.lse.size()) return "sizes differ";
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    const double want = static_cast<double>(o.out[i]);
    if (!(std::fabs(r.out[i] - want) <= bound.out)) {
      return "out[" + std::to_string(i) + "] " + std::to_string(r.out[i]) + " vs the oracle's " +
             std::to_string(want) + ", beyond the derived bound " + std::to_string(bound.out);
    }
  }
  for (std::size_t i = 0; i < r.lse.size(); ++i) {
    const double want = static_cast<double>(o.lse[i]);
    if (r.lse[i] == want && !std::isfinite(want)) continue;  // -inf: attends nothing
    if (!(std::fabs(r.lse[i] - want) <= bound.lse_allowed(want))) {
      return "lse[" + std::to_string(i) + "] " + std::to_string(r.lse[i]) + " vs " +
             std::to_string(want) + ", beyond " + std::to_string(bound.lse_allowed(want));
    }
  }
  const verify::AttentionAgreement agreement = verify::compare_with_oracle(p, r, o);
  return agreement.passed() ? std::string() : agreement.describe();
}

/// As oracle_disagreement, inside a property (classifies the case, fails with its shape).
void check_against_oracle(const verify::AttentionSpec& spec) {
  RC_TAG("head " + std::to_string(spec.head_size), "block " + std::to_string(spec.block_size));
  RC_CLASSIFY(dtype_info(spec.kv_dtype()).fp8, "fp8 cache");
  RC_CLASSIFY(spec.sinks || spec.window > 0 || spec.soft_cap > 0 || spec.alibi, "features");
  RC_CLASSIFY(!spec.query_lens.empty(), "multi-token rows");
  const std::string problem = oracle_disagreement(spec);
  if (!problem.empty()) RC_FAIL(spec.describe() + ": " + problem);
}

/// `spec` resized to head size `head` and block size `block`: contexts redrawn for the block
/// (at most `longest`, so the dense oracle stays fast), query rows kept within them.
verify::AttentionSpec resized(verify::AttentionSpec spec, int64_t head, int64_t block,
                              int32_t longest) {
  spec.head_size = head;
  spec.block_size = block;
  for (int32_t& len : spec.context_lens) len = std::min(*test::gen_context_len(block), longest);
  for (std::size_t s = 0; s < spec.query_lens.size(); ++s) {
    const int32_t ctx = spec.context_lens[s];
    spec.query_lens[s] = std::clamp(spec.query_lens[s], 1, ctx == 0 ? 3 : ctx);
  }
  return spec;
}

RC_GTEST_PROP(ReferenceSizes, HeadSizes32And512AgreeWithTheOracle, ()) {
  const int64_t head = *rc::gen::element<int64_t>(32, 512);
  const verify::AttentionSpec base = test::random_spec();
  check_against_oracle(resized(base, head, base.block_size, 160));
}

RC_GTEST_PROP(ReferenceSizes, BlockSizes1And256AgreeWithTheOracle, ()) {
  const int64_t block = *rc::gen::element<int64_t>(1, 256);
  const verify::AttentionSpec base = test::random_spec();
  check_against_oracle(resized(base, std::min<int64_t>(base.head_size, 128), block, 600));
}

TEST(ReferenceSizes, Head512Block256WithEveryFeature) {
  // The largest head and block together, over more than one block, with each feature.
  for (DType kv : {DType::kBFloat16, DType::kFloat8E4M3}) {
    verify::AttentionSpec s;
    s.dtype = DType::kBFloat16;
    s.cache_dtype = kv;
    s.scale_kind = dtype_info(kv).fp8 ? ref::ScaleKind::kPerKvHead : ref::ScaleKind::kNone;
    s.kind = ref::CacheKind::kNHD;
    s.head_size = 512;
    s.block_size = 256;
    s.num_kv_heads = 2;
    s.num_heads = 4;
    s.context_lens = {300, 256, 1};
    s.query_lens = {16, 3, 1};
    s.alibi = true;
    s.sinks = true;
    s.window = 257;
    s.soft_cap = 30.0f;
    s.spread = 3.0;
    s.seed = 0x5eed512;
    EXPECT_EQ(oracle_disagreement(s), "") << s.describe();
  }
}

}  // namespace
}  // namespace pagecheck
