/// Nominal fp8 scales and content multipliers (fp8_scales.h).
#include "fp8_scales.h"

#include <algorithm>
#include <cmath>

namespace pagecheck::verify::gen::detail {

double nominal_scale(double magnitude, DType kv_dtype) {
  return magnitude / dtype_info(kv_dtype).max_finite;
}

double content_multiplier(float scale, double nominal) {
  const double j = std::round(std::log2(static_cast<double>(scale) / nominal));
  return std::ldexp(1.0,
                    static_cast<int>(std::clamp<double>(j, kMinScaleExponent, kMaxScaleExponent)));
}

}  // namespace pagecheck::verify::gen::detail
