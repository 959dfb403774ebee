/// `bench --devices` comparison (issue 19): a device whose median is further from the other
/// devices' than both sides' noise is flagged, one within the noise is not, cells that did not
/// run are not compared, and sweeps that differ between devices are refused.
#include <gtest/gtest.h>

#include "pagecheck/bench/device_compare.h"
#include "synthetic_report.h"

namespace pagecheck::bench {
namespace {

using testing::make_report;
using testing::Timing;

BenchReport device(double a_us, double noise, double b_us = 50) {
  return make_report("gather_cached_kv", "h", {"a", "b"},
                     {{{a_us, noise}, {2 * a_us, noise}}, {{b_us, 0.01}, {2 * b_us, 0.01}}});
}

TEST(DeviceCompare, ASlowCardIsFlaggedAndOnlyIt) {
  const std::vector<BenchReport> reports{device(100, 0.02), device(101, 0.02), device(115, 0.02)};
  const DeviceComparison c = compare_devices(reports);
  ASSERT_EQ(c.flagged.size(), 3u);
  EXPECT_EQ(c.flagged[0], 0);
  EXPECT_EQ(c.flagged[1], 0);
  EXPECT_EQ(c.flagged[2], 2);  // both shapes of variant a; b is alike everywhere
  const DeviceGap& g = c.gaps[2][0][0];
  EXPECT_TRUE(g.compared);
  EXPECT_DOUBLE_EQ(g.reference_us, 101);  // the median of 100, 101, 115
  EXPECT_NEAR(g.gap, 115.0 / 101 - 1, 1e-12);
  EXPECT_TRUE(g.flagged);
  EXPECT_FALSE(c.gaps[2][0][1].flagged);
  // The alike cards stay near the reference whatever the outlier does: 1% < 2% noise.
  EXPECT_NEAR(c.gaps[0][0][0].gap, 100.0 / 101 - 1, 1e-12);
  EXPECT_FALSE(c.gaps[0][0][0].flagged);
  const std::string text = render_device_tables(reports, {0, 1, 2}, c);
  EXPECT_NE(text.find("device 2: Test GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("OUTLIER (slower)"), std::string::npos) << text;
  EXPECT_NE(text.find("device 2: 2 result(s) more than their noise away"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("device 0: 2 result"), std::string::npos) << text;
}

TEST(DeviceCompare, AGapWithinTheNoiseIsNotFlagged) {
  const DeviceComparison c = compare_devices({device(100, 0.08), device(106, 0.01)});
  EXPECT_EQ(c.flagged, (std::vector<int>{0, 0}));  // 3% from the reference < 8% noise
  const DeviceComparison d = compare_devices({device(100, 0.01), device(106, 0.01)});
  EXPECT_EQ(d.flagged, (std::vector<int>{2, 2}));  // two cards: each is the other's outlier
  EXPECT_LT(d.gaps[0][0][0].gap, 0);
  EXPECT_GT(d.gaps[1][0][0].gap, 0);
}

TEST(DeviceCompare, UnmeasuredCellsAreNotComparedAndSweepsMustMatch) {
  std::vector<BenchReport> reports{device(100, 0.01), device(130, 0.01)};
  reports[1].shapes[0].variants[0].status = RunStatus::kFailed;
  const DeviceComparison c = compare_devices(reports);
  EXPECT_FALSE(c.gaps[0][0][0].compared);
  EXPECT_FALSE(c.gaps[1][0][0].compared);
  EXPECT_TRUE(c.gaps[1][1][0].flagged);
  EXPECT_NE(render_device_tables(reports, {3, 5}, c).find("failed"), std::string::npos);
  EXPECT_EQ(compare_devices({device(100, 0.01)}).flagged, (std::vector<int>{0}));

  BenchReport other = device(100, 0.01);
  other.shapes.pop_back();
  EXPECT_THROW(compare_devices({device(100, 0.01), other}), ReportError);
  other = device(100, 0.01);
  other.variants = {"a", "c"};
  EXPECT_THROW(compare_devices({device(100, 0.01), other}), ReportError);
}

}  // namespace
}  // namespace pagecheck::bench
