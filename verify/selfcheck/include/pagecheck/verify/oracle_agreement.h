#pragma once
/// How closely the reference (double) agrees with the dense oracle (long double), and the
/// tolerances the self-check and the reference tests hold them to.
#include <cstdint>
#include <string>
#include <vector>

#include "pagecheck/reference/error_metrics.h"
#include "pagecheck/reference/paged_attention.h"
#include "pagecheck/verify/dense_oracle.h"

namespace pagecheck::verify {

/// Relative agreement required of the float64 outputs and lse values (on top of the rounding
/// allowance below).
constexpr double kOracleRelTolerance = 1e-12;
/// Relative-error floor: outputs are weighted means of values of order 1, so a difference is
/// measured against max(|expected|, 1e-2).
constexpr double kOracleRelFloor = 1e-2;

/// Allowed |reference - oracle| of one output element. Both compute the same sums; the
/// reference rounds each operation to double (unit roundoff u = 2^-53). A logit passes through
/// partial sums of size up to L = logit_magnitude (so it may be off by ~sqrt(head_size) u L),
/// a weight inherits that relative error, and the weighted sum of values up to
/// V = value_magnitude over the n attended tokens adds ~sqrt(n) u V. The allowance is
/// kOracleRelTolerance * max(|expected|, kOracleRelFloor)
///   + 2 u V (sqrt(head_size) L + sqrt(attended)):
/// ~1e-12 relative for ordinary inputs, larger only where the inputs are ill-conditioned.
double output_tolerance(double expected, int64_t head_size, int64_t attended,
                        double logit_magnitude, double value_magnitude);
/// Allowed |reference - oracle| of one lse value:
/// kOracleRelTolerance * max(|expected|, 1) + 2 u (sqrt(head_size) L + sqrt(attended)).
double lse_tolerance(double expected, int64_t head_size, int64_t attended, double logit_magnitude);

/// Whether two storage elements of `dtype`, the roundings of the doubles `exact_a` and
/// `exact_b`, are consistent: identical bytes, or +0/-0, or adjacent representable values whose
/// midpoint lies between exact_a and exact_b (inclusive). Rounding to nearest is monotonic, so
/// this is the only way two correct roundings of nearby values can differ; `was_tie` (if
/// given) says a midpoint split them.
bool storage_rounding_agrees(DType dtype, double exact_a, double exact_b, const std::byte* a,
                             const std::byte* b, bool* was_tie = nullptr);

/// Reference-versus-oracle agreement of one attention problem.
struct AttentionAgreement {
  ref::ErrorMetrics out;           ///< float64 outputs: oracle (expected) vs reference
  double out_worst_ratio = 0;      ///< max over outputs of |difference| / output_tolerance
  double lse_worst_ratio = 0;      ///< max over heads of |difference| / lse_tolerance
  int64_t storage_ties = 0;        ///< storage elements split by a rounding midpoint
  int64_t storage_mismatches = 0;  ///< storage elements that differ otherwise
  std::string first_mismatch;      ///< description of the first storage mismatch
  /// True when every output, lse and storage element is within tolerance.
  bool passed() const;
  /// "max_rel=… (0.01 of tolerance) lse … storage: identical", plus details on failure.
  std::string describe() const;
};

/// Compares a reference result with the oracle on `problem`.
AttentionAgreement compare_with_oracle(const ref::PagedAttentionProblem& problem,
                                       const ref::PagedAttentionResult& reference,
                                       const oracle::OracleAttention& oracle);

/// Index of the first differing byte of two buffers, or -1 when they are identical.
int64_t first_byte_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b);

}  // namespace pagecheck::verify
