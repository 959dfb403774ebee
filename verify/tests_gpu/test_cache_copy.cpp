/// Every registered gather_cached_kv and reshape_and_cache variant against the reference, bit
/// for bit over the whole output buffers (rows with slot -1, padding and unused cache slots
/// included), on fixed cases covering every dtype, head size and block size, MQA, slot -1,
/// padded caches and strided rows. The "Quick" cases are the sanitizer set.
#include <gtest/gtest.h>

#include "case_builder.h"
#include "fixed_cases.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"

namespace pagecheck::gpu_test {
namespace {

std::string case_name(const ::testing::TestParamInfo<CopyCase>& info) {
  return info.param.name;
}

pc_dtype to_pc(DType d) {
  return static_cast<pc_dtype>(static_cast<int>(d));
}

class CacheCopyFixed : public ::testing::TestWithParam<CopyCase> {};

TEST_P(CacheCopyFixed, GatherBitExact) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  const CopyCase& c = GetParam();
  const ref::CacheCopyProblem p = build_gather_problem(c);
  ref::CacheCopyProblem expected = p;
  ref::gather_cached_kv(expected);
  const auto variants = builtin_registry().family(PC_FAMILY_GATHER_CACHED_KV);
  ASSERT_FALSE(variants.empty()) << "no gather_cached_kv variant registered";
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE("variant " + v->name);
    ASSERT_TRUE(v->supports(to_pc(c.dtype), c.head_size, c.block_size));
    const verify::CopyRun run = verify::run_gather_cached_kv(*v, p);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
        << disposition_name(run.outcome.disposition) << ": " << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    const std::size_t elem = dtype_size(c.dtype);
    EXPECT_EQ(byte_difference(expected.key, run.first, elem), "") << "key_out";
    EXPECT_EQ(byte_difference(expected.value, run.second, elem), "") << "value_out";
  }
}

TEST_P(CacheCopyFixed, ReshapeBitExact) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  const CopyCase& c = GetParam();
  const ref::CacheCopyProblem p = build_reshape_problem(c);
  ref::CacheCopyProblem expected = p;
  ref::reshape_and_cache(expected);
  const auto variants = builtin_registry().family(PC_FAMILY_RESHAPE_AND_CACHE);
  ASSERT_FALSE(variants.empty()) << "no reshape_and_cache variant registered";
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE("variant " + v->name);
    ASSERT_TRUE(v->supports(to_pc(c.dtype), c.head_size, c.block_size));
    const verify::CopyRun run = verify::run_reshape_and_cache(*v, p);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
        << disposition_name(run.outcome.disposition) << ": " << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    const std::size_t elem = dtype_size(c.dtype);
    EXPECT_EQ(byte_difference(expected.key_cache, run.first, elem), "") << "key_cache";
    EXPECT_EQ(byte_difference(expected.value_cache, run.second, elem), "") << "value_cache";
  }
}

INSTANTIATE_TEST_SUITE_P(Quick, CacheCopyFixed, ::testing::ValuesIn(quick_copy_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Full, CacheCopyFixed, ::testing::ValuesIn(full_copy_cases()), case_name);

}  // namespace
}  // namespace pagecheck::gpu_test
