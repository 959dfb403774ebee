#pragma once
/// Tolerance of the GPU attention tests (replaceable by the bound derived in
/// docs/tolerances.md). The kernels read storage-dtype inputs exactly, compute in float32 and
/// round the output once to the storage dtype; the reference computes in float64. So
///   |kernel - reference| <= max|v| * (2 * u_dtype + 2^-14)
/// where u_dtype is the unit roundoff of the storage dtype (2^-24 float32, 2^-11 float16,
/// 2^-8 bfloat16): 2 u_dtype covers the final rounding (|out| <= max|v|, a convex combination
/// of values) with a factor 2 of margin, and 2^-14 (6.1e-5) covers the float32 arithmetic
/// (dot products over up to 256 dims, exp, sums over a few thousand tokens), several times the
/// error estimated for the test cases' logit ranges.
#include <cmath>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::gpu_test {

/// Unit roundoff of a storage dtype.
inline double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return std::ldexp(1.0, -24);
    case DType::kFloat16:
      return std::ldexp(1.0, -11);
    case DType::kBFloat16:
      return std::ldexp(1.0, -8);
  }
  return 1.0;
}

/// Absolute tolerance of one attention output element; `max_abs_value` is max |v| over the
/// value-cache elements the problem references.
inline double attention_tolerance(DType dtype, double max_abs_value) {
  return max_abs_value * (2.0 * unit_roundoff(dtype) + std::ldexp(1.0, -14));
}

}  // namespace pagecheck::gpu_test
