/// Every report committed under fixtures/bandwidth passes the validating reader (review reads
/// them in CI) and holds a measurement of each of its variants.
#include <gtest/gtest.h>

#include <filesystem>

#include "pagecheck/bench/compare.h"
#include "pagecheck/bench/report.h"

namespace pagecheck::bench {
namespace {

namespace fs = std::filesystem;

TEST(CommittedReports, EveryRecordedReportValidates) {
  int read = 0;
  for (const auto& entry : fs::directory_iterator(PAGECHECK_BANDWIDTH_FIXTURES)) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    BenchReport r;
    ASSERT_NO_THROW(r = read_report(path));
    EXPECT_NO_THROW(require_measurements(r, path));
    // A report compared with itself has every row on both sides and no change.
    const Comparison c = compare_reports(r, r, 0.05);
    EXPECT_EQ(c.missing(), 0);
    EXPECT_EQ(c.exit_code(), 0);
    ++read;
  }
  EXPECT_GT(read, 0) << "no report under " << PAGECHECK_BANDWIDTH_FIXTURES;
}

}  // namespace
}  // namespace pagecheck::bench
