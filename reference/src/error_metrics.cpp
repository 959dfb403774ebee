/// Error metrics between an expected (float64) tensor and an actual one.
#include "pagecheck/reference/error_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace pagecheck::ref {

std::string ErrorMetrics::to_string() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "max_abs=%.3e max_rel=%.3e rel_norm=%.3e worst (seq,head,dim)=(%lld,%lld,%lld) "
                "expected %.9g got %.9g",
                max_abs, max_rel, rel_norm, static_cast<long long>(worst_coord[0]),
                static_cast<long long>(worst_coord[1]), static_cast<long long>(worst_coord[2]),
                worst_expected, worst_actual);
  std::string text = line;
  if (num_nonfinite > 0) text += " (" + std::to_string(num_nonfinite) + " non-finite)";
  return text;
}

ErrorMetrics compare(const std::vector<double>& expected, const std::vector<double>& actual,
                     std::array<int64_t, 3> shape, double rel_floor) {
  for (int i = 0; i < 3; ++i) {
    if (shape[i] < 0) {
      throw std::invalid_argument("compare: shape[" + std::to_string(i) +
                                  "] = " + std::to_string(shape[i]) + " is negative");
    }
  }
  const int64_t count = shape[0] * shape[1] * shape[2];
  if (static_cast<int64_t>(expected.size()) != count ||
      static_cast<int64_t>(actual.size()) != count) {
    throw std::invalid_argument("compare: expected has " + std::to_string(expected.size()) +
                                " and actual " + std::to_string(actual.size()) +
                                " elements but the shape holds " + std::to_string(count));
  }
  if (!(rel_floor > 0)) {
    throw std::invalid_argument("compare: rel_floor = " + std::to_string(rel_floor) +
                                " must be positive");
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ErrorMetrics m;
  m.count = count;
  double diff_sq = 0, expected_sq = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double e = expected[i], a = actual[i];
    double abs_err, rel_err;
    if (!std::isfinite(a) || !std::isfinite(e)) {
      m.num_nonfinite += std::isfinite(a) ? 0 : 1;
      abs_err = rel_err = kInf;
    } else {
      abs_err = std::fabs(a - e);
      rel_err = abs_err / std::max(std::fabs(e), rel_floor);
    }
    diff_sq += abs_err * abs_err;
    if (std::isfinite(e)) expected_sq += e * e;
    if (abs_err > m.max_abs) m.max_abs = abs_err;
    if (m.worst_index < 0 || rel_err > m.max_rel) {
      if (rel_err > m.max_rel) m.max_rel = rel_err;
      m.worst_index = i;
    }
  }
  m.rel_norm =
      std::sqrt(diff_sq) / std::max(std::sqrt(expected_sq), std::numeric_limits<double>::min());
  if (m.worst_index >= 0) {
    const int64_t i = m.worst_index;
    m.worst_coord = {i / (shape[1] * shape[2]), (i / shape[2]) % shape[1], i % shape[2]};
    m.worst_expected = expected[i];
    m.worst_actual = actual[i];
  }
  return m;
}

}  // namespace pagecheck::ref
