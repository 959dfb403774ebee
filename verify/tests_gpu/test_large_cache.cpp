/// Caches of more than 2^31 elements (4+ GiB per cache in float16) with the referenced blocks
/// past the 2^31-element offset: 32-bit offset arithmetic would read or write the wrong place.
/// The cases are gen specs like every other; materialize poisons the multi-GiB caches with its
/// fast pattern fill.
/// Needs ~8 GiB of device memory and ~16 GiB of host memory; excluded from the sanitizer runs
/// (suite LargeCache).
#include <gtest/gtest.h>

#include "case_builder.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::gpu_test {
namespace {

// float16, 1 kv head, head 128, block 16: 2048 elements per block and cache.
constexpr int64_t kElementsPerBlock = 128 * 16;
constexpr int64_t kLargeBlocks = (int64_t{1} << 31) / kElementsPerBlock + 64;

TEST(LargeCache, PagedAttentionBeyond2e31Elements) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  const AttentionCase c = Attention("large", DType::kFloat16, 128, 16, 4, 1, {300, 17}, 501)
                              .peaked()
                              .high_blocks(kLargeBlocks);
  const ref::PagedAttentionProblem p = gen::materialize(c.spec);  // poison by pattern fill
  ASSERT_GT(p.cache.key_span(), int64_t{1} << 31);
  const ref::PagedAttentionResult expected = ref::paged_attention(p);
  for (const VariantInfo* v : builtin_registry().family(PC_FAMILY_PAGED_ATTENTION)) {
    SCOPED_TRACE("variant " + v->name);
    const std::vector<double> tolerance =
        verify::attention_tolerance(p, expected, tolerance_model(*v));
    const verify::AttentionRun run = verify::run_paged_attention(*v, p);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched) << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    const verify::AttentionComparison m =
        verify::compare_attention(p, expected, tolerance, run.out);
    EXPECT_TRUE(m.passed()) << m.describe();
  }
}

/// 300 tokens, every 7th skipped, into slots of the pool's last blocks.
CopyCase large_copy_case() {
  return Copy("large", DType::kFloat16, 128, 16, 1, 300, kLargeBlocks, 7, 502).high_slots();
}

TEST(LargeCache, GatherBeyond2e31Elements) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  ref::CacheCopyProblem p =
      gen::materialize(for_family(large_copy_case(), PC_FAMILY_GATHER_CACHED_KV));
  ASSERT_GT(p.cache.key_span(), int64_t{1} << 31);
  for (const VariantInfo* v : builtin_registry().family(PC_FAMILY_GATHER_CACHED_KV)) {
    SCOPED_TRACE("variant " + v->name);
    const verify::CopyRun run = verify::run_gather_cached_kv(*v, p);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched) << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    // The reference gathers into the problem's own (small) outputs; restore them afterwards
    // instead of copying the 8 GiB of caches.
    const std::vector<std::byte> key0 = p.key, value0 = p.value;
    ref::gather_cached_kv(p);
    EXPECT_EQ(byte_difference(p.key, run.first, 2), "") << "key_out";
    EXPECT_EQ(byte_difference(p.value, run.second, 2), "") << "value_out";
    p.key = key0;
    p.value = value0;
  }
}

TEST(LargeCache, ReshapeBeyond2e31Elements) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  ref::CacheCopyProblem p =
      gen::materialize(for_family(large_copy_case(), PC_FAMILY_RESHAPE_AND_CACHE));
  ASSERT_GT(p.cache.key_span(), int64_t{1} << 31);
  const auto variants = builtin_registry().family(PC_FAMILY_RESHAPE_AND_CACHE);
  std::vector<verify::CopyRun> runs;
  for (const VariantInfo* v : variants) {
    runs.push_back(verify::run_reshape_and_cache(*v, p));
  }
  ref::reshape_and_cache(p);  // in place: p's caches become the expected caches
  for (std::size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE("variant " + variants[i]->name);
    ASSERT_EQ(runs[i].outcome.disposition, verify::LaunchDisposition::kLaunched)
        << runs[i].outcome.message;
    EXPECT_TRUE(runs[i].outcome.guards_intact) << runs[i].outcome.guard_report;
    EXPECT_EQ(byte_difference(p.key_cache, runs[i].first, 2), "") << "key_cache";
    EXPECT_EQ(byte_difference(p.value_cache, runs[i].second, 2), "") << "value_cache";
  }
}

}  // namespace
}  // namespace pagecheck::gpu_test
