/// Recording bandwidth reports as evidence: only the built-in sweep of the current sources.
#include <gtest/gtest.h>

#include <fstream>

#include "pagecheck/review/record.h"
#include "scratch_repo.h"

namespace pagecheck::review {
namespace {

using testing::ScratchRepo;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Record, WritesReportAndMarkdownLinkingThePlotUnderTheHashName) {
  ScratchRepo repo;
  const std::string h = repo.hash("gather_cached_kv");
  const auto report = bench::testing::make_sweep_report("gather_cached_kv", h, {"a"});
  check_recordable(repo.root(), report, "r.json");
  const RecordedReport rec = record_bandwidth_report(repo.root(), report);
  EXPECT_EQ(rec.json, bandwidth_report_path(repo.root(), "gather_cached_kv", h));
  EXPECT_EQ(bench::to_json(bench::read_report(rec.json)), bench::to_json(report));
  const std::string md = read_text(rec.markdown);
  EXPECT_NE(md.find("](gather_cached_kv-" + short_hash(h) + ".svg)"), std::string::npos) << md;
  // The plot needs python3-matplotlib; when it was drawn it is an SVG.
  if (rec.plotted) {
    EXPECT_NE(read_text(rec.svg).find("<svg"), std::string::npos);
  } else {
    EXPECT_FALSE(rec.plot_error.empty());
  }
}

TEST(Record, RefusesOtherSourcesAndOtherSweeps) {
  ScratchRepo repo;
  const std::string h = repo.hash("gather_cached_kv");
  auto report = bench::testing::make_sweep_report("gather_cached_kv", h, {"a"});
  repo.write("kernels/src/copy/gather.cu", "edited after the measurement");
  try {
    check_recordable(repo.root(), report, "r.json");
    FAIL() << "stale report accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(
        std::string(e.what()).find("r.json: measured on gather_cached_kv sources " + short_hash(h)),
        std::string::npos)
        << e.what();
  }
  report.source_hash = repo.hash("gather_cached_kv");
  report.sweep = "quick";
  EXPECT_THROW(check_recordable(repo.root(), report, "r.json"), EvidenceError);
  report.sweep = "default";
  report.family = "no_such_family";
  EXPECT_THROW(check_recordable(repo.root(), report, "r.json"), EvidenceError);
}

TEST(Record, RefusesAPartOfTheSweepNamingWhatIsMissingOrForeign) {
  ScratchRepo repo;
  const std::string h = repo.hash("gather_cached_kv");
  auto report = bench::testing::make_sweep_report("gather_cached_kv", h, {"a"});
  EXPECT_NO_THROW(check_recordable(repo.root(), report, "r.json"));
  const std::string dropped = report.shapes[3].shape.label;
  report.shapes.erase(report.shapes.begin() + 3);
  try {
    check_recordable(repo.root(), report, "r.json");
    FAIL() << "a sweep without " << dropped << " was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: not the whole default sweep of gather_cached_kv; "
                                         "missing: " +
                                         dropped),
              std::string::npos)
        << e.what();
  }
  report = bench::testing::make_sweep_report("gather_cached_kv", h, {"a"});
  // make_report's rows are t64, t128, ... doubling: its 12th, t131072, is in no default sweep.
  const auto longer = bench::testing::make_report(
      "gather_cached_kv", h, {"a"}, {std::vector<bench::testing::Timing>(12, {10, 0.01})});
  report.shapes.push_back(longer.shapes.back());
  try {
    check_recordable(repo.root(), report, "r.json");
    FAIL() << "a sweep with an extra shape was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_NE(std::string(e.what()).find("not in it: t131072"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagecheck::review
