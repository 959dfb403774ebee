/// Every registered paged-attention variant against the float64 reference on fixed cases that
/// cover every dtype, head size and block size, GQA/MQA, ALiBi, edge context lengths (1, a
/// block, a block +- 1, partition boundaries), padded caches, strided query/output, flat and
/// peaked attention. The "Quick" cases are the sanitizer set. Each case is a gen spec,
/// materialized by gen::materialize; the bound is attention_tolerance() under the precision the
/// variant declares.
#include <gtest/gtest.h>

#include "case_builder.h"
#include "fixed_cases.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/attention_comparison.h"
#include "pagecheck/verify/gen/materialize.h"
#include "pagecheck/verify/tolerance.h"

namespace pagecheck::gpu_test {
namespace {

std::string case_name(const ::testing::TestParamInfo<AttentionCase>& info) {
  return info.param.name;
}

class PagedAttentionFixed : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(PagedAttentionFixed, EveryVariantMatchesReference) {
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  const gen::AttentionSpec& spec = GetParam().spec;
  const ref::PagedAttentionProblem p = gen::materialize(spec);
  const ref::PagedAttentionResult expected = ref::paged_attention(p);
  verify::DeviceRunOptions options;
  options.attention_out_layout = device_out_layout(spec);
  const auto variants = builtin_registry().family(PC_FAMILY_PAGED_ATTENTION);
  ASSERT_FALSE(variants.empty()) << "no paged_attention variant registered";
  for (const VariantInfo* v : variants) {
    SCOPED_TRACE("variant " + v->name);
    ASSERT_TRUE(v->supports(verify::to_abi(spec.dtype), spec.head_size, spec.block_size))
        << "built-in variant does not declare this case's dtype / head size / block size";
    const std::vector<double> tolerance =
        verify::attention_tolerance(p, expected, tolerance_model(*v));
    const verify::AttentionRun run = verify::run_paged_attention(*v, p, options);
    ASSERT_EQ(run.outcome.disposition, verify::LaunchDisposition::kLaunched)
        << disposition_name(run.outcome.disposition) << ": " << run.outcome.message;
    EXPECT_TRUE(run.outcome.guards_intact) << run.outcome.guard_report;
    const verify::AttentionComparison m =
        verify::compare_attention(p, expected, tolerance, run.out);
    EXPECT_TRUE(m.passed()) << m.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Quick, PagedAttentionFixed, ::testing::ValuesIn(quick_attention_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Full, PagedAttentionFixed, ::testing::ValuesIn(full_attention_cases()),
                         case_name);

}  // namespace
}  // namespace pagecheck::gpu_test
