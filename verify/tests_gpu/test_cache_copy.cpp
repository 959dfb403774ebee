/// Every registered gather_cached_kv and reshape_and_cache variant against the reference, bit
/// for bit over the whole output buffers (rows with slot -1, padding and unused cache slots
/// included), on fixed cases covering every dtype, head size and block size, MQA, slot -1,
/// padded caches, strided rows and bit-pattern contents. The "Quick" cases are the sanitizer
/// set. Each case is a gen spec, materialized by gen::materialize.
#include <gtest/gtest.h>

#include "case_builder.h"
#include "copy_exact.h"
#include "fixed_cases.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::gpu_test {
namespace {

std::string case_name(const ::testing::TestParamInfo<CopyCase>& info) {
  return info.param.name;
}

/// Runs every variant of `family` on the case and compares both output buffers bit for bit.
void expect_every_variant_exact(const CopyCase& c, pc_family family) {
  const gen::CopySpec spec = for_family(c, family);
  for (const VariantInfo* v : builtin_registry().family(family)) {
    ASSERT_TRUE(v->supports(verify::to_abi(spec.dtype), spec.head_size, spec.block_size))
        << "variant " << v->name;
  }
  expect_copy_exact(gen::materialize(spec), family);
}

class CacheCopyFixed : public ::testing::TestWithParam<CopyCase> {};

TEST_P(CacheCopyFixed, GatherBitExact) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  expect_every_variant_exact(GetParam(), PC_FAMILY_GATHER_CACHED_KV);
}

TEST_P(CacheCopyFixed, ReshapeBitExact) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  expect_every_variant_exact(GetParam(), PC_FAMILY_RESHAPE_AND_CACHE);
}

INSTANTIATE_TEST_SUITE_P(Quick, CacheCopyFixed, ::testing::ValuesIn(quick_copy_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Full, CacheCopyFixed, ::testing::ValuesIn(full_copy_cases()), case_name);

}  // namespace
}  // namespace pagecheck::gpu_test
