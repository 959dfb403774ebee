/// Storage dtypes: sizes, names and exact conversions through Eigen::half / Eigen::bfloat16.
#include "pagecheck/reference/dtype.h"

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pagecheck {
namespace {

/// Narrows a double to float with round-to-odd: the float nearest toward zero, with the lowest
/// significand bit forced to 1 when the narrowing was inexact. Float has at least 13 more
/// significand bits than float16 and bfloat16 (also in their subnormal ranges), so a second
/// round-to-nearest-even step (done by Eigen) from this float gives exactly the correctly
/// rounded result of the original double. Plain double->float->half rounding does not: it
/// can land exactly on a float16 midpoint and then tie to even in the wrong direction, e.g.
/// 1 + 2^-11 + 2^-40 would become 1 instead of 1 + 2^-10. NaN and infinities pass unchanged.
float narrow_round_to_odd(double value) {
  float narrowed = static_cast<float>(value);  // round to nearest even
  if (!std::isfinite(value) || static_cast<double>(narrowed) == value) return narrowed;
  if (std::fabs(static_cast<double>(narrowed)) > std::fabs(value)) {
    narrowed = std::nextafter(narrowed, 0.0f);  // truncate toward zero (also from infinity)
  }
  uint32_t bits = 0;
  std::memcpy(&bits, &narrowed, sizeof bits);
  bits |= 1u;  // sticky bit: the value lies strictly between this float and the next one
  std::memcpy(&narrowed, &bits, sizeof bits);
  return narrowed;
}

uint16_t load_u16(const std::byte* base, int64_t index) {
  uint16_t bits = 0;
  std::memcpy(&bits, base + index * 2, sizeof bits);
  return bits;
}

void store_u16(std::byte* base, int64_t index, uint16_t bits) {
  std::memcpy(base + index * 2, &bits, sizeof bits);
}

}  // namespace

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
  }
  throw std::invalid_argument("dtype: unknown value " + std::to_string(static_cast<int>(dtype)));
}

int64_t dtype_x(DType dtype) {
  return 16 / static_cast<int64_t>(dtype_size(dtype));
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
  }
  return "unknown";
}

DType parse_dtype(std::string_view text) {
  if (text == "float32" || text == "fp32" || text == "f32") return DType::kFloat32;
  if (text == "float16" || text == "fp16" || text == "f16" || text == "half") {
    return DType::kFloat16;
  }
  if (text == "bfloat16" || text == "bf16") return DType::kBFloat16;
  throw std::invalid_argument("dtype: unknown name '" + std::string(text) +
                              "' (expected float32, float16 or bfloat16)");
}

double load_element(DType dtype, const std::byte* base, int64_t index) {
  switch (dtype) {
    case DType::kFloat32: {
      float value = 0;
      std::memcpy(&value, base + index * 4, sizeof value);
      return value;
    }
    case DType::kFloat16:
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(load_u16(base, index)));
    case DType::kBFloat16:
      return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(load_u16(base, index)));
  }
  throw std::invalid_argument("dtype: unknown value " + std::to_string(static_cast<int>(dtype)));
}

void store_element(DType dtype, std::byte* base, int64_t index, double value) {
  switch (dtype) {
    case DType::kFloat32: {
      const float narrowed = static_cast<float>(value);  // one rounding, nearest even
      std::memcpy(base + index * 4, &narrowed, sizeof narrowed);
      return;
    }
    case DType::kFloat16: {
      const Eigen::half half(narrow_round_to_odd(value));
      store_u16(base, index, Eigen::numext::bit_cast<uint16_t>(half));
      return;
    }
    case DType::kBFloat16: {
      const Eigen::bfloat16 bf(narrow_round_to_odd(value));
      store_u16(base, index, Eigen::numext::bit_cast<uint16_t>(bf));
      return;
    }
  }
  throw std::invalid_argument("dtype: unknown value " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace pagecheck
