/// `pagecheck review` through the executable (issue 14): the registered built-in variants come
/// from the variant registry, bad kernels/families.json and /1 records are exit 2, untrustworthy
/// records exit 1, --json writes the result, --help lists the exit statuses.
#include <gtest/gtest.h>

#include "../../bench/tests/run_pagecheck.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using bench::testing::pagecheck;
using testing::ScratchRepo;

/// A scratch repository whose evidence holds the registered built-in variants, all recorded.
class RecordedRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    registered_ = testing::registered_variants(PAGECHECK_EXE);
    if (registered_.empty()) GTEST_SKIP() << "this pagecheck has no built-in kernels";
    testing::use_registered_variants(repo_, PAGECHECK_EXE);
    repo_.record_all({10, 20});
  }
  /// Rewrites the paged_attention record through `edit`; returns its path.
  template <class Edit>
  std::string edit_record(Edit edit) {
    const std::string path =
        verification_record_path(repo_.root(), "paged_attention", repo_.hash("paged_attention"));
    VerificationRecord r = read_verification_record(path);
    edit(r);
    write_verification_record(repo_.root(), r, false);
    return path;
  }
  std::map<std::string, std::vector<std::string>> registered_;
  ScratchRepo repo_;
};

TEST_F(RecordedRepo, RecordCutToTheFirstVariantFails) {
  bench::ProcessResult p = pagecheck({"review", "--repo", repo_.root()});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const auto& names = registered_.at("paged_attention");
  ASSERT_GE(names.size(), 2u);
  edit_record([](VerificationRecord& r) { r.variants.resize(1); });
  p = pagecheck({"review", "--repo", repo_.root()});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.out.find("has no result for " + names[1] + ", a registered built-in paged_attention"),
            std::string::npos)
      << p.out;
}

TEST_F(RecordedRepo, RenamedVariantFails) {
  const std::string renamed = registered_.at("paged_attention")[0] + "_renamed";
  edit_record([&](VerificationRecord& r) { r.variants[0].variant = renamed; });
  const bench::ProcessResult p = pagecheck({"review", "--repo", repo_.root()});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.out.find("has a result for " + renamed + ", which is neither"), std::string::npos)
      << p.out;
}

TEST_F(RecordedRepo, QuickRecordFailsNamingRecordAndVariant) {
  const std::string first = registered_.at("paged_attention")[0];
  const std::string path = edit_record(
      [&](VerificationRecord& r) { r.variants[0] = testing::entry(first, 1, 1, 1, 0, 0); });
  const bench::ProcessResult p = pagecheck({"review", "--repo", repo_.root()});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.out.find(path.substr(repo_.root().size() + 1) + ": " + first + " ran 1 cases"),
            std::string::npos)
      << p.out;
}

TEST_F(RecordedRepo, VersionOneRecordIsExitTwo) {
  const std::string path = repo_.edit_record_json(
      "gather_cached_kv", [](nlohmann::json& j) { j["schema"] = "pagecheck.verification/1"; });
  const bench::ProcessResult p = pagecheck({"review", "--repo", repo_.root()});
  EXPECT_EQ(p.exit_code, 2) << p.out << p.err;
  EXPECT_NE(p.err.find(path + ": a pagecheck.verification/1 record"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("pagecheck verify --record"), std::string::npos) << p.err;
}

TEST_F(RecordedRepo, JsonResultIsWritten) {
  const std::string out = repo_.root() + "/review.json";
  bench::ProcessResult p = pagecheck({"review", "--repo", repo_.root(), "--json", out});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const nlohmann::json j = testing::read_json(out);
  EXPECT_EQ(j["schema"], "pagecheck.review/1");
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["exit_code"], 0);
  ASSERT_EQ(j["units"].size(), 3u);
  const nlohmann::json& unit = j["units"][0];
  EXPECT_EQ(unit["unit"], "gather_cached_kv");
  EXPECT_EQ(unit["verification"]["record"]["schema"], "pagecheck.verification/2");
  EXPECT_EQ(unit["bandwidth"]["present"], true);

  edit_record([](VerificationRecord& r) { r.device.clear(); });
  p = pagecheck({"review", "--repo", repo_.root(), "--json", out});
  EXPECT_EQ(p.exit_code, 1);
  const nlohmann::json k = testing::read_json(out);
  EXPECT_EQ(k["passed"], false);
  EXPECT_EQ(k["exit_code"], 1);
  EXPECT_NE(k["units"][1]["problems"][0].get<std::string>().find("empty 'device'"),
            std::string::npos)
      << k["units"][1]["problems"];
}

TEST(ReviewCliRules, BadJsonPathIsExitTwoBeforeAnyWork) {
  ScratchRepo repo;
  std::filesystem::remove(repo.root() + "/kernels/families.json");  // work would fail too
  for (const std::string& bad : {repo.root(), repo.root() + "/no/such/dir/review.json"}) {
    const bench::ProcessResult p = pagecheck({"review", "--repo", repo.root(), "--json", bad});
    EXPECT_EQ(p.exit_code, 2) << bad;
    EXPECT_NE(p.err.find("--json: '" + bad + "'"), std::string::npos) << p.err;
  }
}

TEST(ReviewCliRules, BadFamilyListIsExitTwoNamingTheProblem) {
  const std::string entries =
      R"({"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu"]},
         {"name": "paged_attention", "sources": ["kernels/src/attention/*"]})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"schema": "pagecheck.families/1", "families": []})", "'families' is empty"},
      {R"({"families": [)" + entries + "]}", "missing 'schema'"},
      {R"({"schema": "x", "families": [)" + entries + "]}", "unknown schema \"x\""},
      {R"({"schema": "pagecheck.families/1", "families": [)" + entries + "]}",
       "no entry holds the built-in reshape_and_cache variants"},
      {R"({"schema": "pagecheck.families/1", "families": [{"name": "gather_cached_kv",
         "sources": ["../*"]}]})",
       "source glob '../*' reaches outside the repository"},
  };
  for (const auto& [text, problem] : cases) {
    ScratchRepo repo;
    repo.write("kernels/families.json", text);
    const bench::ProcessResult p = pagecheck({"review", "--repo", repo.root()});
    EXPECT_EQ(p.exit_code, 2) << problem << ": " << p.out << p.err;
    EXPECT_NE(p.err.find(repo.root() + "/kernels/families.json"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find(problem), std::string::npos) << p.err;
  }
}

TEST(ReviewCliRules, HelpListsTheExitStatuses) {
  const bench::ProcessResult p = pagecheck({"review", "--help"});
  EXPECT_EQ(p.exit_code, 0);
  const auto at = p.out.find("Exit status:");
  ASSERT_NE(at, std::string::npos) << p.out;
  for (const char* code : {"\n  0  ", "\n  1  ", "\n  2  ", "\n  3  "}) {
    EXPECT_NE(p.out.find(code, at), std::string::npos) << code << p.out;
  }
  EXPECT_NE(p.out.find("registered"), std::string::npos) << p.out;  // review's own footer
}

}  // namespace
}  // namespace pagecheck::review
