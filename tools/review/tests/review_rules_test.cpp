/// Review rules on scratch repositories (issue 14): every registered built-in variant in each
/// record and report, no unknown variant, trustworthy record fields (device, date, tool
/// version, full case count, goldens), and kernels/families.json tied to the built-in
/// families.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "pagecheck/review/review.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

std::string all_problems(const ReviewResult& r) {
  std::string s;
  for (const auto& f : r.families) {
    for (const auto& p : f.problems) s += f.family + ": " + p + "\n";
  }
  return s;
}

/// The review as `pagecheck review` runs it: the scratch tree's families and variants are the
/// registered ones.
ReviewResult review(const ScratchRepo& repo) {
  ReviewOptions o;
  o.repo = repo.root();
  o.kernel_families.assign(std::begin(ScratchRepo::kFamilies), std::end(ScratchRepo::kFamilies));
  o.builtin_variants.emplace();
  for (const auto& f : o.kernel_families) (*o.builtin_variants)[f] = repo.variants(f);
  return run_review(o);
}

/// Rewrites the paged_attention record through `edit`.
template <class Edit>
std::string edit_record(const ScratchRepo& repo, Edit edit) {
  const std::string path =
      verification_record_path(repo.root(), "paged_attention", repo.hash("paged_attention"));
  VerificationRecord r = read_verification_record(path);
  edit(r);
  write_verification_record(repo.root(), r, false);
  return path.substr(repo.root().size() + 1);
}

TEST(ReviewRules, CompleteEvidencePasses) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  EXPECT_TRUE(r.notes.empty());
}

TEST(ReviewRules, RecordCutToOneVariantFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path = edit_record(repo, [](VerificationRecord& r) { r.variants.resize(1); });
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(all_problems(r).find("verification record " + path +
                                 " has no result for b, a registered built-in paged_attention"),
            std::string::npos)
      << all_problems(r);
}

TEST(ReviewRules, RenamedVariantInTheRecordFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  edit_record(repo, [](VerificationRecord& r) { r.variants[1].variant = "b_renamed"; });
  const std::string problems = all_problems(review(repo));
  EXPECT_NE(problems.find("has no result for b,"), std::string::npos) << problems;
  EXPECT_NE(problems.find("has a result for b_renamed, which is neither a registered "
                          "paged_attention variant nor declared"),
            std::string::npos)
      << problems;
}

TEST(ReviewRules, ReportLackingARegisteredVariantFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.set_variants("gather_cached_kv", {"a"});
  repo.record_bandwidth("gather_cached_kv", {10, 20});  // report without "b"
  repo.set_variants("gather_cached_kv", {"a", "b"});
  const ReviewResult r = review(repo);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(all_problems(r).find("gather_cached_kv: bandwidth report fixtures/bandwidth/"
                                 "gather_cached_kv-"),
            std::string::npos)
      << all_problems(r);
  EXPECT_NE(all_problems(r).find("has no rows for b, a registered built-in gather_cached_kv"),
            std::string::npos)
      << all_problems(r);
}

TEST(ReviewRules, AReportOfAnotherSweepOrThatMeasuredAVariantNowhereFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path = repo.record_bandwidth("gather_cached_kv", {10, 20});
  nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  j["sweep"] = "custom";
  for (auto& row : j["results"]) row["variants"][1]["status"] = "unsupported";
  std::ofstream(path, std::ios::trunc) << j.dump();
  const std::string problems = all_problems(review(repo));
  EXPECT_NE(problems.find("bandwidth report fixtures/bandwidth/gather_cached_kv-"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("sweep 'custom', not the default sweep"), std::string::npos) << problems;
  EXPECT_NE(problems.find("variant 'b' was measured on none of the 2 shapes"), std::string::npos)
      << problems;
}

TEST(ReviewRules, ReportRowForAnUnknownVariantFails) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.set_variants("gather_cached_kv", {"a", "b", "stray"});
  repo.record_bandwidth("gather_cached_kv", {10, 20});
  repo.set_variants("gather_cached_kv", {"a", "b"});
  EXPECT_NE(all_problems(review(repo)).find("has a result for stray"), std::string::npos);
}

TEST(ReviewRules, WithoutRegisteredVariantsTheReviewSaysItDidNotCheck) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  edit_record(repo, [](VerificationRecord& r) { r.variants.resize(1); });
  ReviewOptions o;
  o.repo = repo.root();
  const ReviewResult r = run_review(o);
  EXPECT_EQ(r.exit_code(), 0) << all_problems(r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(render_review_markdown(r).find("registered built-in variants not checked"),
            std::string::npos);
}

TEST(ReviewRules, UntrustworthyRecordFieldsFailNamingRecordAndField) {
  struct Case {
    void (*edit)(VerificationRecord&);
    const char* problem;
  };
  const Case cases[] = {
      {[](VerificationRecord& r) { r.device.clear(); }, ": empty 'device'"},
      {[](VerificationRecord& r) { r.date = "last Tuesday"; },
       ": 'date' \"last Tuesday\" is not an ISO 8601 UTC time"},
      {[](VerificationRecord& r) { r.date = "2025-02-30T00:00:00Z"; }, ": 'date'"},
      {[](VerificationRecord& r) { r.tool_version.clear(); }, ": empty 'tool_version'"},
      {[](VerificationRecord& r) { r.variants[0] = testing::entry("a", 1, 1, 1, 0, 0); },
       ": a ran 1 cases, fewer than the 200 of a full run ('quick')"},
      {[](VerificationRecord& r) {
         r.golden = {true, "fixtures/golden", 35, 1};
       },
       ": the goldens (fixtures/golden) failed in the recording run (exit 1)"},
  };
  for (const Case& c : cases) {
    ScratchRepo repo;
    repo.record_all({10, 20});
    const std::string path = edit_record(repo, c.edit);
    const ReviewResult r = review(repo);
    EXPECT_EQ(r.exit_code(), 1) << c.problem;
    EXPECT_NE(all_problems(r).find("paged_attention: verification record " + path + c.problem),
              std::string::npos)
        << all_problems(r);
  }
}

TEST(ReviewRules, MissingBuiltInFamilyIsBadInputWhereBuiltInsLive) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu"]},
    {"name": "paged_attention", "sources": ["kernels/src/attention/*"]}]})");
  try {
    review(repo);
    FAIL() << "a families.json without reshape_and_cache was accepted";
  } catch (const EvidenceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(repo.root() + "/kernels/families.json"), std::string::npos) << what;
    EXPECT_NE(what.find("no entry holds the built-in reshape_and_cache variants"),
              std::string::npos)
        << what;
  }
}

TEST(ReviewRules, BuiltInVariantDescriptorsAloneRequireTheBuiltInFamilies) {
  ScratchRepo repo;
  repo.write("kernels/src/builtin_variants.cpp", "// descriptors\n");
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "mine", "family": "gather_cached_kv", "variants": ["p"], "sources": ["p/*"]}]})");
  EXPECT_TRUE(holds_builtin_kernels(repo.root(), load_family_sources(repo.root())));
  EXPECT_THROW(review(repo), EvidenceError);
}

TEST(ReviewRules, PluginRepositoryNeedsNoBuiltInFamily) {
  ScratchRepo repo;
  std::filesystem::remove_all(repo.root() + "/kernels/src");
  repo.write("src/plugin.cu", "__global__ void p() {}\n");
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "mine", "family": "gather_cached_kv", "variants": ["p"], "sources": ["src/*"]}]})");
  EXPECT_FALSE(holds_builtin_kernels(repo.root(), load_family_sources(repo.root())));
  const ReviewResult r = review(repo);  // no exception: only the plugin's evidence is missing
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(all_problems(r).find("no GPU verification record"), std::string::npos);
}

TEST(ReviewRules, UnknownKernelFamilyIsBadInput) {
  ScratchRepo repo;
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "mine", "family": "flash_attention", "variants": ["p"], "sources": ["src/*"]}]})");
  try {
    review(repo);
    FAIL() << "an unknown kernel family was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("'flash_attention', which pagecheck does not implement"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pagecheck::review
