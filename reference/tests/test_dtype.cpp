/// Storage dtypes: every float16 / bfloat16 bit pattern round-trips, stores round to nearest
/// even from double in one step (no double rounding through float), and the reference's fast
/// tile decoders agree with load_element on every bit pattern.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

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

TEST(DType, NamesSizesAndParsing) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_x(DType::kFloat32), 4);
  EXPECT_EQ(dtype_x(DType::kBFloat16), 8);
  EXPECT_STREQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(parse_dtype("fp16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("half"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("f32"), DType::kFloat32);
  try {
    parse_dtype("fp8");
    ADD_FAILURE() << "fp8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'fp8'"), std::string::npos) << e.what();
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
