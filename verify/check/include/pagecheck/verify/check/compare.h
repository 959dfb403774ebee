#pragma once
/// Comparisons of a kernel's outputs with the reference: attention within the derived
/// tolerance, copies bit for bit over whole buffers (padding and untouched rows included).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/check/tolerance.h"

namespace pagecheck::verify::check {

/// Attention output against the float64 reference.
struct AttentionComparison {
  ref::ErrorMetrics metrics;  ///< max abs, max rel, norm error, worst (seq, head, dim)
  double max_ratio = 0;       ///< max |actual - expected| / tol (infinite for NaN)
  std::array<int64_t, 3> worst{-1, -1, -1};  ///< (seq, head, dim) of max_ratio
  double worst_expected = 0;                 ///< reference value there
  double worst_actual = 0;                   ///< kernel value there
  double worst_tolerance = 0;                ///< tolerance there
  int64_t violations = 0;                    ///< elements over their tolerance (or not finite)
  /// True when every element is finite and within its tolerance.
  bool passed() const { return violations == 0; }
  /// "12 of 4096 elements over tolerance; worst (seq,head,dim)=(…) expected … got … tol …
  ///  (ratio …); max_abs … max_rel … rel_norm …".
  std::string describe() const;
};

/// Compares a densely packed storage output [num_seqs, num_heads, head_size] with the
/// reference. `tolerance` comes from attention_tolerance().
AttentionComparison compare_attention(const ref::PagedAttentionProblem& problem,
                                      const ref::PagedAttentionResult& reference,
                                      const std::vector<double>& tolerance,
                                      const std::vector<std::byte>& actual);

/// Bit-exact comparison of the output buffers of a copy kernel.
struct CopyComparison {
  int64_t elements = 0;    ///< elements compared (whole buffers)
  int64_t mismatches = 0;  ///< elements whose bits differ
  std::string first;       ///< where and how the first mismatch differs
  bool passed() const { return mismatches == 0; }
  /// "all 1234 elements bit-identical" or "3 of 1234 elements differ; first: …".
  std::string describe() const;
};

/// Compares the kernel's buffers with the expected ones (the reference's result on the same
/// initial buffers). For gather, `first`/`second` are key/value in key_layout/value_layout;
/// for reshape_and_cache they are the key/value caches.
CopyComparison compare_copy(const ref::CacheCopyProblem& expected, bool gather,
                            const std::vector<std::byte>& first,
                            const std::vector<std::byte>& second);

void to_json(nlohmann::json& j, const AttentionComparison& c);
void to_json(nlohmann::json& j, const CopyComparison& c);

}  // namespace pagecheck::verify::check
