/// fp8 codes (OCP E4M3 "fn" and E5M2): exact decoding and the saturating round-to-nearest-even
/// quantization, in integer arithmetic on the bits of a double. Each format's parameters are
/// derived from its dtype_info() row, so the table stays the one description of the formats.
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "pagecheck/reference/dtype.h"

namespace pagecheck {
namespace {

uint64_t bits_of(double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// The parameters of one fp8 format, derived from its table row.
struct Fp8Format {
  int mantissa = 0;       ///< stored mantissa bits M (the row's precision minus the implicit bit)
  int bias = 0;           ///< exponent bias: the smallest normal is 2^(1 - bias)
  int max_code = 0;       ///< magnitude code of the largest finite value (0x7e, 0x7b)
  bool infinity = false;  ///< max_code + 1 is infinity (E5M2); otherwise every code above is NaN
};

/// The magnitude code of |value| on the format's grid, rounded to nearest even, without
/// saturation (codes above max_code mean "overflowed"). `bits` is the double's bit pattern,
/// finite and non-zero magnitudes only.
int64_t unsaturated_code(int mantissa, int bias, uint64_t bits) {
  const int64_t exponent_field = static_cast<int64_t>((bits >> 52) & 0x7ff);
  if (exponent_field == 0) return 0;  // double subnormals lie far below every fp8 subnormal
  const uint64_t significand = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  const int64_t exponent = exponent_field - 1023;  // value = significand * 2^(exponent - 52)
  const int64_t biased = exponent + bias;          // the fp8 exponent field if normal
  // Keep M + 1 significant bits (normal) or fewer, down to the fixed grid 2^(1 - bias - M)
  // of the subnormals.
  int64_t shift = 52 - mantissa + (biased < 1 ? 1 - biased : 0);
  if (shift > 63) shift = 63;  // the significand < 2^53 then rounds to 0 either way
  const uint64_t kept = significand >> shift;
  const uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  const uint64_t rounded = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
  // Subnormal: the code is the rounded multiple of the grid (2^M = the smallest normal).
  // Normal: code = (biased << M) + rounded - 2^M; a carry to 2^(M+1) moves into the exponent.
  if (biased < 1) return static_cast<int64_t>(rounded);
  return ((biased - 1) << mantissa) + static_cast<int64_t>(rounded);
}

Fp8Format derive_format(const DTypeInfo& row) {
  Fp8Format f;
  f.mantissa = row.mantissa_bits - 1;
  f.bias = 1 - std::ilogb(row.min_normal);
  f.max_code = static_cast<int>(unsaturated_code(f.mantissa, f.bias, bits_of(row.max_finite)));
  f.infinity = ((f.max_code + 1) & ((1 << f.mantissa) - 1)) == 0;
  return f;
}

/// The format of an fp8 dtype; throws std::invalid_argument naming a non-fp8 dtype.
const Fp8Format& format_of(DType dtype) {
  static const Fp8Format e4m3 = derive_format(dtype_info(DType::kFloat8E4M3));
  static const Fp8Format e5m2 = derive_format(dtype_info(DType::kFloat8E5M2));
  if (dtype == DType::kFloat8E4M3) return e4m3;
  if (dtype == DType::kFloat8E5M2) return e5m2;
  throw std::invalid_argument(std::string("dtype: ") + dtype_name(dtype) + " is not an fp8 dtype");
}

/// The canonical NaN code of both formats (S = 0, every other bit set).
constexpr uint8_t kNaNCode = 0x7f;

}  // namespace

uint8_t quantize_fp8(DType dtype, double value) {
  const Fp8Format& f = format_of(dtype);
  if (std::isnan(value)) return kNaNCode;
  const uint64_t bits = bits_of(value);
  const uint8_t sign = static_cast<uint8_t>((bits >> 63) << 7);
  if (std::isinf(value)) return sign | static_cast<uint8_t>(f.max_code);  // saturate
  int64_t code = unsaturated_code(f.mantissa, f.bias, bits);
  if (code > f.max_code) code = f.max_code;  // saturate beyond the largest finite value
  return sign | static_cast<uint8_t>(code);
}

double dequantize_fp8(DType dtype, uint8_t code) {
  const Fp8Format& f = format_of(dtype);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int magnitude = code & 0x7f;
  if (magnitude > f.max_code) {
    if (f.infinity && magnitude == f.max_code + 1)
      return sign * std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  const int exponent_field = magnitude >> f.mantissa;
  const int mantissa = magnitude & ((1 << f.mantissa) - 1);
  if (exponent_field == 0) return sign * std::ldexp(mantissa, 1 - f.bias - f.mantissa);
  return sign * std::ldexp((1 << f.mantissa) + mantissa, exponent_field - f.bias - f.mantissa);
}

}  // namespace pagecheck
