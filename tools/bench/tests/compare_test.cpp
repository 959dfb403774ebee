/// Comparison verdicts (a change counts only beyond both runs' noise) and exit codes.
#include <gtest/gtest.h>

#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/render.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

using testing::make_report;
using testing::Timing;

const std::string kOldHash(64, 'a');
const std::string kNewHash(64, 'b');

TEST(Classify, WithinTheLargerNoiseIsSame) {
  // +3% with noises 1% and 5%: inside the larger noise.
  EXPECT_EQ(classify(100, 0.01, 103, 0.05), Verdict::kSame);
  EXPECT_EQ(classify(100, 0.05, 97, 0.01), Verdict::kSame);
  // +3% with both noises at 1%: real.
  EXPECT_EQ(classify(100, 0.01, 103, 0.01), Verdict::kSlower);
  EXPECT_EQ(classify(100, 0.01, 97, 0.01), Verdict::kFaster);
  // Exactly at the noise bound counts as same.
  EXPECT_EQ(classify(100, 0.02, 102, 0.0), Verdict::kSame);
  EXPECT_EQ(classify(0, 0.01, 100, 0.01), Verdict::kUnavailable);
}

TEST(CompareReports, SlowerBeyondThresholdIsARegressionAndExitsOne) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"vectorized"},
                                 {{{10, 0.01}, {20, 0.01}, {40, 0.01}}});
  const auto new_r = make_report("gather_cached_kv", kNewHash, {"vectorized"},
                                 {{{10.1, 0.01}, {24, 0.01}, {30, 0.01}}});
  const Comparison c = compare_reports(old_r, new_r, 0.05);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSame);
  EXPECT_EQ(c.rows[1].verdict, Verdict::kSlower);
  EXPECT_TRUE(c.rows[1].regression);  // +20% > 5%
  EXPECT_NEAR(c.rows[1].speedup, 20.0 / 24.0, 1e-12);
  EXPECT_EQ(c.rows[2].verdict, Verdict::kFaster);
  EXPECT_FALSE(c.rows[2].regression);
  EXPECT_EQ(c.regressions(), 1);
  EXPECT_EQ(c.exit_code(), 1);
}

TEST(CompareReports, SlowerWithinThresholdIsReportedButPasses) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"v"}, {{{100, 0.005}}});
  const auto new_r = make_report("gather_cached_kv", kNewHash, {"v"}, {{{103, 0.005}}});
  const Comparison c = compare_reports(old_r, new_r, 0.05);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSlower);
  EXPECT_FALSE(c.rows[0].regression);
  EXPECT_EQ(c.exit_code(), 0);
  // The same change fails a 2% threshold.
  EXPECT_EQ(compare_reports(old_r, new_r, 0.02).exit_code(), 1);
}

TEST(CompareReports, NoisySlowdownIsNotARegression) {
  // +20% but the new run's noise is 30%: not distinguishable.
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"v"}, {{{100, 0.01}}});
  const auto new_r = make_report("gather_cached_kv", kNewHash, {"v"}, {{{120, 0.30}}});
  const Comparison c = compare_reports(old_r, new_r, 0.05);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSame);
  EXPECT_EQ(c.exit_code(), 0);
}

TEST(CompareReports, FailedNowIsARegressionUnsupportedIsNot) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"v"}, {{{100, 0.01}, {200, 0.01}}});
  auto new_r = make_report("gather_cached_kv", kNewHash, {"v"}, {{{100, 0.01}, {200, 0.01}}});
  new_r.shapes[0].variants[0].status = RunStatus::kUnsupported;
  new_r.shapes[0].variants[0].message = "head size 128";
  EXPECT_EQ(compare_reports(old_r, new_r, 0.05).exit_code(), 0);
  EXPECT_EQ(compare_reports(old_r, new_r, 0.05).rows[0].verdict, Verdict::kUnavailable);
  new_r.shapes[1].variants[0].status = RunStatus::kFailed;
  new_r.shapes[1].variants[0].message = "output check: 5 NaN";
  const Comparison c = compare_reports(old_r, new_r, 0.05);
  EXPECT_TRUE(c.rows[1].regression);
  EXPECT_NE(c.rows[1].note.find("output check"), std::string::npos);
  EXPECT_EQ(c.exit_code(), 1);
}

TEST(CompareReports, VariantsOnOneSideOnlyAreMissingRowsThatFailUnlessAllowed) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"naive"}, {{{100, 0.01}}});
  const auto new_r = make_report("gather_cached_kv", kNewHash, {"naive", "vectorized"},
                                 {{{100, 0.01}}, {{50, 0.01}}});
  Comparison c = compare_reports(old_r, new_r, 0.05);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[1].new_variant, "vectorized");
  EXPECT_EQ(c.rows[1].verdict, Verdict::kUnavailable);
  EXPECT_FALSE(c.rows[0].missing);
  EXPECT_TRUE(c.rows[1].missing);
  EXPECT_EQ(c.missing(), 1);
  EXPECT_EQ(c.exit_code(), 1);
  EXPECT_NE(render_comparison_markdown(c).find("**missing**"), std::string::npos);
  c.allow_missing = true;
  EXPECT_EQ(c.exit_code(), 0);
  EXPECT_EQ(render_comparison_markdown(c).find("**missing**"), std::string::npos);
}

TEST(CompareReports, ShapesOnOneSideOnlyAreMissingRows) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"v"}, {{{10, 0.01}, {20, 0.01}}});
  auto new_r = old_r;
  new_r.shapes.pop_back();  // t128 not measured any more
  const Comparison c = compare_reports(old_r, new_r, 0.05);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_TRUE(c.rows[1].missing);
  EXPECT_EQ(c.rows[1].shape, "t128");
  EXPECT_EQ(c.exit_code(), 1);
  // The other way round too.
  EXPECT_EQ(compare_reports(new_r, old_r, 0.05).exit_code(), 1);
  // An unsupported result is present, not missing.
  auto unsupported = old_r;
  unsupported.shapes[1].variants[0].status = RunStatus::kUnsupported;
  EXPECT_EQ(compare_reports(old_r, unsupported, 0.05).missing(), 0);
}

TEST(CompareReports, OneLabelForTwoProblemsIsRefusedNamingTheField) {
  const auto old_r = make_report("gather_cached_kv", kOldHash, {"v"}, {{{10, 0.01}}});
  auto new_r = old_r;
  new_r.shapes[0].shape.dtype = DType::kBFloat16;
  try {
    compare_reports(old_r, new_r, 0.05);
    FAIL() << "float16 and bfloat16 compared under one label";
  } catch (const ReportError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shape 't64'"), std::string::npos) << what;
    EXPECT_NE(what.find("dtype float16 (old) vs bfloat16 (new)"), std::string::npos) << what;
  }
  new_r = old_r;
  new_r.shapes[0].shape.head_size = 64;
  EXPECT_THROW(compare_reports(old_r, new_r, 0.05), ReportError);
  new_r = old_r;
  new_r.shapes[0].shape.num_blocks *= 2;
  EXPECT_THROW(compare_reports(old_r, new_r, 0.05), ReportError);
}

TEST(CompareReports, RefusesDifferentFamiliesAndNegativeThresholds) {
  const auto a = make_report("gather_cached_kv", kOldHash, {"v"}, {{{1, 0.01}}});
  const auto b = make_report("reshape_and_cache", kNewHash, {"v"}, {{{1, 0.01}}});
  EXPECT_THROW(compare_reports(a, b, 0.05), ReportError);
  EXPECT_THROW(compare_reports(a, a, -0.1), ReportError);
}

TEST(CompareReports, WarnsWhenDevicesDiffer) {
  const auto a = make_report("gather_cached_kv", kOldHash, {"v"}, {{{1, 0.01}}});
  auto b = a;
  b.environment.device = "Other GPU";
  EXPECT_EQ(compare_reports(a, b, 0.05).warnings.size(), 1u);
}

TEST(CompareVariants, RowsPerShapeBaselineAgainstCandidate) {
  const auto r = make_report("paged_attention", kOldHash, {"v1_baseline", "v1_shared_q"},
                             {{{100, 0.01}, {200, 0.01}}, {{90, 0.01}, {210, 0.01}}});
  const Comparison c = compare_variants(r, "v1_baseline", "v1_shared_q", 0.05);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].old_variant, "v1_baseline");
  EXPECT_EQ(c.rows[0].new_variant, "v1_shared_q");
  EXPECT_NEAR(c.rows[0].speedup, 100.0 / 90.0, 1e-12);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kFaster);
  EXPECT_EQ(c.rows[1].verdict, Verdict::kSlower);
  EXPECT_FALSE(c.rows[1].regression);  // +5% is not beyond 5%
  EXPECT_THROW(compare_variants(r, "v1_baseline", "nope", 0.05), ReportError);
}

TEST(CompareVariants, AShapeWithoutTheCandidateIsMissing) {
  auto r = make_report("paged_attention", kOldHash, {"v1_baseline", "v1_shared_q"},
                       {{{100, 0.01}, {200, 0.01}}, {{100, 0.01}, {200, 0.01}}});
  r.shapes[1].variants.pop_back();
  const Comparison c = compare_variants(r, "v1_baseline", "v1_shared_q", 0.05);
  EXPECT_EQ(c.missing(), 1);
  EXPECT_EQ(c.exit_code(), 1);
  EXPECT_EQ(side_by_side(r, "v1_baseline", "v1_shared_q").exit_code(), 0);  // informational
}

}  // namespace
}  // namespace pagecheck::bench
