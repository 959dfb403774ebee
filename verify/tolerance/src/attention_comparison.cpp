/// Attention comparison within the per-element tolerance.
#include "pagecheck/verify/attention_comparison.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace pagecheck::verify {
namespace {

std::string coord_text(const std::array<int64_t, 3>& c) {
  return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + ")";
}

}  // namespace

std::string AttentionComparison::describe() const {
  std::ostringstream os;
  os.precision(6);
  if (passed()) {
    os << "all " << metrics.count << " elements within tolerance (max error/tolerance " << max_ratio
       << ")";
  } else {
    os << violations << " of " << metrics.count << " elements over tolerance";
  }
  os << "; worst (row,head,dim)=" << coord_text(worst) << " expected " << worst_expected << " got "
     << worst_actual << " tol " << worst_tolerance << "; max_abs=" << metrics.max_abs
     << " max_rel=" << metrics.max_rel << " rel_norm=" << metrics.rel_norm;
  if (metrics.num_nonfinite > 0) os << " (" << metrics.num_nonfinite << " non-finite)";
  return os.str();
}

AttentionComparison compare_attention(const ref::PagedAttentionProblem& problem,
                                      const ref::PagedAttentionResult& reference,
                                      const std::vector<double>& tolerance,
                                      const std::vector<std::byte>& actual) {
  const int64_t hs = problem.head_size();
  const int64_t rows = problem.batch.num_query_tokens();
  const int64_t count = rows * problem.num_heads * hs;
  const std::size_t size = dtype_size(problem.dtype);
  if (static_cast<int64_t>(actual.size()) != count * static_cast<int64_t>(size) ||
      static_cast<int64_t>(tolerance.size()) != count ||
      static_cast<int64_t>(reference.out.size()) != count) {
    throw std::invalid_argument(
        "compare_attention: output, tolerance or reference size differs "
        "from num_rows * num_heads * head_size = " +
        std::to_string(count));
  }
  std::vector<double> got(count);
  for (int64_t i = 0; i < count; ++i) got[i] = load_element(problem.dtype, actual.data(), i);
  AttentionComparison c;
  c.metrics = ref::compare(reference.out, got, {rows, problem.num_heads, hs}, 1e-3);
  c.max_ratio = -1;
  for (int64_t i = 0; i < count; ++i) {
    const double err = std::fabs(got[i] - reference.out[i]);
    // A zero tolerance (a row that attends nothing: exactly 0) is met only by an exact value.
    const double ratio = !std::isfinite(got[i]) ? std::numeric_limits<double>::infinity()
                         : err == 0             ? 0.0
                                                : err / tolerance[i];
    if (!(ratio <= 1.0)) ++c.violations;
    if (ratio > c.max_ratio) {
      c.max_ratio = ratio;
      c.worst = {i / (problem.num_heads * hs), (i / hs) % problem.num_heads, i % hs};
      c.worst_expected = reference.out[i];
      c.worst_actual = got[i];
      c.worst_tolerance = tolerance[i];
    }
  }
  return c;
}

void to_json(nlohmann::json& j, const AttentionComparison& c) {
  auto finite = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  j = nlohmann::json{{"max_abs", finite(c.metrics.max_abs)},
                     {"max_rel", finite(c.metrics.max_rel)},
                     {"rel_norm", finite(c.metrics.rel_norm)},
                     {"nonfinite", c.metrics.num_nonfinite},
                     {"max_ratio", finite(c.max_ratio)},
                     {"worst", c.worst},
                     {"worst_expected", c.worst_expected},
                     {"worst_actual", finite(c.worst_actual)},
                     {"worst_tolerance", c.worst_tolerance},
                     {"violations", c.violations},
                     {"elements", c.metrics.count}};
}

}  // namespace pagecheck::verify
