/// `pagecheck review` logic on scratch git repositories: missing evidence fails, recorded
/// evidence passes, regressions and failed verifications fail, corrupt records are bad input.
#include <gtest/gtest.h>

#include "pagecheck/review/review.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

const FamilyReview& family(const ReviewResult& r, const std::string& name) {
  for (const auto& f : r.families) {
    if (f.family == name) return f;
  }
  throw std::runtime_error("no family " + name);
}

std::string all_problems(const ReviewResult& r) {
  std::string s;
  for (const auto& f : r.families) {
    for (const auto& p : f.problems) s += f.family + ": " + p + "\n";
  }
  return s;
}

ReviewResult review(const ScratchRepo& repo, std::optional<std::string> base = std::nullopt,
                    double threshold = 0.05) {
  ReviewOptions o;
  o.repo = repo.root();
  o.base = std::move(base);
  o.threshold = threshold;
  return run_review(o);
}

TEST(ReviewScratch, RecordedEvidenceForEveryFamilyPasses) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.commit("kernels with evidence");
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  ASSERT_EQ(r.families.size(), 3u);
  EXPECT_TRUE(family(r, "gather_cached_kv").verification_passed);
  EXPECT_TRUE(family(r, "gather_cached_kv").bandwidth_present);
  EXPECT_EQ(family(r, "gather_cached_kv").sources,
            (std::vector<std::string>{"kernels/include/plugin.h", "kernels/src/copy/gather.cu"}));
  EXPECT_NE(render_review_markdown(r).find("## pagecheck review: PASS"), std::string::npos);
}

TEST(ReviewScratch, KernelEditWithoutNewRecordFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.commit("base");
  repo.write("kernels/src/copy/gather.cu", "__global__ void gather() { /* faster */ }\n");
  repo.commit("edit gather");
  const ReviewResult r = review(repo, "HEAD~1");
  EXPECT_EQ(r.exit_code(), 1);
  const FamilyReview& g = family(r, "gather_cached_kv");
  EXPECT_TRUE(g.changed);
  EXPECT_FALSE(g.verification_present);
  EXPECT_FALSE(g.bandwidth_present);
  EXPECT_EQ(g.problems.size(), 2u) << all_problems(r);
  EXPECT_TRUE(family(r, "paged_attention").problems.empty()) << all_problems(r);
  EXPECT_FALSE(family(r, "paged_attention").changed);
  const std::string md = render_review_markdown(r);
  EXPECT_NE(md.find("## pagecheck review: FAIL"), std::string::npos) << md;
  EXPECT_NE(md.find("fixtures/verification/gather_cached_kv-" + short_hash(g.hash) + ".json"),
            std::string::npos)
      << md;
}

TEST(ReviewScratch, KernelEditWithNewRecordsPassesAndComparesWithTheBase) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.commit("base");
  repo.write("kernels/src/copy/gather.cu", "__global__ void gather() { /* faster */ }\n");
  repo.record_verification("gather_cached_kv");
  repo.record_bandwidth("gather_cached_kv", {8, 20.1});
  repo.commit("edit gather with evidence");
  const ReviewResult r = review(repo, "HEAD~1");
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  const FamilyReview& g = family(r, "gather_cached_kv");
  ASSERT_TRUE(g.comparison.has_value());
  ASSERT_EQ(g.comparison->rows.size(), 4u);  // variants a and b, two shapes each
  EXPECT_EQ(g.comparison->rows[0].verdict, bench::Verdict::kFaster);
  EXPECT_EQ(g.comparison->rows[1].verdict, bench::Verdict::kSame);
  EXPECT_FALSE(family(r, "paged_attention").comparison.has_value());  // unchanged
  const std::string md = render_review_markdown(r);
  EXPECT_NE(md.find("before/after"), std::string::npos) << md;
  EXPECT_NE(md.find("changed (was `" + short_hash(g.base_hash) + "`)"), std::string::npos) << md;
}

TEST(ReviewScratch, RecordedRegressionFailsUnlessTheThresholdAllowsIt) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.commit("base");
  repo.write("kernels/src/attention/attention.cu", "__global__ void attention() { /* v2 */ }\n");
  repo.record_verification("paged_attention");
  repo.record_bandwidth("paged_attention", {10, 26});  // +30% on the second shape
  repo.commit("slower attention");
  const ReviewResult r = review(repo, "HEAD~1");
  EXPECT_EQ(r.exit_code(), 1);
  const FamilyReview& a = family(r, "paged_attention");
  ASSERT_TRUE(a.comparison.has_value());
  EXPECT_EQ(a.comparison->regressions(), 2);  // variants a and b on the second shape
  ASSERT_EQ(a.problems.size(), 1u);
  EXPECT_NE(a.problems[0].find("slower"), std::string::npos) << a.problems[0];
  EXPECT_EQ(review(repo, "HEAD~1", 0.5).exit_code(), 0);
}

TEST(ReviewScratch, BaseReportIsFoundInTheBaseCommitWhenDeletedSince) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string old_report =
      bandwidth_report_path(repo.root(), "paged_attention", repo.hash("paged_attention"));
  repo.commit("base");
  std::filesystem::remove(old_report);
  repo.write("kernels/src/attention/attention.cu", "__global__ void attention() { /* v2 */ }\n");
  repo.record_verification("paged_attention");
  repo.record_bandwidth("paged_attention", {10, 30});
  repo.commit("slower attention, old report deleted");
  const ReviewResult r = review(repo, "HEAD~1");
  const FamilyReview& a = family(r, "paged_attention");
  ASSERT_TRUE(a.comparison.has_value()) << all_problems(r);
  EXPECT_EQ(a.base_report_origin.rfind("HEAD~1:fixtures/bandwidth/", 0), 0u)
      << a.base_report_origin;
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(ReviewScratch, FailingVerificationRecordFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.record_verification("gather_cached_kv", /*failed=*/3);
  repo.commit("evidence with a failure");
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 1);
  const FamilyReview& g = family(r, "gather_cached_kv");
  EXPECT_TRUE(g.verification_present);
  EXPECT_FALSE(g.verification_passed);
  ASSERT_EQ(g.problems.size(), 1u);
  EXPECT_NE(g.problems[0].find("b: 3 of 200 cases failed"), std::string::npos) << g.problems[0];
}

TEST(ReviewScratch, FailedRowInTheBandwidthReportFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path =
      bandwidth_report_path(repo.root(), "gather_cached_kv", repo.hash("gather_cached_kv"));
  bench::BenchReport rep = bench::read_report(path);
  rep.shapes[0].variants[0].status = bench::RunStatus::kFailed;
  rep.shapes[0].variants[0].message = "output check: key_out: 5 of 10 elements are NaN/inf";
  bench::write_report(rep, path);
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(all_problems(r).find("output check"), std::string::npos) << all_problems(r);
}

TEST(ReviewScratch, CorruptRecordIsBadInputNamingTheFile) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path =
      verification_record_path(repo.root(), "paged_attention", repo.hash("paged_attention"));
  repo.write("fixtures/verification/" + std::filesystem::path(path).filename().string(),
             "{\"schema\": \"pagecheck.verification/1\", \"family\": \"paged_att");
  try {
    review(repo);
    FAIL() << "corrupt record accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(ReviewScratch, RecordForAnotherHashUnderThisNameIsBadInput) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string h = repo.hash("gather_cached_kv");
  // A report claiming another hash, stored under the current hash's name.
  bench::write_report(
      bench::testing::make_report("gather_cached_kv", std::string(64, 'f'), {"a"}, {{{10, 0.01}}}),
      bandwidth_report_path(repo.root(), "gather_cached_kv", h));
  EXPECT_THROW(review(repo), std::invalid_argument);
}

TEST(ReviewScratch, UnknownBaseRevisionIsBadInput) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.commit("base");
  try {
    review(repo, "no-such-branch");
    FAIL() << "unknown revision accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-branch'"), std::string::npos) << e.what();
  }
}

TEST(ReviewScratch, FamilyNewSinceTheBaseNeedsEvidenceButNoComparison) {
  ScratchRepo repo;
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu", "kernels/include/*.h"]}]})");
  repo.record_verification("gather_cached_kv");
  repo.record_bandwidth("gather_cached_kv", {10});
  repo.commit("base: gather only");
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu", "kernels/include/*.h"]},
    {"name": "paged_attention", "sources": ["kernels/src/attention/*", "kernels/include/*.h"]}]})");
  repo.record_verification("paged_attention");
  repo.record_bandwidth("paged_attention", {10});
  repo.commit("add attention");
  const ReviewResult r = review(repo, "HEAD~1");
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  const FamilyReview& a = family(r, "paged_attention");
  EXPECT_TRUE(a.base_hash.empty());
  EXPECT_FALSE(a.comparison.has_value());
  EXPECT_FALSE(a.notes.empty());
}

}  // namespace
}  // namespace pagecheck::review
