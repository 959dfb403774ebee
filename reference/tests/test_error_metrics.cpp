/// Error metrics: max abs/rel error with a floor, relative norm, the worst element's
/// coordinates, and non-finite actual values counted as infinite errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "pagecheck/reference/error_metrics.h"

namespace pagecheck {
namespace {

TEST(ErrorMetrics, KnownValues) {
  // Shape (2 seqs, 2 heads, 3 dims); the worst relative error is at (1, 0, 2).
  std::vector<double> expected{1, 2, 3, 4, 5, 6, 7, 8, 0.001, 10, 11, 12};
  std::vector<double> actual = expected;
  actual[1] += 0.02;   // rel 0.01
  actual[8] += 0.001;  // abs 0.001, rel 0.001 / max(0.001, floor 0.01) = 0.1
  actual[11] -= 0.06;  // abs 0.06, rel 0.005
  const ref::ErrorMetrics m = ref::compare(expected, actual, {2, 2, 3}, 0.01);
  EXPECT_EQ(m.count, 12);
  EXPECT_EQ(m.num_nonfinite, 0);
  EXPECT_NEAR(m.max_abs, 0.06, 1e-15);
  EXPECT_NEAR(m.max_rel, 0.1, 1e-12);
  EXPECT_EQ(m.worst_index, 8);
  EXPECT_EQ(m.worst_coord, (std::array<int64_t, 3>{1, 0, 2}));
  EXPECT_EQ(m.worst_expected, 0.001);
  EXPECT_EQ(m.worst_actual, 0.002);
  double norm = 0, diff = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    norm += expected[i] * expected[i];
    diff += (actual[i] - expected[i]) * (actual[i] - expected[i]);
  }
  EXPECT_NEAR(m.rel_norm, std::sqrt(diff / norm), 1e-15);
  const std::string text = m.to_string();
  EXPECT_NE(text.find("max_rel=1.000e-01"), std::string::npos) << text;
  EXPECT_NE(text.find("(seq,head,dim)=(1,0,2)"), std::string::npos) << text;
}

TEST(ErrorMetrics, IdenticalTensorsHaveZeroError) {
  const std::vector<double> v{0.5, -0.25, 3};
  const ref::ErrorMetrics m = ref::compare(v, v, {1, 1, 3}, 1e-6);
  EXPECT_EQ(m.max_abs, 0);
  EXPECT_EQ(m.max_rel, 0);
  EXPECT_EQ(m.rel_norm, 0);
}

TEST(ErrorMetrics, NonFiniteActualIsAnInfiniteError) {
  std::vector<double> expected(8, 1.0), actual(8, 1.0);
  actual[5] = std::numeric_limits<double>::quiet_NaN();
  actual[6] = std::numeric_limits<double>::infinity();
  const ref::ErrorMetrics m = ref::compare(expected, actual, {1, 2, 4}, 1e-3);
  EXPECT_EQ(m.num_nonfinite, 2);
  EXPECT_TRUE(std::isinf(m.max_abs));
  EXPECT_TRUE(std::isinf(m.max_rel));
  EXPECT_TRUE(std::isinf(m.rel_norm));
  EXPECT_EQ(m.worst_index, 5);
  EXPECT_EQ(m.worst_coord, (std::array<int64_t, 3>{0, 1, 1}));
  EXPECT_NE(m.to_string().find("2 non-finite"), std::string::npos) << m.to_string();
}

TEST(ErrorMetrics, ShapeMismatchIsRejected) {
  const std::vector<double> v(6, 1.0);
  EXPECT_THROW(ref::compare(v, v, {1, 2, 4}, 1e-3), std::invalid_argument);
  EXPECT_THROW(ref::compare(v, std::vector<double>(5), {1, 2, 3}, 1e-3), std::invalid_argument);
  EXPECT_THROW(ref::compare(v, v, {1, 2, 3}, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck
