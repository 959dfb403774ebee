/// Provisional per-dtype tolerance of GPU attention outputs against the float64 reference.
#include <algorithm>
#include <cmath>

#include "pagecheck/verify/golden.h"

namespace pagecheck::verify::golden {
namespace {

/// Explicit significand bits of the storage dtype.
int mantissa_bits(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 10;
    case DType::kBFloat16:
      return 7;
    case DType::kFloat32:
      return 23;
  }
  return 23;
}

/// Exponent of the smallest subnormal of the storage dtype.
int min_subnormal_exponent(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return -24;
    case DType::kBFloat16:
      return -133;
    case DType::kFloat32:
      return -149;
  }
  return -149;
}

/// Spacing of the storage dtype's values around |value| (its subnormal spacing near zero).
double ulp(DType dtype, double value) {
  const double magnitude = std::fabs(value);
  int exponent = 0;
  if (magnitude > 0 && std::isfinite(magnitude)) {
    (void)std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
    exponent -= 1;                           // magnitude in [2^exponent, 2^(exponent+1))
  } else {
    exponent = min_subnormal_exponent(dtype) + mantissa_bits(dtype);
  }
  return std::ldexp(1.0, std::max(exponent - mantissa_bits(dtype), min_subnormal_exponent(dtype)));
}

}  // namespace

double attention_tolerance(DType dtype, double reference, double max_abs_value) {
  const double eps = std::ldexp(1.0, -mantissa_bits(dtype));
  return 2.0 * ulp(dtype, reference) + 4.0 * eps * max_abs_value;
}

}  // namespace pagecheck::verify::golden
