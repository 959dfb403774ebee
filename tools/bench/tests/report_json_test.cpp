/// JSON round trip of reports and clear errors for corrupt files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pagecheck/bench/report.h"
#include "pagecheck/verify/atomic_file.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

namespace fs = std::filesystem;
using testing::make_report;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() /
          ("pagecheck_bench_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

BenchReport sample() {
  auto r = make_report("paged_attention", std::string(64, 'd'), {"v1_baseline", "v2_split"},
                       {{{0.5, 0.013}, {140.25, 0.004}}, {{11.0, 0.02}, {150.0, 0.01}}});
  r.shapes[1].variants[1].status = RunStatus::kUnsupported;
  r.shapes[1].variants[1].message = "needs context > 512";
  EXPECT_TRUE(r.shapes[0].variants[0].above_ceiling);  // 0.5 us is above the read ceiling
  r.shapes[0].variants[1].converged = false;
  r.git_dirty = true;
  r.method.seed = 0xFFFFFFFFFFFFFFFFull;  // survives as an unsigned 64-bit number
  return r;
}

TEST(ReportJson, RoundTripPreservesEveryField) {
  const BenchReport r = sample();
  const nlohmann::json j = to_json(r);
  const BenchReport back = report_from_json(j, "memory");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.shapes[1].variants[1].status, RunStatus::kUnsupported);
  EXPECT_EQ(back.shapes[1].shape.label, "mha_b2_c512");
  EXPECT_EQ(back.method.seed, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_DOUBLE_EQ(back.shapes[0].variants[0].time_us.median, 0.5);
  EXPECT_TRUE(back.shapes[0].variants[0].above_ceiling);
}

TEST(ReportJson, LaunchFloorRoundTripsAndIsOmittedWhenNotMeasured) {
  BenchReport r = sample();
  EXPECT_FALSE(to_json(r).contains("launch_floor"));  // a report from before the floor
  EXPECT_FALSE(report_from_json(to_json(r), "memory").launch_floor.measured());
  r.launch_floor.method = "an empty kernel";
  r.launch_floor.time_us = testing::summary_of({4.25, 0.01});
  const nlohmann::json j = to_json(r);
  ASSERT_TRUE(j.contains("launch_floor"));
  const BenchReport back = report_from_json(j, "memory");
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.launch_floor.method, "an empty kernel");
  EXPECT_DOUBLE_EQ(back.launch_floor.time_us.median, 4.25);
}

TEST(ReportJson, LaunchFloorWithoutSamplesOrTimesIsNamed) {
  BenchReport r = sample();
  r.launch_floor.method = "an empty kernel";
  r.launch_floor.time_us = testing::summary_of({4.25, 0.01});
  nlohmann::json j = to_json(r);
  j["launch_floor"]["time_us"]["samples"] = 0;
  EXPECT_THROW(
      {
        try {
          report_from_json(j, "f.json");
        } catch (const ReportError& e) {
          EXPECT_NE(std::string(e.what()).find("f.json: launch_floor.time_us"), std::string::npos)
              << e.what();
          throw;
        }
      },
      ReportError);
  j = to_json(r);
  j["launch_floor"].erase("time_us");
  EXPECT_THROW(report_from_json(j, "f.json"), ReportError);
}

TEST(ReportJson, LayoutKvDtypeWindowAndQueryLengthRoundTripAndAreOmittedWhenDefault) {
  BenchReport r = sample();
  BenchShape& s = r.shapes[1].shape;
  s = with_variation(s, ref::CacheKind::kHND, DType::kFloat8E5M2, 128, 2);
  const nlohmann::json j = to_json(r);
  const nlohmann::json& shape = j.at("results").at(1).at("shape");
  EXPECT_EQ(shape.at("cache_kind"), "hnd");
  EXPECT_EQ(shape.at("kv_dtype"), "fp8_e5m2");
  EXPECT_EQ(shape.at("window"), 128);
  EXPECT_EQ(shape.at("query_len"), 2);
  const nlohmann::json& plain = j.at("results").at(0).at("shape");
  for (const char* key : {"cache_kind", "kv_dtype", "window", "query_len"}) {
    EXPECT_FALSE(plain.contains(key)) << key;
  }
  const BenchReport back = report_from_json(j, "memory");
  EXPECT_EQ(to_json(back), j);
  const BenchShape& b = back.shapes[1].shape;
  EXPECT_EQ(b.label, "mha_b2_c512_hnd_e5m2_w128_q2");
  EXPECT_EQ(b.cache_kind, ref::CacheKind::kHND);
  EXPECT_EQ(b.cache_dtype(), DType::kFloat8E5M2);
  EXPECT_EQ(b.window, 128);
  EXPECT_EQ(b.query_len, 2);
}

TEST(ReportJson, FileRoundTripAndNoTemporaryLeftBehind) {
  const std::string path = temp_path("report.json");
  write_report(sample(), path);
  EXPECT_EQ(to_json(read_report(path)), to_json(sample()));
  const std::string temp = verify::temp_path_beside(path);
  EXPECT_EQ(fs::path(temp).parent_path(), fs::path(path).parent_path());
  EXPECT_EQ(fs::path(temp).filename().string().rfind("." + fs::path(path).filename().string(), 0),
            0u)
      << temp;
  EXPECT_FALSE(fs::exists(temp));
  // A file that happens to have the temporary's name is neither used nor deleted.
  std::ofstream(temp) << "the user's file";
  EXPECT_THROW(write_report(sample(), path), std::runtime_error);
  std::ifstream in(temp);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "the user's file");
  fs::remove(temp);
  fs::remove(path);
}

TEST(ReportJson, TruncatedFileNamesThePath) {
  const std::string path = temp_path("truncated.json");
  const std::string text = to_json(sample()).dump(2);
  std::ofstream(path) << text.substr(0, text.size() / 2);
  try {
    read_report(path);
    FAIL() << "truncated report accepted";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  fs::remove(path);
  EXPECT_THROW(read_report(path), ReportError);  // missing file
}

TEST(ReportJson, ADirectoryIsAReportErrorNamingIt) {
  const std::string dir = temp_path("folder");
  fs::create_directories(dir);
  try {
    read_report(dir);
    FAIL() << "a directory read as a report";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + ": is a directory"), std::string::npos) << e.what();
  }
  fs::remove(dir);
}

TEST(ReportJson, MissingOrMistypedFieldsAreNamed) {
  auto expect_error = [](nlohmann::json j, const std::string& part) {
    try {
      report_from_json(j, "r.json");
      ADD_FAILURE() << "accepted; expected an error mentioning " << part;
    } catch (const ReportError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("r.json", 0), 0u) << e.what();
    }
  };
  const nlohmann::json good = to_json(sample());
  auto j = good;
  j.erase("source_hash");
  expect_error(j, "missing field 'source_hash'");
  j = good;
  j["results"][0]["variants"][0]["time_us"]["median"] = "fast";
  expect_error(j, "results[0].variants[0].time_us: field 'median' must be a number");
  j = good;
  j["results"][0]["variants"][0]["status"] = "great";
  expect_error(j, "unknown status 'great'");
  j = good;
  j["schema"] = "other/2";
  expect_error(j, "schema 'other/2'");
  j = good;
  j["results"][0]["variants"][0]["variant"] = "unlisted";
  expect_error(j, "variant 'unlisted' not listed");
  j = good;
  j["results"][1]["shape"]["family"] = "gather_cached_kv";
  j["results"][1]["shape"]["num_tokens"] = 64;
  expect_error(j, "shape of another family");
  j = good;
  j["results"][0]["shape"]["num_blocks"] = 1;
  expect_error(j, "pool of 1 blocks");
}

}  // namespace
}  // namespace pagecheck::bench
