/// `pagecheck bench` and `pagecheck bench compare` through the executable: exit statuses 0/1/2
/// and messages naming the bad file or argument. The GPU case skips without a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pagecheck/bench/report.h"
#include "pagecheck/bench/runner.h"
#include "run_pagecheck.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

namespace fs = std::filesystem;
using testing::make_report;
using testing::pagecheck;

class BenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pagecheck_bench_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const BenchReport& r) {
    const std::string path = (dir_ / name).string();
    write_report(r, path);
    return path;
  }

  fs::path dir_;
};

TEST_F(BenchCli, CompareSameIsZeroRegressionIsOneThresholdRaisesTheBar) {
  const auto a = write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"},
                                             {{{10, 0.01}, {20, 0.01}}}));
  const auto b = write("b.json", make_report("gather_cached_kv", std::string(64, 'b'), {"v"},
                                             {{{10, 0.01}, {25, 0.01}}}));
  ProcessResult p = pagecheck({"bench", "compare", a, a});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("| same |"), std::string::npos) << p.out;
  p = pagecheck({"bench", "compare", a, b});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(p.out.find("regression"), std::string::npos) << p.out;
  p = pagecheck({"bench", "compare", a, b, "--threshold", "0.5"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  const std::string md = (dir_ / "cmp.md").string();
  p = pagecheck({"bench", "compare", b, a, "--markdown", md});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  std::ifstream in(md);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| faster |"), std::string::npos) << text;
}

TEST_F(BenchCli, CompareTwoVariantsOfOneReport) {
  const auto r =
      write("r.json", make_report("paged_attention", std::string(64, 'a'),
                                  {"v1_baseline", "v1_shared_q"}, {{{100, 0.01}}, {{80, 0.01}}}));
  ProcessResult p = pagecheck({"bench", "compare", r, "--variants", "v1_baseline,v1_shared_q"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("1.250x"), std::string::npos) << p.out;
  p = pagecheck({"bench", "compare", r, "--variants", "v1_baseline,nope"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("'nope'"), std::string::npos) << p.err;
  p = pagecheck({"bench", "compare", r});
  EXPECT_EQ(p.exit_code, 2);
}

TEST_F(BenchCli, CorruptReportIsExitTwoNamingTheFile) {
  const auto a =
      write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}}}));
  const std::string bad = (dir_ / "corrupt.json").string();
  std::ofstream(bad) << "{\"schema\": \"pagecheck.bandwidth/1\", \"family\": ";
  const ProcessResult p = pagecheck({"bench", "compare", a, bad});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find(bad), std::string::npos) << p.err;
}

TEST_F(BenchCli, CompareADirectoryOrAMissingFileIsExitTwoNamingThePath) {
  const auto a =
      write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}}}));
  for (const std::string& bad : {dir_.string(), (dir_ / "missing.json").string()}) {
    ProcessResult p = pagecheck({"bench", "compare", a, bad});
    EXPECT_EQ(p.exit_code, 2) << bad << ": " << p.err;
    EXPECT_NE(p.err.find(bad), std::string::npos) << p.err;
    EXPECT_EQ(p.err.find("internal error"), std::string::npos) << p.err;
    p = pagecheck({"bench", "compare", bad, "--variants", "v,v"});
    EXPECT_EQ(p.exit_code, 2) << bad << ": " << p.err;
  }
}

TEST_F(BenchCli, CompareRefusesAnInconsistentReportNamingFileRowAndField) {
  const auto a = write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"},
                                             {{{10, 0.01}, {20, 0.01}}}));
  nlohmann::json j = to_json(read_report(a));
  j["results"][1]["variants"][0]["time_us"]["median"] = 0.001;  // below q1, GB/s to match
  j["results"][1]["variants"][0]["gbps"] =
      bandwidth_gbps(j["results"][1]["bytes_read"].get<int64_t>() +
                         j["results"][1]["bytes_written"].get<int64_t>(),
                     0.001);
  const std::string bad = (dir_ / "bad.json").string();
  std::ofstream(bad) << j.dump(2);
  ProcessResult p = pagecheck({"bench", "compare", a, bad});
  EXPECT_EQ(p.exit_code, 2) << p.out;
  for (const std::string& part :
       {bad, std::string("results[1] 't128'"), std::string("q1"), std::string("median")}) {
    EXPECT_NE(p.err.find(part), std::string::npos) << part << " in " << p.err;
  }
  EXPECT_EQ(p.out.find("faster"), std::string::npos) << p.out;
  j = to_json(read_report(a));
  j["results"][0]["variants"][0]["gbps"] = 1e5;
  std::ofstream(bad) << j.dump(2);
  p = pagecheck({"bench", "compare", a, bad});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("field 'gbps'"), std::string::npos) << p.err;
}

TEST_F(BenchCli, CompareRoundsJoinsOldNewPairsOfOneRun) {
  const auto a = write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"},
                                             {{{10, 0.01}, {20, 0.01}}}));
  const auto b = write("b.json", make_report("gather_cached_kv", std::string(64, 'b'), {"v"},
                                             {{{10, 0.01}, {25, 0.01}}}));
  const auto b2 = write("b2.json", make_report("gather_cached_kv", std::string(64, 'b'), {"v"},
                                               {{{10, 0.01}, {19, 0.01}}}));
  ProcessResult p = pagecheck({"bench", "compare", "--rounds", a, b, a, b});
  EXPECT_EQ(p.exit_code, 1) << p.err;  // slower beyond 5% in both rounds
  EXPECT_NE(p.out.find("2 alternating rounds"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("| t128 | v | 20.0 / 20.0 | 25.0 / 25.0 |"), std::string::npos) << p.out;
  p = pagecheck({"bench", "compare", "--rounds", a, b, a, b2});
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;  // slower in one round only: not a verdict
  EXPECT_NE(p.out.find("| same |"), std::string::npos) << p.out;
  for (const auto& args :
       {std::vector<std::string>{"bench", "compare", "--rounds", a, b, a},
        std::vector<std::string>{"bench", "compare", "--rounds", a},
        std::vector<std::string>{"bench", "compare", "--rounds", a, b, "--variants", "v,v"},
        std::vector<std::string>{"bench", "compare", a, b, a, b}}) {
    p = pagecheck(args);
    EXPECT_EQ(p.exit_code, 2) << p.out << p.err;
  }
}

TEST_F(BenchCli, CompareOfAReportThatMeasuredNothingIsExitTwo) {
  const auto a = write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"},
                                             {{{10, 0.01}, {20, 0.01}}}));
  nlohmann::json j = to_json(read_report(a));
  j["results"] = nlohmann::json::array();
  const std::string empty = (dir_ / "empty.json").string();
  std::ofstream(empty) << j.dump(2);
  j = to_json(read_report(a));
  for (auto& row : j["results"]) row["variants"][0]["status"] = "failed";
  const std::string failed = (dir_ / "failed.json").string();
  std::ofstream(failed) << j.dump(2);
  for (const std::string& nothing : {empty, failed}) {
    for (const auto& args : {std::vector<std::string>{"bench", "compare", a, nothing},
                             std::vector<std::string>{"bench", "compare", nothing, nothing}}) {
      const ProcessResult p = pagecheck(args);
      EXPECT_EQ(p.exit_code, 2) << p.out << p.err;
      EXPECT_NE(p.err.find(nothing), std::string::npos) << p.err;
      EXPECT_EQ(p.out.find("no regression"), std::string::npos) << p.out;
    }
  }
}

TEST_F(BenchCli, CompareOtherDtypeUnderTheSameLabelIsExitTwo) {
  const auto r = make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}}});
  auto other = r;
  other.shapes[0].shape.dtype = DType::kBFloat16;
  const auto a = write("a.json", r);
  const auto b = write("b.json", other);
  const ProcessResult p = pagecheck({"bench", "compare", a, b});
  EXPECT_EQ(p.exit_code, 2) << p.out;
  EXPECT_NE(p.err.find(a + " vs " + b), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("dtype float16 (old) vs bfloat16 (new)"), std::string::npos) << p.err;
}

TEST_F(BenchCli, CompareMissingRowsFailUnlessAllowed) {
  const auto full =
      make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}, {20, 0.01}}});
  auto cut = full;
  cut.shapes.pop_back();
  const auto a = write("a.json", full);
  const auto b = write("b.json", cut);
  ProcessResult p = pagecheck({"bench", "compare", a, b});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_NE(p.out.find("| t128 | v |"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("**missing**"), std::string::npos) << p.out;
  EXPECT_NE(p.err.find("--allow-missing"), std::string::npos) << p.err;
  p = pagecheck({"bench", "compare", b, a});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  p = pagecheck({"bench", "compare", a, b, "--allow-missing"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
}

TEST_F(BenchCli, OutputPathsAreCheckedBeforeAnyWork) {
  const std::string folder = dir_.string();
  for (const char* option : {"--json", "--markdown", "--plot"}) {
    const ProcessResult p =
        pagecheck({"bench", "--family", "gather_cached_kv", "--quick", option, folder});
    EXPECT_EQ(p.exit_code, 2) << option << ": " << p.err;
    EXPECT_NE(p.err.find(option), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("'" + folder + "'"), std::string::npos) << p.err;
  }
  ProcessResult p = pagecheck({"bench", "--family", "gather_cached_kv", "--quick", "--json",
                               (dir_ / "no" / "such" / "r.json").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  const auto a =
      write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}}}));
  // Below a file: no folder to write into (fails for root too).
  const std::string below_file = a + "/r.md";
  p = pagecheck({"bench", "--family", "gather_cached_kv", "--quick", "--markdown", below_file});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("'" + below_file + "'"), std::string::npos) << p.err;
  p = pagecheck({"bench", "compare", a, a, "--markdown", folder});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("--markdown"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty()) << p.out;  // refused before comparing
}

TEST_F(BenchCli, UnwritableOutputFoldersAreExitTwo) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  const auto a =
      write("a.json", make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}}}));
  const fs::path locked = dir_ / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  ProcessResult p = pagecheck({"bench", "compare", a, a, "--markdown", (locked / "c.md").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("not writable"), std::string::npos) << p.err;
  p = pagecheck({"bench", "--family", "all", "--record-dir", locked.string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  fs::permissions(locked, fs::perms::owner_all);
}

TEST_F(BenchCli, HelpListsTheExitStatuses) {
  // Each command's own footer (a subcommand would otherwise show its parent's).
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"bench", "--help"}, "1 a variant failed its launch or output check"},
      {{"bench", "compare", "--help"}, "or a row is in one report only (without --allow-missing)"},
      {{"bench", "record", "--help"}, "already recorded without --force"}};
  for (const auto& [args, own] : cases) {
    const ProcessResult p = pagecheck(args);
    EXPECT_EQ(p.exit_code, 0) << args[1];
    for (const std::string& part :
         {std::string("Exit status: 0 "), std::string("; 2 bad usage"), std::string("; 3 "), own}) {
      EXPECT_NE(p.out.find(part), std::string::npos) << args[1] << ": " << part << "\n" << p.out;
    }
  }
}

TEST_F(BenchCli, BadUsageIsExitTwo) {
  ProcessResult p = pagecheck({"bench", "--family", "flash_attention"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("'flash_attention'"), std::string::npos) << p.err;
  p = pagecheck({"bench", "--family", "gather_cached_kv", "--shapes", "t63"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("'t63'"), std::string::npos) << p.err;
  p = pagecheck({"bench", "--family", "gather_cached_kv", "--quick", "--record"});
  EXPECT_EQ(p.exit_code, 2);
  p = pagecheck({"bench"});
  EXPECT_EQ(p.exit_code, 2);
  for (const char* seed : {"-1", "18446744073709551616"}) {  // a sign; 2^64 overflows
    p = pagecheck({"bench", "--family", "gather_cached_kv", "--quick", "--seed", seed});
    EXPECT_EQ(p.exit_code, 2) << seed << ": " << p.out << p.err;
    EXPECT_NE(p.err.find("--seed"), std::string::npos) << p.err;
  }
}

TEST_F(BenchCli, ListShapes) {
  const ProcessResult p = pagecheck({"bench", "--family", "paged_attention", "--list-shapes"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("mha_b256_c4096"), std::string::npos);
  EXPECT_NE(p.out.find("gqa_b1_c128"), std::string::npos);
}

TEST_F(BenchCli, AllFamiliesListAndRefuseSingleFileOutputs) {
  ProcessResult p = pagecheck({"bench", "--family", "all", "--list-shapes"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("t65536"), std::string::npos);
  EXPECT_NE(p.out.find("mha_b1_c128"), std::string::npos);
  p = pagecheck({"bench", "--family", "gather_cached_kv,reshape_and_cache", "--json",
                 (dir_ / "x.json").string()});
  EXPECT_EQ(p.exit_code, 2);
  p = pagecheck({"bench", "--family", "all", "--record-dir", (dir_ / "missing").string()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--record-dir"), std::string::npos) << p.err;
}

TEST_F(BenchCli, QuickRunOnTheGpu) {
  std::string why;
  if (!bench_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const std::string json = (dir_ / "quick.json").string();
  const std::string md = (dir_ / "quick.md").string();
  const ProcessResult p =
      pagecheck({"bench", "--family", "gather_cached_kv", "--quick", "--min-samples", "5",
                 "--max-samples", "30", "--json", json, "--markdown", md});
  if (p.exit_code == 3 && p.err.find("no gather_cached_kv variant") != std::string::npos) {
    GTEST_SKIP() << "no built-in kernels in this build";
  }
  EXPECT_EQ(p.exit_code, 0) << p.err;
  const BenchReport r = read_report(json);
  EXPECT_EQ(r.sweep, "quick");
  EXPECT_EQ(r.source_hash.size(), 64u);
  EXPECT_TRUE(fs::exists(md));
}

}  // namespace
}  // namespace pagecheck::bench
