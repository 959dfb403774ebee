#pragma once
/// Attention output against the float64 reference, element by element within the tolerance of
/// attention_tolerance() (tolerance.h). Every attention check of the harness (verify, golden
/// checks, GPU tests) compares through compare_attention().
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"

namespace pagecheck::verify {

/// Attention output against the float64 reference.
struct AttentionComparison {
  ref::ErrorMetrics metrics;  ///< max abs, max rel, norm error, worst (row, head, dim)
  double max_ratio = 0;       ///< max |actual - expected| / tol (infinite for NaN)
  std::array<int64_t, 3> worst{-1, -1, -1};  ///< (query row, head, dim) of max_ratio
  double worst_expected = 0;                 ///< reference value there
  double worst_actual = 0;                   ///< kernel value there
  double worst_tolerance = 0;                ///< tolerance there
  int64_t violations = 0;                    ///< elements over their tolerance (or not finite)
  /// True when every element is finite and within its tolerance.
  bool passed() const { return violations == 0; }
  /// "12 of 4096 elements over tolerance; worst (row,head,dim)=(…) expected … got … tol …
  ///  (ratio …); max_abs … max_rel … rel_norm …".
  std::string describe() const;
};

/// Compares a densely packed storage output [num_rows, num_heads, head_size] (one row per query
/// token) with the reference. `tolerance` comes from attention_tolerance(). Throws
/// std::invalid_argument when the sizes disagree.
AttentionComparison compare_attention(const ref::PagedAttentionProblem& problem,
                                      const ref::PagedAttentionResult& reference,
                                      const std::vector<double>& tolerance,
                                      const std::vector<std::byte>& actual);

void to_json(nlohmann::json& j, const AttentionComparison& c);

}  // namespace pagecheck::verify
