/// `pagecheck bench` and `pagecheck bench compare` through the executable: exit statuses 0/1/2
/// and messages naming the bad file or argument. The GPU case skips without a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pagecheck/bench/process.h"
#include "pagecheck/bench/report.h"
#include "pagecheck/bench/runner.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

namespace fs = std::filesystem;
using testing::make_report;

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
  static ProcessResult pagecheck(std::vector<std::string> args) {
    args.insert(args.begin(), PAGECHECK_EXE);
    return run_process(args);
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
