/// Terminal table and Markdown of reports and comparisons.
#include <gtest/gtest.h>

#include "pagecheck/bench/render.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

using testing::make_report;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Format, NumbersBytesAndPercents) {
  EXPECT_EQ(format_number(1234.4), "1234");
  EXPECT_EQ(format_number(12.34), "12.3");
  EXPECT_EQ(format_number(1.234), "1.23");
  EXPECT_EQ(format_number(0.1234), "0.123");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(120ll << 20), "120 MiB");
  EXPECT_EQ(format_bytes(3ll << 29), "1.5 GiB");
  EXPECT_EQ(format_percent(0.8567), "85.7%");
}

TEST(RenderReport, MarkdownHasProvenanceCeilingsTablesAndPlotLink) {
  auto r = make_report("gather_cached_kv", std::string(64, 'c'), {"naive", "vectorized"},
                       {{{20, 0.01}, {40, 0.02}}, {{10, 0.01}, {20, 0.01}}});
  r.shapes[1].variants[0].message = "a | b";
  const std::string md = render_report_markdown(r, "gather_cached_kv-cccccccccccc.svg");
  EXPECT_TRUE(contains(md, "## Bandwidth: `gather_cached_kv` (sources `cccccccccccc`)"));
  EXPECT_TRUE(contains(md, "Test GPU"));
  EXPECT_TRUE(contains(md, "Driver 999.1"));
  EXPECT_TRUE(contains(md, "Copy ceiling:"));
  EXPECT_TRUE(contains(md, "Read ceiling:"));
  EXPECT_TRUE(contains(md, "share is of the **copy** ceiling"));
  EXPECT_TRUE(contains(md, "](gather_cached_kv-cccccccccccc.svg)"));
  EXPECT_TRUE(contains(md, "### `naive`"));
  EXPECT_TRUE(contains(md, "### `vectorized`"));
  EXPECT_TRUE(contains(md, "| t64 |"));
  EXPECT_TRUE(contains(md, "a \\| b"));  // a '|' in a message does not break the table
  // Side by side: naive -> vectorized, 2x faster on both shapes.
  EXPECT_TRUE(contains(md, "Variants side by side"));
  EXPECT_TRUE(contains(md, "2.000x"));
  EXPECT_TRUE(contains(md, "2 faster"));
}

TEST(RenderReport, NoPlotLinkWhenNoneGiven) {
  const auto r = make_report("gather_cached_kv", std::string(64, 'c'), {"v"}, {{{20, 0.01}}});
  EXPECT_FALSE(contains(render_report_markdown(r, ""), "!["));
  EXPECT_FALSE(contains(render_report_markdown(r, ""), "side by side"));
}

TEST(RenderReport, TerminalTableFlagsAboveCeilingFailuresAndNoise) {
  auto r = make_report("gather_cached_kv", std::string(64, 'c'), {"v"},
                       {{{20, 0.01}, {40, 0.01}, {80, 0.01}}});
  r.shapes[0].variants[0].above_ceiling = true;
  r.shapes[0].variants[0].ceiling_share = 1.2;
  r.shapes[1].variants[0].status = RunStatus::kFailed;
  r.shapes[1].variants[0].message = "output check: key_out: 3 of 10 elements are NaN/inf";
  r.shapes[2].variants[0].converged = false;
  const std::string table = render_report_table(r);
  EXPECT_TRUE(contains(table, "ABOVE CEILING (120.0%)"));
  EXPECT_TRUE(contains(table, "failed; output check: key_out"));
  EXPECT_TRUE(contains(table, "noisy: 1.0% after 40 samples"));
}

TEST(RenderReport, LaunchFloorIsShownAndResultsBelowItAreFlagged) {
  auto r = make_report("gather_cached_kv", std::string(64, 'c'), {"v"},
                       {{{3.0, 0.01}, {3.9, 0.01}, {40, 0.01}}});
  EXPECT_TRUE(contains(render_report_markdown(r, ""), "Launch floor: not measured"));
  EXPECT_FALSE(contains(render_report_table(r), "BELOW LAUNCH FLOOR"));  // no floor, no flag
  r.launch_floor.method = "an empty kernel";
  r.launch_floor.time_us = testing::summary_of({4.0, 0.02});
  const std::string md = render_report_markdown(r, "");
  EXPECT_TRUE(contains(md, "- Launch floor: 4.00 us (an empty kernel; noise 2.0%)")) << md;
  const std::string table = render_report_table(r);
  EXPECT_TRUE(contains(table, "launch floor 4.00 us")) << table;
  // 3.0 us is below 0.95 x 4.0; 3.9 us is within the tolerance; 40 us is above the floor.
  EXPECT_TRUE(marked_below_floor(r.shapes[0].variants[0], r.launch_floor));
  EXPECT_FALSE(marked_below_floor(r.shapes[1].variants[0], r.launch_floor));
  EXPECT_FALSE(marked_below_floor(r.shapes[2].variants[0], r.launch_floor));
  EXPECT_TRUE(contains(table, "BELOW LAUNCH FLOOR (4.00 us)"));
  EXPECT_TRUE(contains(md, "BELOW LAUNCH FLOOR (4.00 us)"));
  r.shapes[0].variants[0].status = RunStatus::kFailed;  // an unmeasured result is never marked
  EXPECT_FALSE(marked_below_floor(r.shapes[0].variants[0], r.launch_floor));
}

TEST(RenderComparison, RegressionIsBoldAndSummarized) {
  const auto old_r =
      make_report("gather_cached_kv", std::string(64, 'a'), {"v"}, {{{10, 0.01}, {20, 0.01}}});
  const auto new_r =
      make_report("gather_cached_kv", std::string(64, 'b'), {"v"}, {{{10, 0.01}, {30, 0.01}}});
  const std::string md = render_comparison_markdown(compare_reports(old_r, new_r, 0.05));
  EXPECT_TRUE(contains(md, "old (aaaaaaaaaaaa, Test GPU) -> new (bbbbbbbbbbbb, Test GPU)"));
  EXPECT_TRUE(contains(md, "| shape | variant | old us | new us | old GB/s | new GB/s |"));
  EXPECT_TRUE(contains(md, "**1 regression(s) beyond 5.0%**"));
  EXPECT_TRUE(contains(md, "| t128 | v | 20.0 (1.0%) | 30.0 (1.0%) |"));
  EXPECT_TRUE(contains(md, "**slower (regression)**"));
  EXPECT_TRUE(contains(md, "| t64 | v | 10.0 (1.0%) | 10.0 (1.0%) |"));
  EXPECT_TRUE(contains(md, "| 1.000x | same |"));
}

}  // namespace
}  // namespace pagecheck::bench
