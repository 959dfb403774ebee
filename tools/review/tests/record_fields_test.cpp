/// Verification records pagecheck.verification/2: what a reviewer needs (precision model, worst
/// errors, regimes and tags, goldens, sanitizers, dirty flag, quick runs), built from a verify
/// run's report, and the refusal of /1 records.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "pagecheck/review/review.h"
#include "pagecheck/review/run_conditions.h"
#include "pagecheck/review/verification_from_run.h"
#include "pagecheck/verify/tolerance.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

VerificationRecord full_record(const std::string& hash) {
  VerificationRecord r = testing::test_record("paged_attention", hash);
  r.git_dirty = true;
  r.golden = {true, "fixtures/golden", 35, 0};
  r.sanitizer = {true, {"racecheck"}};
  VariantVerification v = testing::entry("v1_baseline", 200, 9, 190, 0, 10);
  v.precision = precision_model_for("paged_attention");
  v.max_ratio = 0.25;
  v.max_abs = 1.5e-4;
  v.regimes = {{"normal", 150}, {"bits", 50}};
  v.tags = {{"alibi", 12}};
  r.variants.push_back(v);
  return r;
}

TEST(RecordFields, WrittenAndReadBackWithEverythingAReviewerNeeds) {
  ScratchRepo repo;
  const VerificationRecord r = full_record(std::string(64, 'a'));
  const std::string path = write_verification_record(repo.root(), r, false);
  const nlohmann::json j = testing::read_json(path);
  EXPECT_EQ(j["schema"], "pagecheck.verification/2");
  EXPECT_EQ(j["git_dirty"], true);
  EXPECT_EQ(j["golden"]["goldens"], 35);
  EXPECT_EQ(j["golden"]["passed"], true);
  EXPECT_EQ(j["sanitizer"]["tools"], nlohmann::json::array({"racecheck"}));
  EXPECT_EQ(j["quick"], false);
  const nlohmann::json& v = j["variants"][0];
  EXPECT_EQ(v["precision"]["name"], verify::ToleranceModel{}.describe());
  EXPECT_EQ(v["max_ratio"], 0.25);
  EXPECT_EQ(v["max_abs"], 1.5e-4);
  EXPECT_EQ(v["tags"]["alibi"], 12);
  EXPECT_EQ(v["regimes"]["bits"], 50);
  EXPECT_EQ(to_json(read_verification_record(path)), to_json(r));
}

TEST(RecordFields, NotRunGoldensAndSanitizersSayNotRun) {
  VerificationRecord r = full_record(std::string(64, 'a'));
  r.golden = {};
  r.sanitizer = {};
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["golden"], nlohmann::json({{"ran", false}}));
  EXPECT_EQ(j["sanitizer"]["ran"], false);
  EXPECT_EQ(to_json(verification_record_from_json(j, "r")), j);
}

TEST(RecordFields, VersionOneRecordMustBeReRecorded) {
  nlohmann::json j = to_json(full_record(std::string(64, 'a')));
  j["schema"] = "pagecheck.verification/1";
  try {
    verification_record_from_json(j, "old.json");
    FAIL() << "a /1 record was accepted";
  } catch (const EvidenceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("old.json"), std::string::npos) << what;
    EXPECT_NE(what.find("re-record it with `pagecheck verify --record` on a GPU"),
              std::string::npos)
        << what;
  }
}

TEST(RecordFields, ReviewOfAVersionOneRecordIsBadInput) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path = repo.edit_record_json(
      "paged_attention", [](nlohmann::json& j) { j["schema"] = "pagecheck.verification/1"; });
  ReviewOptions o;
  o.repo = repo.root();
  try {
    run_review(o);
    FAIL() << "a /1 record passed the review";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("re-record"), std::string::npos) << e.what();
  }
}

TEST(RecordFields, WriterReplacesAVersionOneRecordInsteadOfMergingIt) {
  ScratchRepo repo;
  const VerificationRecord r = full_record(std::string(64, 'b'));
  const std::string path = verification_record_path(repo.root(), r.family, r.source_hash);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << R"({"schema": "pagecheck.verification/1", "family": "paged_attention"})";
  EXPECT_EQ(write_verification_record(repo.root(), r), path);
  EXPECT_EQ(to_json(read_verification_record(path)), to_json(r));
}

TEST(RecordFields, QuickFollowsTheCaseCountAndCannotBeEditedAway) {
  VerificationRecord r = full_record(std::string(64, 'a'));
  EXPECT_FALSE(r.quick());
  r.variants[0] = testing::entry("v1_baseline", 199, 9, 199, 0, 0);
  EXPECT_TRUE(r.variants[0].quick());
  EXPECT_TRUE(r.quick());
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["variants"][0]["quick"], true);
  j["variants"][0]["quick"] = false;
  EXPECT_THROW(verification_record_from_json(j, "r"), EvidenceError);
  j = to_json(r);
  j["quick"] = false;
  EXPECT_THROW(verification_record_from_json(j, "r"), EvidenceError);
}

TEST(RecordFields, MissingPrecisionModelOrNegativeErrorIsInvalid) {
  VerificationRecord r = full_record(std::string(64, 'a'));
  r.variants[0].precision.name.clear();
  EXPECT_THROW(r.validate("r"), EvidenceError);
  r = full_record(std::string(64, 'a'));
  r.variants[0].max_ratio = -1;
  EXPECT_THROW(r.validate("r"), EvidenceError);
  nlohmann::json j = to_json(full_record(std::string(64, 'a')));
  j.erase("git_dirty");
  EXPECT_THROW(verification_record_from_json(j, "r"), EvidenceError);
}

TEST(RecordFields, MergedRecordKeepsOnlyConditionsThatHoldForEveryVariant) {
  ScratchRepo repo;
  VerificationRecord first = full_record(std::string(64, 'c'));
  first.sanitizer = {true, {"memcheck"}};
  write_verification_record(repo.root(), first);
  VerificationRecord second = full_record(std::string(64, 'c'));
  second.variants[0].variant = "v2_split";
  second.git_dirty = false;
  second.golden = {};
  second.sanitizer = {true, {"racecheck"}};
  const VerificationRecord merged =
      read_verification_record(write_verification_record(repo.root(), second));
  ASSERT_EQ(merged.variants.size(), 2u);
  EXPECT_TRUE(merged.git_dirty);        // the kept variant was recorded from a dirty tree
  EXPECT_TRUE(merged.golden.passed());  // the goldens of the same sources still count
  EXPECT_FALSE(merged.sanitizer.ran);   // no tool ran over both variants
}

TEST(RecordFields, PrecisionModelIsTheHarnessDefault) {
  const verify::ToleranceModel harness{};
  const PrecisionModel m = precision_model_for("paged_attention");
  EXPECT_EQ(m.name, harness.describe());
  EXPECT_EQ(m.parameters.at("c_tanh"), harness.c_tanh);
  EXPECT_EQ(m.parameters.at("c_exp"), harness.c_exp);
  EXPECT_EQ(m.parameters.at("c_arg"), harness.c_arg);
  EXPECT_EQ(m.parameters.at("safety"), harness.safety);
  EXPECT_EQ(m.parameters.size(), 4u);
  verify::ToleranceModel engine;
  engine.precision = verify::PrecisionModel::loosest();
  EXPECT_EQ(precision_model_for("paged_attention", engine.precision).name, engine.describe());
  EXPECT_NE(engine.describe(), harness.describe());
  EXPECT_EQ(precision_model_for("gather_cached_kv").name, "bit_exact");
  EXPECT_TRUE(precision_model_for("reshape_and_cache").parameters.empty());
}

TEST(RecordFields, VariantEntryComesFromTheRunReport) {
  verify::check::VariantReport v;
  v.registry = "builtin";
  v.family = "paged_attention";
  v.variant = "v2_split";
  v.run = 200;
  v.passed = 180;
  v.failed = 1;
  v.errors = 2;
  v.not_supported = 17;
  v.max_ratio = 0.5;
  v.max_abs = 2e-3;
  v.regimes = {{"normal", 200}};
  v.tags = {{"single_block", 4}, {"alibi", 9}};
  const VariantVerification e = variant_verification(v, 42);
  EXPECT_EQ(e.variant, "v2_split");
  EXPECT_EQ(e.seed, 42u);
  EXPECT_EQ(e.cases, 200);
  EXPECT_EQ(e.failed, 3);
  EXPECT_EQ(e.not_supported, 17);
  EXPECT_EQ(e.max_ratio, 0.5);
  EXPECT_EQ(e.max_abs, 2e-3);
  EXPECT_EQ(e.regimes, v.regimes);
  EXPECT_EQ(e.tags, v.tags);
  EXPECT_EQ(e.precision.name, precision_model_for("paged_attention").name);
}

TEST(RecordFields, GoldenRunNamesTheFolderAndTheChildsVerdict) {
  ScratchRepo repo;
  const GoldenRun g = golden_run(repo.root(), repo.root() + "/fixtures/golden", 1);
  EXPECT_TRUE(g.ran);
  EXPECT_EQ(g.dir, "fixtures/golden");
  EXPECT_EQ(g.goldens, 0);  // no MANIFEST.json there
  EXPECT_FALSE(g.passed());
  EXPECT_TRUE(golden_run(repo.root(), "/nonexistent/golden", 0).passed());
  EXPECT_EQ(golden_run(repo.root(), "/nonexistent/golden", 0).dir, "/nonexistent/golden");
}

TEST(RecordFields, SanitizerIsDetectedFromTheEnvironmentAndTheLauncher) {
  const std::vector<std::string> sh = {"/usr/bin/sh", "-c", "x"};
  const std::vector<std::string> launcher = {"/cuda/compute-sanitizer/TreeLauncherSubreaper"};
  const auto run = [](std::optional<std::string> env, std::vector<std::string> sanitizer) {
    return sanitizer_from(
        env, {{"/cuda/compute-sanitizer/TreeLauncherSubreaper"}, std::move(sanitizer), {"bash"}});
  };
  const std::string cs = "/usr/local/cuda/bin/../compute-sanitizer/compute-sanitizer";
  SanitizerRun s = run("49152", {cs, "--tool", "racecheck", "--target-processes", "all", "x"});
  EXPECT_TRUE(s.ran);
  EXPECT_EQ(s.tools, std::vector<std::string>{"racecheck"});
  s = run("49152", {cs, "--tool=initcheck", "x"});
  EXPECT_EQ(s.tools, std::vector<std::string>{"initcheck"});
  s = run("49152", {cs, "x"});
  EXPECT_EQ(s.tools, std::vector<std::string>{"memcheck"});
  EXPECT_FALSE(run(std::nullopt, {cs, "x"}).ran);  // not a sanitizer target
  EXPECT_FALSE(run("49152", {cs, "--target-processes", "application-only", "x"}).ran);
  EXPECT_FALSE(sanitizer_from("49152", {sh, launcher}).ran);  // no compute-sanitizer process
  if (std::getenv(kSanitizerEnv) == nullptr) {
    EXPECT_FALSE(detect_sanitizer().ran);  // the tests do not run under compute-sanitizer
  }
}

TEST(RecordFields, DirtyUnlessTheTreeIsACommits) {
  ScratchRepo repo;
  EXPECT_TRUE(record_dirty(repo.root()));  // git init, no commit yet
  repo.commit("kernels");
  EXPECT_FALSE(record_dirty(repo.root()));
  repo.write("kernels/src/copy/gather.cu", "edited\n");
  EXPECT_TRUE(record_dirty(repo.root()));
  std::filesystem::remove_all(repo.root() + "/.git");
  EXPECT_TRUE(record_dirty(repo.root()));  // no git checkout at all
}

TEST(RecordFields, DatesMustBeIso8601Utc) {
  EXPECT_TRUE(is_iso8601_utc("2025-01-31T12:34:56Z"));
  EXPECT_TRUE(is_iso8601_utc(utc_now_iso8601()));
  for (const char* bad :
       {"", "yesterday", "2025-01-31 12:34:56Z", "2025-01-31T12:34:56", "2025-02-30T00:00:00Z",
        "2025-13-01T00:00:00Z", "2025-01-31T25:00:00Z", "2025-01-31T12:34:56+01:00"}) {
    EXPECT_FALSE(is_iso8601_utc(bad)) << bad;
  }
}

}  // namespace
}  // namespace pagecheck::review
