/// `pagecheck review` through the executable: exit statuses 0, 1 and 2 and the Markdown file.
#include <gtest/gtest.h>

#include <fstream>

#include "../../bench/tests/run_pagecheck.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using bench::testing::pagecheck;
using testing::ScratchRepo;

TEST(ReviewCli, ExitStatusesFollowTheEvidence) {
  ScratchRepo repo;
  testing::use_registered_variants(repo, PAGECHECK_EXE);
  repo.record_all({10, 20});
  repo.commit("base");
  const std::string md = repo.root() + "/review.md";
  bench::ProcessResult p = pagecheck({"review", "--repo", repo.root(), "--markdown", md});
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, p.out);

  repo.write("kernels/src/copy/gather.cu", "edited");
  repo.commit("edit without evidence");
  p = pagecheck({"review", "--repo", repo.root(), "--base", "HEAD~1"});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.out.find("**missing**"), std::string::npos) << p.out;

  p = pagecheck({"review", "--repo", repo.root(), "--base", "does-not-exist"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("'does-not-exist'"), std::string::npos) << p.err;

  p = pagecheck({"review", "--repo", repo.root(), "--threshold", "-1"});
  EXPECT_EQ(p.exit_code, 2);
}

TEST(ReviewCli, CorruptRecordIsExitTwoNamingTheFile) {
  ScratchRepo repo;
  repo.record_all({10, 20});
  const std::string path =
      bandwidth_report_path(repo.root(), "paged_attention", repo.hash("paged_attention"));
  std::ofstream(path) << "{ \"schema\": ";
  const bench::ProcessResult p = pagecheck({"review", "--repo", repo.root()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find(path), std::string::npos) << p.err;
}

TEST(ReviewCli, BenchRecordImportsReportsOfTheCurrentSourcesOnly) {
  ScratchRepo repo;
  const std::string h = repo.hash("paged_attention");
  const std::string carried = repo.root() + "/carried.json";
  bench::write_report(bench::testing::make_sweep_report("paged_attention", h, {"a"}), carried);
  bench::ProcessResult p = pagecheck({"bench", "record", carried, "--repo", repo.root()});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(std::filesystem::exists(bandwidth_report_path(repo.root(), "paged_attention", h)));
  EXPECT_TRUE(std::filesystem::exists(repo.root() + "/fixtures/bandwidth/paged_attention-" +
                                      short_hash(h) + ".md"));

  repo.write("kernels/src/attention/attention.cu", "edited");
  const std::string h2 = repo.hash("paged_attention");
  p = pagecheck({"bench", "record", carried, "--repo", repo.root()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find(carried), std::string::npos) << p.err;
  EXPECT_FALSE(std::filesystem::exists(bandwidth_report_path(repo.root(), "paged_attention", h2)));
}

TEST(ReviewCli, RecordingAPluginVariantNeedsAnEntryThatHoldsIt) {
  ScratchRepo repo;  // families.json lists the built-in families only
  const std::vector<std::vector<std::string>> commands = {
      {"verify", "--kernel", "gather_cached_kv", "--variant", "test_plugin_gather"},
      {"bench", "--family", "gather_cached_kv"}};
  for (std::vector<std::string> args : commands) {
    for (const char* extra : {"--plugin", TEST_PLUGIN_GOOD, "--record", "--repo"}) {
      args.push_back(extra);
    }
    args.push_back(repo.root());
    const bench::ProcessResult p = pagecheck(args);
    EXPECT_EQ(p.exit_code, 2) << args[0] << ": " << p.out << p.err;
    EXPECT_NE(p.err.find(repo.root() + "/kernels/families.json"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("gather_cached_kv/test_plugin_gather"), std::string::npos) << p.err;
  }

  // With an entry holding the plugin's variant the recording run is accepted (without a GPU,
  // verify checks the CPU reference only and records nothing).
  repo.write("kernels/families.json", R"({"schema": "pagecheck.families/1", "families": [
    {"name": "gather_cached_kv", "sources": ["kernels/src/copy/*.cu", "kernels/include/*.h"]},
    {"name": "test_plugin", "family": "gather_cached_kv", "variants": ["test_plugin_gather"],
     "sources": ["kernels/include/*.h"]}]})");
  const bench::ProcessResult p =
      pagecheck({"verify", "--kernel", "gather_cached_kv", "--variant", "test_plugin_gather",
                 "--plugin", TEST_PLUGIN_GOOD, "--record", "--repo", repo.root()});
  EXPECT_NE(p.exit_code, 2) << p.out << p.err;
  EXPECT_EQ(p.err.find("families.json"), std::string::npos) << p.err;
}

TEST(ReviewCli, MissingFamilyListIsExitTwo) {
  ScratchRepo repo;
  std::filesystem::remove(repo.root() + "/kernels/families.json");
  const bench::ProcessResult p = pagecheck({"review", "--repo", repo.root()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("kernels/families.json"), std::string::npos) << p.err;
}

}  // namespace
}  // namespace pagecheck::review
