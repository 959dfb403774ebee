/// Storage dtypes: the one table, names, and exact loads / correctly rounded stores (16-bit
/// floats through Eigen::half / Eigen::bfloat16, fp8 through fp8.cpp).
#include "pagecheck/reference/dtype.h"

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pagecheck {
namespace {

/// The table (docs/dtypes.md), in enum order (dtype_info indexes it). A function-local static,
/// so that other files' static initializers may already use it.
const std::vector<DTypeInfo>& table() {
  static const std::vector<DTypeInfo> rows{
      {DType::kFloat32, "float32", "f32", 4, 24, 3.4028234663852886e38, 0x1p-126, 0x7fc0dead,
       0xffc0beef, Hdf5Storage::kIeeeFloat, true, false},
      {DType::kFloat16, "float16", "f16", 2, 11, 65504.0, 0x1p-14, 0x7e5a, 0xfe33,
       Hdf5Storage::kIeeeFloat, true, false},
      {DType::kBFloat16, "bfloat16", "bf16", 2, 8, 3.3895313892515355e38, 0x1p-126, 0x7fda, 0xffb3,
       Hdf5Storage::kBits, true, false},
      {DType::kFloat8E4M3, "fp8_e4m3", "e4m3", 1, 4, 448.0, 0x1p-6, 0x7f, 0xff, Hdf5Storage::kBits,
       false, true},
      {DType::kFloat8E5M2, "fp8_e5m2", "e5m2", 1, 3, 57344.0, 0x1p-14, 0x7e, 0xfd,
       Hdf5Storage::kBits, false, true},
  };
  return rows;
}

/// Names parse_dtype accepts besides the canonical and short names of the table.
struct Alias {
  const char* text;
  DType dtype;
};
constexpr Alias kAliases[] = {
    {"fp32", DType::kFloat32},
    {"fp16", DType::kFloat16},
    {"half", DType::kFloat16},
    {"e4m3fn", DType::kFloat8E4M3},
    {"float8_e4m3fn", DType::kFloat8E4M3},
    {"float8_e5m2", DType::kFloat8E5M2},
};

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

const std::vector<DTypeInfo>& all_dtypes() {
  return table();
}

const DTypeInfo& dtype_info(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  if (static_cast<int32_t>(dtype) < 0 || index >= table().size()) {
    throw std::invalid_argument("dtype: unknown value " +
                                std::to_string(static_cast<int32_t>(dtype)));
  }
  return table()[index];
}

std::size_t dtype_size(DType dtype) {
  return dtype_info(dtype).bytes;
}

int64_t dtype_x(DType dtype) {
  return 16 / static_cast<int64_t>(dtype_size(dtype));
}

const char* dtype_name(DType dtype) {
  return dtype_info(dtype).name;
}

DType parse_dtype(std::string_view text) {
  for (const DTypeInfo& row : table()) {
    if (text == row.name || text == row.short_name) return row.dtype;
  }
  for (const Alias& alias : kAliases) {
    if (text == alias.text) return alias.dtype;
  }
  std::string expected;
  for (std::size_t i = 0; i < table().size(); ++i) {
    expected += (i == 0 ? "" : i + 1 == table().size() ? " or " : ", ");
    expected += table()[i].name;
  }
  throw std::invalid_argument("dtype: unknown name '" + std::string(text) + "' (expected " +
                              expected + ")");
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
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
      return dequantize_fp8(dtype, std::to_integer<uint8_t>(base[index]));
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
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
      base[index] = std::byte{quantize_fp8(dtype, value)};
      return;
  }
  throw std::invalid_argument("dtype: unknown value " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace pagecheck
