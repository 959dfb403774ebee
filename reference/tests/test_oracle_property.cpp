/// Property tests: the reference agrees with the independent dense oracle on random problems
/// of every dtype, cache kind and fp8 KV dtype with every attention feature (float64 outputs
/// to 1e-12 relative; storage-rounded outputs identical up to rounding ties), and never reads
/// an unused (NaN) slot, block or padding element.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "cache_contents.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/dense_oracle.h"
#include "pagecheck/verify/oracle_agreement.h"
#include "test_support.h"

namespace pagecheck {
namespace {

/// Checks one attention problem against the oracle; fails with the details and the shape.
void check_attention(const verify::AttentionSpec& spec) {
  RC_CLASSIFY(spec.alibi, "alibi");
  RC_CLASSIFY(spec.num_heads != spec.num_kv_heads, "gqa/mqa");
  RC_CLASSIFY(spec.query_pad > 0 || spec.cache_pad > 0, "padded strides");
  RC_CLASSIFY(spec.share_prefix && spec.context_lens.size() > 1, "shared blocks");
  RC_TAG(ref::cache_kind_name(spec.kind));
  RC_CLASSIFY(dtype_info(spec.kv_dtype()).fp8, "fp8 cache");
  RC_CLASSIFY(spec.combined, "combined");
  RC_CLASSIFY(!spec.query_lens.empty(), "multi-token rows");
  RC_CLASSIFY(spec.sinks || spec.window > 0 || spec.soft_cap > 0 || !spec.causal,
              "sinks/window/cap/noncausal");
  const ref::PagedAttentionProblem problem = verify::make_attention_problem(spec);
  const ref::PagedAttentionResult result = ref::paged_attention(problem, {2});
  const oracle::OracleAttention expected = oracle::paged_attention(problem);
  const verify::AttentionAgreement agreement =
      verify::compare_with_oracle(problem, result, expected);
  if (!agreement.passed()) RC_FAIL(spec.describe() + ": " + agreement.describe());
}

RC_GTEST_PROP(ReferenceVsOracle, Float32, ()) {
  check_attention(*test::gen_attention_spec(DType::kFloat32));
}

RC_GTEST_PROP(ReferenceVsOracle, Float16, ()) {
  check_attention(*test::gen_attention_spec(DType::kFloat16));
}

RC_GTEST_PROP(ReferenceVsOracle, BFloat16, ()) {
  check_attention(*test::gen_attention_spec(DType::kBFloat16));
}

/// Copies: the reference's bytes equal the oracle's, starting from NaN-poisoned outputs.
void check_copy(const verify::CopySpec& spec, bool gather) {
  ref::CacheCopyProblem problem = verify::make_copy_problem(spec);
  if (gather) {
    verify::fill_nan(problem.dtype, problem.key);
    verify::fill_nan(problem.dtype, problem.value);
  }
  const oracle::CopyBuffers expected =
      gather ? oracle::gather_cached_kv(problem) : oracle::reshape_and_cache(problem);
  gather ? ref::gather_cached_kv(problem) : ref::reshape_and_cache(problem);
  RC_ASSERT(verify::first_byte_difference(gather ? problem.key : problem.key_cache, expected.key) ==
            -1);
  RC_ASSERT(verify::first_byte_difference(gather ? problem.value : problem.value_cache,
                                          expected.value) == -1);
}

RC_GTEST_PROP(CopyVsOracle, Gather, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  check_copy(*test::gen_copy_spec(dtype), true);
}

RC_GTEST_PROP(CopyVsOracle, ReshapeAndCache, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  check_copy(*test::gen_copy_spec(dtype), false);
}

/// The poisoning must be able to catch a reference that reads past a context: moving one
/// sequence's context by one token onto the NaN slot makes its output NaN.
TEST(ReferenceVsOracle, ReadingAnUnusedSlotWouldShow) {
  verify::AttentionSpec spec;
  spec.context_lens = {5, 16};
  spec.extra_table_cols = 1;
  ref::PagedAttentionProblem problem = verify::make_attention_problem(spec);
  problem.batch.context_lens[0] = 6;  // slot 5 of the first block was never written: NaN
  const ref::PagedAttentionResult result = ref::paged_attention(problem, {1});
  EXPECT_TRUE(std::isnan(result.out[0]));
  EXPECT_FALSE(std::isnan(result.out[problem.num_heads * problem.head_size()]));
}

/// Strides an engine might pass that no named kind has: every stride of an NHD layout doubled,
/// so no stride is 1 and the reference walks the tiles element by element.
RC_GTEST_PROP(ReferenceVsOracle, StridesWithoutAUnitStride, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  verify::AttentionSpec spec = *test::gen_attention_spec(dtype);
  spec.kind = ref::CacheKind::kNHD;
  spec.combined = false;
  const ref::PagedAttentionProblem packed = verify::make_attention_problem(spec);
  ref::PagedCacheLayout layout = packed.cache;
  for (ref::CacheTensorStrides* s : {&layout.key, &layout.value}) {
    s->block *= 2;
    s->head *= 2;
    s->slot *= 2;
    s->dim *= 2;
  }
  ref::PagedAttentionProblem problem = packed;
  test::relayout(packed, problem, layout);
  const ref::PagedAttentionResult a = ref::paged_attention(packed, {1});
  const ref::PagedAttentionResult b = ref::paged_attention(problem, {1});
  RC_ASSERT(a.out == b.out);  // the same decoded values: the same arithmetic
  RC_ASSERT(a.lse == b.lse);
  const verify::AttentionAgreement agreement =
      verify::compare_with_oracle(problem, b, oracle::paged_attention(problem));
  if (!agreement.passed()) RC_FAIL(spec.describe() + ": " + agreement.describe());
}

/// The storage rule: two roundings may differ only by one step, split by a midpoint that lies
/// between the two exact values.
TEST(ReferenceVsOracle, StorageRoundingRule) {
  std::byte one[2], next[2], two_up[2];
  store_element(DType::kFloat16, one, 0, 1.0);
  store_element(DType::kFloat16, next, 0, 1.0 + 0x1p-10);
  store_element(DType::kFloat16, two_up, 0, 1.0 + 0x1p-9);
  const double mid = 1.0 + 0x1p-11;
  bool tie = false;
  EXPECT_TRUE(
      verify::storage_rounding_agrees(DType::kFloat16, mid - 1e-15, mid + 1e-15, one, next, &tie));
  EXPECT_TRUE(tie);
  EXPECT_TRUE(verify::storage_rounding_agrees(DType::kFloat16, mid, mid + 1e-15, one, next));
  // Both exact values below the midpoint: they must round alike.
  EXPECT_FALSE(
      verify::storage_rounding_agrees(DType::kFloat16, mid - 2e-15, mid - 1e-15, one, next));
  // Two steps apart is never a rounding difference.
  EXPECT_FALSE(
      verify::storage_rounding_agrees(DType::kFloat16, 1.0 + 0x1p-10, 1.0 + 0x1p-10, one, two_up));
  EXPECT_TRUE(verify::storage_rounding_agrees(DType::kFloat16, 1.0, 1.0, one, one));
}

/// The tolerance is ~1e-12 relative for well-conditioned heads and grows with the conditioning.
TEST(ReferenceVsOracle, ToleranceScalesWithConditioning) {
  const double well = verify::output_tolerance(0.5, 128, 100, 10.0, 3.0);
  EXPECT_LT(well, 1e-12);
  EXPECT_GT(well, 0.5e-12);
  EXPECT_GT(verify::output_tolerance(0.5, 128, 100, 1e4, 3.0), 10 * well);
  EXPECT_NEAR(verify::lse_tolerance(-300.0, 64, 1, 0.0), 300e-12, 1e-15);
}

}  // namespace
}  // namespace pagecheck
