/// Comparison verdicts (a change counts only beyond both runs' noise) and exit codes.
#include <gtest/gtest.h>

#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/compare_rounds.h"
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

/// A gather report with one variant on two shapes at these medians (noise 1%).
BenchReport round_report(const std::string& hash, double a_us, double b_us) {
  return make_report("gather_cached_kv", hash, {"vectorized"}, {{{a_us, 0.01}, {b_us, 0.01}}});
}

TEST(CompareRounds, AVerdictHoldsOnlyWhenEveryRoundGivesIt) {
  // Shape t64: 20% faster in both rounds. Shape t128: faster in round 1, slower in round 2.
  const RoundsComparison c =
      compare_rounds({round_report(kOldHash, 10, 20), round_report(kOldHash, 10, 20)},
                     {round_report(kNewHash, 8, 18), round_report(kNewHash, 8.2, 22)}, 0.05);
  EXPECT_EQ(c.rounds, 2);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kFaster);
  EXPECT_NEAR(c.rows[0].min_speedup, 10 / 8.2, 1e-12);
  EXPECT_NEAR(c.rows[0].max_speedup, 10 / 8.0, 1e-12);
  EXPECT_EQ(c.rows[0].old_us, (std::vector<double>{10, 10}));
  EXPECT_EQ(c.rows[0].new_us, (std::vector<double>{8, 8.2}));
  EXPECT_EQ(c.rows[1].verdict, Verdict::kSame);
  EXPECT_FALSE(c.rows[1].regression);  // a regression in one round only
  EXPECT_EQ(c.exit_code(), 0);
  const std::string md = render_rounds_markdown(c);
  EXPECT_NE(md.find("| t64 | vectorized | 10.0 / 10.0 | 8.00 / 8.20 | 1.220-1.250x | faster |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("2 alternating rounds"), std::string::npos) << md;
}

TEST(CompareRounds, ARegressionInEveryRoundExitsOne) {
  const RoundsComparison c =
      compare_rounds({round_report(kOldHash, 10, 20), round_report(kOldHash, 10, 20)},
                     {round_report(kNewHash, 12, 20), round_report(kNewHash, 12.5, 20)}, 0.05);
  EXPECT_EQ(c.rows[0].verdict, Verdict::kSlower);
  EXPECT_TRUE(c.rows[0].regression);
  EXPECT_EQ(c.rows[1].verdict, Verdict::kSame);
  EXPECT_EQ(c.exit_code(), 1);
  EXPECT_NE(render_rounds_markdown(c).find("**slower (regression)**"), std::string::npos);
}

TEST(CompareRounds, ARowMissingInARoundIsNotComparable) {
  auto partial = round_report(kNewHash, 8, 18);
  partial.shapes.pop_back();
  const RoundsComparison c =
      compare_rounds({round_report(kOldHash, 10, 20), round_report(kOldHash, 10, 20)},
                     {round_report(kNewHash, 8, 18), partial}, 0.05);
  EXPECT_TRUE(c.rows[1].missing);
  EXPECT_EQ(c.rows[1].verdict, Verdict::kUnavailable);
  EXPECT_EQ(c.rows[1].new_us, (std::vector<double>{18, 0}));
  EXPECT_THROW(compare_rounds({round_report(kOldHash, 10, 20)}, {}, 0.05), ReportError);
}

}  // namespace
}  // namespace pagecheck::bench
