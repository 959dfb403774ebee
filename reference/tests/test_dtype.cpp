/// Storage dtypes: the table agrees with the formats it describes, names parse, every float16 /
/// bfloat16 bit pattern round-trips, and stores round to nearest even from double in one step
/// (no double rounding through float). fp8 codes are tested in test_fp8.cpp.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

#include "pagecheck/reference/dtype.h"

namespace pagecheck {
namespace {

uint16_t bits16(DType dtype, double value) {
  std::byte out[2];
  store_element(dtype, out, 0, value);
  uint16_t bits;
  std::memcpy(&bits, out, 2);
  return bits;
}

double from_bits16(DType dtype, uint16_t bits) {
  std::byte in[2];
  std::memcpy(in, &bits, 2);
  return load_element(dtype, in, 0);
}

/// The value of the bit pattern `bits` of an element of `dtype`, through load_element.
double value_of_bits(DType dtype, uint32_t bits) {
  std::byte in[4];
  std::memcpy(in, &bits, 4);  // little-endian: the low bytes are the element
  return load_element(dtype, in, 0);
}

TEST(DType, TableRowsAreInEnumOrderAndMatchTheFormats) {
  const auto& rows = all_dtypes();
  ASSERT_EQ(rows.size(), 5u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(rows[i].dtype), i) << rows[i].name;
    EXPECT_EQ(&dtype_info(rows[i].dtype), &rows[i]);
    EXPECT_EQ(dtype_size(rows[i].dtype), rows[i].bytes);
    EXPECT_EQ(dtype_x(rows[i].dtype), 16 / static_cast<int64_t>(rows[i].bytes));
    EXPECT_STREQ(dtype_name(rows[i].dtype), rows[i].name);
    EXPECT_EQ(rows[i].fp8, rows[i].bytes == 1) << rows[i].name;
    EXPECT_EQ(rows[i].query_dtype, !rows[i].fp8) << rows[i].name;
    EXPECT_EQ(rows[i].hdf5 == Hdf5Storage::kIeeeFloat,
              rows[i].dtype == DType::kFloat32 || rows[i].dtype == DType::kFloat16);
    // Poison patterns are NaN in their own dtype, and the two differ.
    EXPECT_TRUE(std::isnan(value_of_bits(rows[i].dtype, rows[i].poison_bits))) << rows[i].name;
    EXPECT_TRUE(std::isnan(value_of_bits(rows[i].dtype, rows[i].output_poison_bits)))
        << rows[i].name;
    EXPECT_NE(rows[i].poison_bits, rows[i].output_poison_bits) << rows[i].name;
    if (rows[i].bytes < 4) {  // no bits beyond the element's width
      EXPECT_EQ(rows[i].poison_bits >> (8 * rows[i].bytes), 0u) << rows[i].name;
      EXPECT_EQ(rows[i].output_poison_bits >> (8 * rows[i].bytes), 0u) << rows[i].name;
    }
  }
  // The 32-bit float row against the C++ limits; the 16-bit rows against their bit patterns.
  EXPECT_EQ(dtype_info(DType::kFloat32).max_finite, std::numeric_limits<float>::max());
  EXPECT_EQ(dtype_info(DType::kFloat32).min_normal, std::numeric_limits<float>::min());
  EXPECT_EQ(dtype_info(DType::kFloat32).mantissa_bits, std::numeric_limits<float>::digits);
  EXPECT_EQ(dtype_info(DType::kFloat16).max_finite, value_of_bits(DType::kFloat16, 0x7bff));
  EXPECT_EQ(dtype_info(DType::kFloat16).min_normal, value_of_bits(DType::kFloat16, 0x0400));
  EXPECT_EQ(dtype_info(DType::kBFloat16).max_finite, value_of_bits(DType::kBFloat16, 0x7f7f));
  EXPECT_EQ(dtype_info(DType::kBFloat16).min_normal, value_of_bits(DType::kBFloat16, 0x0080));
  // Precision: 1 + 2^-(p-1) is the next value after 1, 1 + 2^-p rounds back to 1 (a tie).
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3, DType::kFloat8E5M2}) {
    const int p = dtype_info(d).mantissa_bits;
    std::byte out[2];
    store_element(d, out, 0, 1.0 + std::ldexp(1.0, 1 - p));
    EXPECT_EQ(load_element(d, out, 0), 1.0 + std::ldexp(1.0, 1 - p)) << dtype_name(d);
    store_element(d, out, 0, 1.0 + std::ldexp(1.0, -p));
    EXPECT_EQ(load_element(d, out, 0), 1.0) << dtype_name(d);
  }
  EXPECT_THROW(dtype_info(static_cast<DType>(5)), std::invalid_argument);
  EXPECT_THROW(dtype_info(static_cast<DType>(-1)), std::invalid_argument);
}

TEST(DType, NamesParseAndUnknownNamesAreNamed) {
  for (const DTypeInfo& row : all_dtypes()) {
    EXPECT_EQ(parse_dtype(row.name), row.dtype);
    EXPECT_EQ(parse_dtype(row.short_name), row.dtype);
  }
  EXPECT_EQ(parse_dtype("fp16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("half"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("fp32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("e4m3fn"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("float8_e5m2"), DType::kFloat8E5M2);
  try {
    parse_dtype("fp8");
    ADD_FAILURE() << "fp8 accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fp8'"), std::string::npos) << what;
    for (const DTypeInfo& row : all_dtypes()) {
      EXPECT_NE(what.find(row.name), std::string::npos) << what;
    }
  }
}

TEST(DType, EverySixteenBitPatternRoundTrips) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    int64_t nans = 0;
    for (uint32_t b = 0; b < 65536; ++b) {
      const uint16_t bits = static_cast<uint16_t>(b);
      const double value = from_bits16(dtype, bits);
      if (std::isnan(value)) {
        ++nans;
        EXPECT_TRUE(std::isnan(from_bits16(dtype, bits16(dtype, value)))) << std::hex << b;
      } else {
        ASSERT_EQ(bits16(dtype, value), bits) << dtype_name(dtype) << " 0x" << std::hex << b;
      }
    }
    // 2 * (2^mantissa_bits - 1) NaN patterns: float16 has 10 mantissa bits, bfloat16 7.
    EXPECT_EQ(nans, dtype == DType::kFloat16 ? 2 * 1023 : 2 * 127) << dtype_name(dtype);
  }
}

TEST(DType, Float32RoundTripsAndRoundsOnce) {
  std::byte out[4];
  for (float f : {0.0f, -0.0f, 1.5f, -3.25e-40f, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity()}) {
    store_element(DType::kFloat32, out, 0, f);
    EXPECT_EQ(load_element(DType::kFloat32, out, 0), static_cast<double>(f));
  }
  store_element(DType::kFloat32, out, 0, 1.0 + 0x1p-24);  // tie: to even (1)
  EXPECT_EQ(load_element(DType::kFloat32, out, 0), 1.0);
  store_element(DType::kFloat32, out, 0, 1.0 + 0x1p-24 + 0x1p-50);  // above the tie
  EXPECT_EQ(load_element(DType::kFloat32, out, 0), 1.0 + 0x1p-23);
}

TEST(DType, Float16TiesToEvenAndNoDoubleRounding) {
  const DType f16 = DType::kFloat16;
  EXPECT_EQ(bits16(f16, 1.0 + 0x1p-11), 0x3c00);            // tie -> even (1)
  EXPECT_EQ(bits16(f16, 1.0 + 3 * 0x1p-11), 0x3c02);        // tie -> even (1 + 2^-9)
  EXPECT_EQ(bits16(f16, 1.0 + 0x1p-11 + 0x1p-40), 0x3c01);  // just above: up
  EXPECT_EQ(bits16(f16, 1.0 + 0x1p-11 - 0x1p-40), 0x3c00);  // just below: down
  EXPECT_EQ(bits16(f16, 65504.0), 0x7bff);                  // max
  EXPECT_EQ(bits16(f16, 65519.99), 0x7bff);                 // below the overflow tie
  EXPECT_EQ(bits16(f16, 65520.0), 0x7c00);                  // tie -> even = infinity
  EXPECT_EQ(bits16(f16, -1e300), 0xfc00);                   // -inf
  EXPECT_EQ(bits16(f16, 0x1p-25), 0x0000);                  // subnormal tie -> 0
  EXPECT_EQ(bits16(f16, 0x1p-25 + 0x1p-60), 0x0001);        // just above: min subnormal
  EXPECT_EQ(bits16(f16, 3 * 0x1p-25), 0x0002);              // tie -> even
  EXPECT_EQ(bits16(f16, -0.0), 0x8000);                     // signed zero kept
  EXPECT_EQ(bits16(f16, 1e-300), 0x0000);
  EXPECT_TRUE(std::isnan(from_bits16(f16, bits16(f16, std::nan("")))));
}

TEST(DType, BFloat16TiesToEvenAndNoDoubleRounding) {
  const DType bf16 = DType::kBFloat16;
  EXPECT_EQ(bits16(bf16, 1.0 + 0x1p-8), 0x3f80);            // tie -> even (1)
  EXPECT_EQ(bits16(bf16, 1.0 + 3 * 0x1p-8), 0x3f82);        // tie -> even
  EXPECT_EQ(bits16(bf16, 1.0 + 0x1p-8 + 0x1p-30), 0x3f81);  // float would round to the tie
  EXPECT_EQ(bits16(bf16, 1.0 + 0x1p-8 - 0x1p-30), 0x3f80);
  EXPECT_EQ(bits16(bf16, 0x1p-134 + 0x1p-160), 0x0001);  // subnormal, above the tie
  EXPECT_EQ(bits16(bf16, 0x1p-134), 0x0000);             // subnormal tie -> 0
  EXPECT_EQ(bits16(bf16, 3.5e38), 0x7f80);               // overflow -> inf
  EXPECT_EQ(bits16(bf16, -0.0), 0x8000);
  EXPECT_TRUE(std::isnan(from_bits16(bf16, bits16(bf16, -std::nan("")))));
}

/// Independent check of a store: the stored value v is nearest to x among v and its two
/// neighbours, and on an exact tie it is the one with an even last bit.
void check_nearest_even(DType dtype, double x) {
  const uint16_t bits = bits16(dtype, x);
  const double v = from_bits16(dtype, bits);
  if (std::isinf(v)) return;  // overflow is covered by the fixed cases
  RC_ASSERT(!std::isnan(v));
  for (int step : {-1, 1}) {
    const uint16_t nb = static_cast<uint16_t>(bits + step);
    const double n = from_bits16(dtype, nb);
    if (std::isnan(n) || std::isinf(n) || ((nb ^ bits) & 0x8000)) continue;
    const double mid = 0.5 * (v + n);  // exact: both have few significant bits
    if (x == mid) {
      RC_ASSERT((bits & 1) == 0);
    } else {
      RC_ASSERT(std::fabs(x - v) < std::fabs(x - n));
    }
  }
}

RC_GTEST_PROP(DType, StoresRoundToNearestEvenFromDouble, ()) {
  const DType dtype = *rc::gen::element(DType::kFloat16, DType::kBFloat16);
  // A representable value, nudged to just around the midpoint above it by a tiny offset.
  const uint16_t base = *rc::gen::inRange<uint16_t>(0, dtype == DType::kFloat16 ? 0x7bff : 0x7f7f);
  const double lo = from_bits16(dtype, base), hi = from_bits16(dtype, base + 1);
  const double mid = 0.5 * (lo + hi);
  const int exponent = *rc::gen::inRange(20, 60);
  const int sign = *rc::gen::element(-1, 0, 1);
  const double x = mid + sign * std::ldexp(std::fabs(mid), -exponent);
  check_nearest_even(dtype, x);
  check_nearest_even(dtype, -x);
  check_nearest_even(dtype, *rc::gen::arbitrary<double>());
}

#ifdef __FLT16_MAX__
TEST(DType, Float16StoreMatchesTheCompilersFloat16) {
  // _Float16 conversions from double are correctly rounded by the compiler runtime.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint64_t raw = rng();
    double x;
    std::memcpy(&x, &raw, sizeof x);
    int ignored = 0;
    x = std::ldexp(std::frexp(x, &ignored) * 2, static_cast<int>(rng() % 50) - 30);
    if (std::isnan(x)) continue;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(bits16(DType::kFloat16, x), expected) << std::hexfloat << x;
  }
}
#endif

}  // namespace
}  // namespace pagecheck
