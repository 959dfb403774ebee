/// Consistency checks of reports on read and write: quartiles in order, positive times, GB/s
/// matching the declared bytes, ceiling shares and flags matching GB/s, identity and method
/// fields a run could write, labels matching the shape, and reports that measured nothing.
#include <gtest/gtest.h>

#include <functional>

#include "pagecheck/bench/report.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

using testing::make_report;

nlohmann::json good() {
  return to_json(make_report("gather_cached_kv", std::string(64, 'a'), {"naive", "vectorized"},
                             {{{10, 0.01}, {20, 0.01}}, {{8, 0.02}, {15, 0.01}}}));
}

/// Reading `j` fails with a message containing every one of `parts`.
void expect_refused(const nlohmann::json& j, const std::vector<std::string>& parts) {
  try {
    report_from_json(j, "r.json");
    ADD_FAILURE() << "accepted; expected an error mentioning " << parts.front();
  } catch (const ReportError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("r.json: ", 0), 0u) << what;
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << p << " in " << what;
  }
}

TEST(ReportValidate, SyntheticReportsPass) {
  EXPECT_NO_THROW(report_from_json(good(), "r.json"));
  EXPECT_NO_THROW(require_measurements(report_from_json(good(), "r.json"), "r.json"));
}

TEST(ReportValidate, MedianBelowQ1IsRefusedNamingRowAndField) {
  auto j = good();
  j["results"][1]["variants"][1]["time_us"]["median"] = 0.001;  // "14848x faster"
  j["results"][1]["variants"][1]["gbps"] = 1e6;
  expect_refused(j, {"results[1] 't128'", "variants[1] 'vectorized'", "time_us", "q1", "median"});
}

TEST(ReportValidate, LaunchFloorQuartilesMustBeInOrder) {
  auto j = good();
  j["launch_floor"] = {{"method", "an empty kernel"},
                       {"time_us",
                        {{"samples", 40},
                         {"median", 4.0},
                         {"q1", 3.9},
                         {"q3", 4.1},
                         {"min", 3.8},
                         {"max", 4.2},
                         {"mean", 4.0},
                         {"noise", 0.05}}}};
  EXPECT_NO_THROW(report_from_json(j, "r.json"));
  j["launch_floor"]["time_us"]["median"] = 5.0;  // above q3
  expect_refused(j, {"launch_floor.time_us", "median", "q3"});
}

TEST(ReportValidate, QuartilesMinMaxMeanAndNoiseMustAgree) {
  auto j = good();
  j["results"][0]["variants"][0]["time_us"]["q3"] = 9.0;  // below the median 10
  expect_refused(j, {"results[0] 't64'", "median", "q3"});
  j = good();
  j["results"][0]["variants"][0]["time_us"]["min"] = 9.99;  // above q1 9.95
  expect_refused(j, {"min", "q1"});
  j = good();
  j["results"][0]["variants"][0]["time_us"]["max"] = 10.0;  // below q3 10.05
  expect_refused(j, {"q3", "max"});
  j = good();
  j["results"][0]["variants"][0]["time_us"]["mean"] = 100.0;
  expect_refused(j, {"field 'mean'"});
  j = good();
  j["results"][0]["variants"][0]["time_us"]["noise"] = 0.0001;
  expect_refused(j, {"field 'noise'", "(q3 - q1) / median"});
  j = good();
  j["results"][0]["variants"][0]["time_us"]["samples"] = 0;
  expect_refused(j, {"variants[0] 'naive'", "samples"});
}

TEST(ReportValidate, CeilingShareAndItsFlagMustFollowFromGbps) {
  auto j = good();
  j["results"][0]["variants"][0]["ceiling_share"] = -7;
  expect_refused(
      j, {"results[0] 't64'", "variants[0] 'naive'", "field 'ceiling_share' -7", "copy ceiling"});
  j = good();
  j["results"][1]["variants"][0]["above_ceiling"] = true;  // at a few % of the ceiling
  expect_refused(j, {"results[1] 't128'", "field 'above_ceiling' is true", "not above 1.05"});
}

TEST(ReportValidate, IdentityAndMethodFieldsMustBeWhatARunWrites) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> edits = {
      {[](nlohmann::json& j) { j["date"] = "yesterday"; }, "field 'date' 'yesterday'"},
      {[](nlohmann::json& j) { j["date"] = "2025-02-30T00:00:00Z"; }, "field 'date'"},
      {[](nlohmann::json& j) { j["source_hash"] = "abc"; }, "field 'source_hash' 'abc'"},
      {[](nlohmann::json& j) { j["source_hash"] = std::string(64, 'A'); }, "field 'source_hash'"},
      {[](nlohmann::json& j) { j["method"]["max_noise"] = -1; }, "method: field 'max_noise'"},
      {[](nlohmann::json& j) { j["method"]["timeout_s"] = 0; }, "method: field 'timeout_s'"},
      {[](nlohmann::json& j) { j["method"]["min_samples"] = 0; }, "method: field 'min_samples'"},
      {[](nlohmann::json& j) { j["method"]["max_samples"] = 1; }, "method: field 'max_samples'"},
      {[](nlohmann::json& j) { j["method"]["warmup"] = -1; }, "warmup"},
  };
  for (const auto& [edit, words] : edits) {
    auto j = good();
    edit(j);
    expect_refused(j, {words});
  }
}

TEST(ReportValidate, NonPositiveTimesAreRefused) {
  auto j = good();
  auto& t = j["results"][0]["variants"][0]["time_us"];
  for (const char* k : {"median", "q1", "q3", "min", "max", "mean"}) t[k] = 0.0;
  t["noise"] = 0.0;
  expect_refused(j, {"results[0] 't64'", "'median' must be a positive time"});
}

TEST(ReportValidate, GbpsMustMatchBytesAndMedian) {
  auto j = good();
  const double gbps = j["results"][0]["variants"][0]["gbps"].get<double>();
  j["results"][0]["variants"][0]["gbps"] = gbps * 1.01;
  expect_refused(j, {"results[0] 't64'", "variants[0] 'naive'", "field 'gbps'", "bytes"});
  // Rounded to two decimals is fine.
  j["results"][0]["variants"][0]["gbps"] = std::round(gbps * 100) / 100;
  EXPECT_NO_THROW(report_from_json(j, "r.json"));
  j = good();
  j["results"][0]["bytes_read"] = j["results"][0]["bytes_read"].get<int64_t>() * 2;
  expect_refused(j, {"results[0] 't64'", "field 'gbps'"});
  j = good();
  j["ceilings"]["copy"]["gbps"] = 1.0;
  expect_refused(j, {"ceilings.copy", "field 'gbps'"});
}

TEST(ReportValidate, LabelAndGroupMustMatchTheShape) {
  auto j = good();
  j["results"][0]["shape"]["label"] = "t999";
  expect_refused(j, {"results[0] 't999'", "field 'label'", "'t64'"});
  auto a = to_json(make_report("paged_attention", std::string(64, 'a'), {"v"}, {{{10, 0.01}}}));
  a["results"][0]["shape"]["num_kv_heads"] = 8;  // 40 / 8 heads: gqa, labelled mha
  expect_refused(a, {"field 'group'", "'gqa'"});
}

TEST(ReportValidate, UnmeasuredResultsAreNotTimeChecked) {
  auto j = good();
  auto& v = j["results"][0]["variants"][0];
  v["status"] = "unsupported";
  for (const char* k : {"median", "q1", "q3", "min", "max", "mean", "noise"}) v["time_us"][k] = 0.0;
  v["time_us"]["samples"] = 0;
  v["gbps"] = 0.0;
  EXPECT_NO_THROW(report_from_json(j, "r.json"));
}

TEST(ReportValidate, SecondResultOfOneVariantIsRefused) {
  auto j = good();
  j["results"][0]["variants"][1] = j["results"][0]["variants"][0];
  expect_refused(j, {"results[0] 't64'", "second result"});
}

TEST(RequireMeasurements, RefusesReportsThatMeasuredNothing) {
  auto expect_empty = [](const BenchReport& r, const std::string& part) {
    try {
      require_measurements(r, "r.json");
      ADD_FAILURE() << "accepted; expected " << part;
    } catch (const ReportError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("r.json: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  BenchReport r = report_from_json(good(), "r.json");
  BenchReport none = r;
  none.shapes.clear();
  expect_empty(none, "'results' holds no shape");
  none = r;
  none.variants.clear();
  for (auto& s : none.shapes) s.variants.clear();
  expect_empty(none, "'variants' names no variant");
  BenchReport skipped = r;
  for (auto& s : skipped.shapes) s.variants[1].status = RunStatus::kUnsupported;
  expect_empty(skipped, "variant 'vectorized' was measured on none of the 2 shapes");
  BenchReport absent = r;
  for (auto& s : absent.shapes) s.variants.pop_back();
  expect_empty(absent, "variant 'vectorized'");
  BenchReport some = r;
  some.shapes[0].variants[1].status = RunStatus::kFailed;  // one failure: still evidence
  EXPECT_NO_THROW(require_measurements(some, "r.json"));
}

}  // namespace
}  // namespace pagecheck::bench
