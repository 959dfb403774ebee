/// Median, quartiles and noise of timing samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "pagecheck/bench/statistics.h"

namespace pagecheck::bench {
namespace {

TEST(Statistics, OddCountQuartilesInterpolateBetweenRanks) {
  // sorted: 1 2 3 4 10 -> median 3, q1 at rank 1 = 2, q3 at rank 3 = 4
  const SampleSummary s = summarize({10, 2, 4, 1, 3});
  EXPECT_EQ(s.samples, 5);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.q1, 2.0);
  EXPECT_DOUBLE_EQ(s.q3, 4.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_DOUBLE_EQ(s.noise, (4.0 - 2.0) / 3.0);
}

TEST(Statistics, EvenCountMedianAveragesTheMiddlePair) {
  // sorted: 1 2 3 4 -> median 2.5; q1 at position 0.75 -> 1.75; q3 at 2.25 -> 3.25
  const SampleSummary s = summarize({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.noise, 1.5 / 2.5);
}

TEST(Statistics, SingleSampleHasNoSpread) {
  const SampleSummary s = summarize({7.5});
  EXPECT_DOUBLE_EQ(s.median, 7.5);
  EXPECT_DOUBLE_EQ(s.q1, 7.5);
  EXPECT_DOUBLE_EQ(s.q3, 7.5);
  EXPECT_DOUBLE_EQ(s.noise, 0.0);
}

TEST(Statistics, OutliersMoveTheMeanButNotTheMedian) {
  std::vector<double> v(99, 10.0);
  v.push_back(1e6);
  const SampleSummary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 10.0);
  EXPECT_DOUBLE_EQ(s.noise, 0.0);
  EXPECT_GT(s.mean, 1000.0);
}

TEST(Statistics, OrderOfSamplesDoesNotMatter) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(1.0, 100.0);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> v(static_cast<std::size_t>(5 + trial));
    for (double& x : v) x = dist(rng);
    const SampleSummary a = summarize(v);
    std::shuffle(v.begin(), v.end(), rng);
    const SampleSummary b = summarize(v);
    // The same samples sort alike, so the order statistics come out bit for bit the same.
    EXPECT_EQ(std::tie(a.median, a.q1, a.q3), std::tie(b.median, b.q1, b.q3));
    // Quartiles are ordered and inside the range.
    const std::vector<double> ascending = {a.min, a.q1, a.median, a.q3, a.max};
    EXPECT_TRUE(std::is_sorted(ascending.begin(), ascending.end()))
        << "{min, q1, median, q3, max} = " << ::testing::PrintToString(ascending);
  }
}

TEST(Statistics, QuantileEndpointsAreMinAndMax) {
  const std::vector<double> sorted = {1, 5, 9};
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 1.0), 9.0);
  EXPECT_DOUBLE_EQ(quantile_sorted(sorted, 0.75), 7.0);
  EXPECT_THROW(quantile_sorted(sorted, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile_sorted({}, 0.5), std::invalid_argument);
}

TEST(Statistics, RejectsEmptyNegativeAndNonFiniteSamples) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(summarize({1.0, -2.0}), std::invalid_argument);
  EXPECT_THROW(summarize({1.0, std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
  EXPECT_THROW(summarize({std::numeric_limits<double>::infinity()}), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck::bench
