/// `pagecheck bench record` and `bench --record`: reports that measured nothing are refused, a
/// recorded report is replaced only with --force, and then the .json, .md and .svg together
/// (no stale plot beside a new report, no temporary file left), and every measurement marked
/// above its ceiling is named in a warning (issue 17). Runs on CPU: the recording run
/// is refused before any GPU work.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "../../review/tests/scratch_repo.h"
#include "pagecheck/bench/render.h"
#include "pagecheck/review/content_hash.h"
#include "pagecheck/review/evidence.h"
#include "run_pagecheck.h"

namespace pagecheck::bench {
namespace {

namespace fs = std::filesystem;
using review::testing::ScratchRepo;
using testing::make_report;
using testing::pagecheck;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Names of the files in `dir`.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class BenchRecord : public ::testing::Test {
 protected:
  /// A report of the scratch repository's current gather_cached_kv sources, carried in from
  /// "the GPU machine" as `name` (outside fixtures/).
  std::string carried(const std::string& name, const BenchReport& r) const {
    const std::string path = repo_.root() + "/" + name;
    write_report(r, path);
    return path;
  }
  BenchReport measured(double relative_time) const {
    // 10: half the copy ceiling on every shape; 20, twice the time: a quarter.
    return testing::make_sweep_report("gather_cached_kv", repo_.hash("gather_cached_kv"), {"a"},
                                      0.5 * 10 / relative_time);
  }
  std::string recorded(const std::string& ext) const {
    return repo_.root() + "/fixtures/bandwidth/gather_cached_kv-" +
           review::short_hash(repo_.hash("gather_cached_kv")) + ext;
  }
  ScratchRepo repo_;
};

TEST_F(BenchRecord, AReportThatMeasuredNothingIsRefusedNamingTheFile) {
  BenchReport empty = measured(10);
  empty.shapes.clear();
  BenchReport skipped = measured(10);
  for (auto& s : skipped.shapes) s.variants[0].status = RunStatus::kUnsupported;
  for (const auto& [name, report] :
       {std::pair<std::string, BenchReport>{"empty.json", empty}, {"skipped.json", skipped}}) {
    const std::string path = carried(name, report);
    const ProcessResult p = pagecheck({"bench", "record", path, "--repo", repo_.root()});
    EXPECT_EQ(p.exit_code, 2) << name << ": " << p.out << p.err;
    EXPECT_NE(p.err.find(path + ": "), std::string::npos) << p.err;
    EXPECT_FALSE(fs::exists(recorded(".json"))) << name;
    EXPECT_FALSE(fs::exists(recorded(".md"))) << name;
  }
}

TEST_F(BenchRecord, ReplacingARecordedReportNeedsForce) {
  const std::string first = carried("first.json", measured(10));
  ProcessResult p = pagecheck({"bench", "record", first, "--repo", repo_.root()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string json = read_text(recorded(".json")), md = read_text(recorded(".md"));

  const std::string second = carried("second.json", measured(20));
  p = pagecheck({"bench", "record", second, "--repo", repo_.root()});
  EXPECT_EQ(p.exit_code, 2) << p.out;
  EXPECT_NE(p.err.find(recorded(".json")), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("--force"), std::string::npos) << p.err;
  EXPECT_EQ(read_text(recorded(".json")), json);
  EXPECT_EQ(read_text(recorded(".md")), md);

  // Two reports for one target in one call are refused before anything is written.
  fs::remove(recorded(".json"));
  p = pagecheck({"bench", "record", first, second, "--repo", repo_.root(), "--force"});
  EXPECT_EQ(p.exit_code, 2) << p.out;
  EXPECT_NE(p.err.find(second), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(recorded(".json")));
}

TEST_F(BenchRecord, ForceReplacesJsonMarkdownAndPlotTogether) {
  // No tools/plot_bandwidth.py in the scratch repository: the plot cannot be drawn.
  ASSERT_EQ(
      pagecheck({"bench", "record", carried("first.json", measured(10)), "--repo", repo_.root()})
          .exit_code,
      0);
  std::ofstream(recorded(".svg")) << "<svg>plot of the first report</svg>";
  const BenchReport second = measured(20);
  ProcessResult p = pagecheck(
      {"bench", "record", carried("second.json", second), "--repo", repo_.root(), "--force"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(to_json(read_report(recorded(".json"))), to_json(second));
  EXPECT_EQ(read_text(recorded(".md")),
            render_report_markdown(second, fs::path(recorded(".svg")).filename().string()));
  EXPECT_FALSE(fs::exists(recorded(".svg"))) << "stale plot left beside the new report";

  // With a plotting script the new plot replaces the old one.
  repo_.write("tools/plot_bandwidth.py",
              "import sys\nopen(sys.argv[2], 'w').write('<svg>' + open(sys.argv[1]).read()[:1] +"
              " 'new</svg>')\n");
  std::ofstream(recorded(".svg")) << "<svg>stale</svg>";
  p = pagecheck(
      {"bench", "record", carried("third.json", measured(30)), "--repo", repo_.root(), "--force"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  if (p.out.find("no plot") != std::string::npos) GTEST_SKIP() << "no python3: " << p.out;
  EXPECT_EQ(read_text(recorded(".svg")), "<svg>{new</svg>");
  const std::vector<std::string> expected = {fs::path(recorded(".json")).filename().string(),
                                             fs::path(recorded(".md")).filename().string(),
                                             fs::path(recorded(".svg")).filename().string()};
  EXPECT_EQ(listing(fs::path(recorded(".json")).parent_path()), expected);  // no temporaries
}

TEST_F(BenchRecord, WarnsAboutEveryMeasurementAboveItsCeiling) {
  // Two variants on two shapes; the run flagged a on the second shape and b on the first.
  BenchReport r =
      testing::make_sweep_report("gather_cached_kv", repo_.hash("gather_cached_kv"), {"a", "b"});
  testing::set_timing(r, 1, 0, {0.05, 0.01});
  testing::set_timing(r, 0, 1, {0.04, 0.01});
  const std::vector<std::pair<std::size_t, std::size_t>> flagged = {{1, 0}, {0, 1}};
  for (const auto& [shape, variant] : flagged) {
    const VariantResult& v = r.shapes[shape].variants[variant];
    ASSERT_GT(v.ceiling_share, kCeilingTolerance) << "the synthetic timing is not above it";
    ASSERT_TRUE(v.above_ceiling);
  }
  const ProcessResult p =
      pagecheck({"bench", "record", carried("above.json", r), "--repo", repo_.root()});
  ASSERT_EQ(p.exit_code, 0) << p.err;  // recorded all the same, with the mark
  EXPECT_TRUE(fs::exists(recorded(".json")));
  const std::string ceiling = format_number(r.copy_ceiling.gbps) + " GB/s";
  for (const auto& [shape, variant] : flagged) {
    const ShapeResult& sr = r.shapes[shape];
    const VariantResult& v = sr.variants[variant];
    const std::string line = "warning: gather_cached_kv " + sr.shape.label + " " + v.variant +
                             ": " + format_number(v.gbps) + " GB/s above the copy ceiling " +
                             ceiling;
    EXPECT_NE(p.err.find(line), std::string::npos) << line << "\nin:\n" << p.err;
  }
  // Exactly one warning per flagged row: the rows within the ceiling are not named.
  std::size_t warnings = 0;
  for (std::size_t at = p.err.find("warning:"); at != std::string::npos;
       at = p.err.find("warning:", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, flagged.size()) << p.err;

  // A report without a flagged row records without a warning.
  const ProcessResult q = pagecheck(
      {"bench", "record", carried("within.json", measured(10)), "--repo", repo_.root(), "--force"});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.err.find("warning"), std::string::npos) << q.err;
}

TEST_F(BenchRecord, WarnsAboutEveryMeasurementBelowTheLaunchFloor) {
  // The run's floor is 4 us; b on the first shape took 3 us (below 0.95 x 4), a 3.9 us (within).
  BenchReport r =
      testing::make_sweep_report("gather_cached_kv", repo_.hash("gather_cached_kv"), {"a", "b"});
  r.launch_floor.method = "an empty kernel";
  r.launch_floor.time_us = testing::summary_of({4.0, 0.01});
  for (std::size_t s = 0; s < r.shapes.size(); ++s) {  // every other result well above the floor
    for (std::size_t v = 0; v < 2; ++v) testing::set_timing(r, s, v, {1e5, 0.01});
  }
  testing::set_timing(r, 0, 0, {3.9, 0.01});
  testing::set_timing(r, 0, 1, {3.0, 0.01});
  ASSERT_FALSE(r.shapes[0].variants[1].above_ceiling) << "only the floor is to be crossed";
  const ProcessResult p =
      pagecheck({"bench", "record", carried("below.json", r), "--repo", repo_.root()});
  ASSERT_EQ(p.exit_code, 0) << p.err;  // recorded all the same, with the mark
  const std::string line = "warning: gather_cached_kv " + r.shapes[0].shape.label +
                           " b: 3.00 us below the launch floor 4.00 us";
  EXPECT_NE(p.err.find(line), std::string::npos) << line << "\nin:\n" << p.err;
  EXPECT_EQ(p.err.find("warning:"), p.err.rfind("warning:")) << "one warning only:\n" << p.err;
  EXPECT_NE(read_text(recorded(".md")).find("BELOW LAUNCH FLOOR (4.00 us)"), std::string::npos);
}

TEST_F(BenchRecord, ARecordingRunIsRefusedBeforeAnyWorkWhenAReportIsInTheWay) {
  const std::vector<std::string> run = {"bench",    "--family", "gather_cached_kv",
                                        "--record", "--repo",   repo_.root()};
  ProcessResult p = pagecheck(run);
  if (p.err.find("no gather_cached_kv variant") != std::string::npos) {
    GTEST_SKIP() << "no built-in kernels in this build";
  }
  // Nothing in the way, but the scratch repository's kernel sources are not the ones this
  // binary was built from: refused before any GPU work, naming both hashes' unit.
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("built from gather_cached_kv sources"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(recorded(".json")));
  fs::create_directories(fs::path(recorded(".json")).parent_path());
  std::ofstream(recorded(".json")) << "{}";
  p = pagecheck(run);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find(recorded(".json")), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("--force"), std::string::npos) << p.err;
  EXPECT_EQ(read_text(recorded(".json")), "{}");

  // The same for --record-dir.
  const fs::path out = repo_.root() + "/out";
  fs::create_directories(out);
  std::ofstream(out / fs::path(recorded(".json")).filename()) << "{}";
  p = pagecheck({"bench", "--family", "gather_cached_kv", "--record-dir", out.string(), "--repo",
                 repo_.root()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("--force"), std::string::npos) << p.err;
  // --force without recording is bad usage.
  p = pagecheck({"bench", "--family", "gather_cached_kv", "--force"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
}

}  // namespace
}  // namespace pagecheck::bench
