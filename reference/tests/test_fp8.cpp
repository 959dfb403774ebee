/// fp8 codes: all 256 codes of E4M3 and E5M2 decode to the values their bit fields define
/// (computed here from the OCP definitions, independently of the table), every finite code
/// survives quantize(dequantize(c)), midpoints tie to the even code, values beyond the largest
/// finite value (and infinities) saturate, NaN gives 0x7f, and random doubles quantize to the
/// nearest code found by a search over all codes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>

#include "pagecheck/reference/dtype.h"

namespace pagecheck {
namespace {

/// The OCP definition of one format, written out here (not read from the table).
struct Format {
  DType dtype;
  int exponent_bits;
  int mantissa_bits;  ///< stored bits
  int bias;
  bool ieee_specials;  ///< E5M2: exponent all ones = inf / NaN; E4M3: only S.1111.111 is NaN
};
constexpr Format kE4M3{DType::kFloat8E4M3, 4, 3, 7, false};
constexpr Format kE5M2{DType::kFloat8E5M2, 5, 2, 15, true};
void PrintTo(const Format& f, std::ostream* os) {
  *os << dtype_name(f.dtype);
}

/// The value of `code` by its fields: (-1)^s 2^(e - bias) (1 + m / 2^M), subnormals
/// (-1)^s 2^(1 - bias) (m / 2^M).
double expected_value(const Format& f, int code) {
  const int sign = code >> 7;
  const int e = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int m = code & ((1 << f.mantissa_bits) - 1);
  const int e_max = (1 << f.exponent_bits) - 1;
  const double s = sign ? -1.0 : 1.0;
  const double fraction = m / std::pow(2.0, f.mantissa_bits);
  if (f.ieee_specials && e == e_max) {
    return m == 0 ? s * std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  }
  if (!f.ieee_specials && e == e_max && m == (1 << f.mantissa_bits) - 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (e == 0) return s * std::pow(2.0, 1 - f.bias) * fraction;
  return s * std::pow(2.0, e - f.bias) * (1.0 + fraction);
}

class Fp8 : public ::testing::TestWithParam<Format> {};

TEST_P(Fp8, EveryCodeDecodesToItsFieldValue) {
  const Format f = GetParam();
  int nans = 0, infinities = 0;
  for (int code = 0; code < 256; ++code) {
    const double expected = expected_value(f, code);
    const double actual = dequantize_fp8(f.dtype, static_cast<uint8_t>(code));
    const std::byte stored{static_cast<uint8_t>(code)};
    const double loaded = load_element(f.dtype, &stored, 0);
    if (std::isnan(expected)) {
      ++nans;
      EXPECT_TRUE(std::isnan(actual)) << "code 0x" << std::hex << code;
      EXPECT_TRUE(std::isnan(loaded)) << "code 0x" << std::hex << code;
    } else {
      infinities += std::isinf(expected);
      EXPECT_EQ(actual, expected) << "code 0x" << std::hex << code;
      EXPECT_EQ(loaded, expected) << "code 0x" << std::hex << code;
      EXPECT_EQ(std::signbit(actual), code >= 0x80) << "code 0x" << std::hex << code;
    }
  }
  EXPECT_EQ(nans, f.ieee_specials ? 6 : 2);
  EXPECT_EQ(infinities, f.ieee_specials ? 2 : 0);
}

TEST_P(Fp8, TableRowAgreesWithTheDefinition) {
  const Format f = GetParam();
  const DTypeInfo& row = dtype_info(f.dtype);
  const int max_code = f.ieee_specials ? 0x7b : 0x7e;
  EXPECT_EQ(row.max_finite, expected_value(f, max_code));
  EXPECT_EQ(row.min_normal, expected_value(f, 1 << f.mantissa_bits));
  EXPECT_EQ(row.mantissa_bits, f.mantissa_bits + 1);
  EXPECT_TRUE(std::isnan(expected_value(f, static_cast<int>(row.poison_bits))));
  EXPECT_TRUE(std::isnan(expected_value(f, static_cast<int>(row.output_poison_bits))));
}

TEST_P(Fp8, EveryFiniteCodeRoundTrips) {
  const Format f = GetParam();
  for (int code = 0; code < 256; ++code) {
    const double value = expected_value(f, code);
    if (!std::isfinite(value)) continue;
    EXPECT_EQ(quantize_fp8(f.dtype, value), code) << "code 0x" << std::hex << code;
    std::byte stored{};
    store_element(f.dtype, &stored, 0, value);
    EXPECT_EQ(std::to_integer<int>(stored), code) << "code 0x" << std::hex << code;
  }
  EXPECT_EQ(quantize_fp8(f.dtype, -0.0), 0x80);
  EXPECT_EQ(quantize_fp8(f.dtype, 0.0), 0x00);
}

TEST_P(Fp8, MidpointsTieToTheEvenCode) {
  const Format f = GetParam();
  int ties = 0;
  for (int sign : {0, 0x80}) {
    for (int code = sign; code < sign + 0x7f; ++code) {
      const double lo = expected_value(f, code), hi = expected_value(f, code + 1);
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const double mid = 0.5 * (lo + hi);  // exact: a few significant bits
      const int even = (code % 2 == 0) ? code : code + 1;
      EXPECT_EQ(quantize_fp8(f.dtype, mid), even) << "between 0x" << std::hex << code;
      // Just off the midpoint: the nearer neighbour.
      const double toward_hi = (hi - lo) * 0x1p-20;
      EXPECT_EQ(quantize_fp8(f.dtype, mid + toward_hi), code + 1) << "0x" << std::hex << code;
      EXPECT_EQ(quantize_fp8(f.dtype, mid - toward_hi), code) << "0x" << std::hex << code;
      ++ties;
    }
  }
  EXPECT_EQ(ties, 2 * (f.ieee_specials ? 0x7b : 0x7e));
}

TEST_P(Fp8, BeyondTheLargestFiniteValueSaturates) {
  const Format f = GetParam();
  const int max_code = f.ieee_specials ? 0x7b : 0x7e;
  const double max = expected_value(f, max_code);
  const double step = max - expected_value(f, max_code - 1);  // the top binade's spacing
  for (double v : {max, max + 0.5 * step, max + 0.5 * step + 1e-9, max + step, 2 * max, 1e30, 1e300,
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(quantize_fp8(f.dtype, v), max_code) << v;
    EXPECT_EQ(quantize_fp8(f.dtype, -v), 0x80 | max_code) << -v;
  }
  EXPECT_EQ(quantize_fp8(f.dtype, std::numeric_limits<double>::quiet_NaN()), 0x7f);
  EXPECT_EQ(quantize_fp8(f.dtype, -std::numeric_limits<double>::quiet_NaN()), 0x7f);
}

TEST_P(Fp8, TinyValuesRoundOnTheSubnormalGrid) {
  const Format f = GetParam();
  const double min_sub = expected_value(f, 1);
  EXPECT_EQ(quantize_fp8(f.dtype, 0.5 * min_sub), 0x00);                // tie -> even (0)
  EXPECT_EQ(quantize_fp8(f.dtype, 0.5 * min_sub * (1 + 1e-12)), 0x01);  // above the tie
  EXPECT_EQ(quantize_fp8(f.dtype, 1.5 * min_sub), 0x02);                // tie -> even
  EXPECT_EQ(quantize_fp8(f.dtype, -0.25 * min_sub), 0x80);              // signed zero
  EXPECT_EQ(quantize_fp8(f.dtype, 1e-300), 0x00);
  EXPECT_EQ(quantize_fp8(f.dtype, -std::numeric_limits<double>::denorm_min()), 0x80);
}

TEST(Fp8Codes, OnlyFp8DtypesHaveCodes) {
  EXPECT_THROW(quantize_fp8(DType::kFloat16, 1.0), std::invalid_argument);
  EXPECT_THROW(dequantize_fp8(DType::kFloat32, 0x38), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8, ::testing::Values(kE4M3, kE5M2), [](const auto& info) {
  return std::string(dtype_name(info.param.dtype));
});

/// The nearest finite code to x by a search over every code: ties go to the even code, and
/// beyond the largest finite value the largest finite value of x's sign.
int nearest_code(const Format& f, double x) {
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    const double v = expected_value(f, code);
    if (!std::isfinite(v) || std::signbit(v) != std::signbit(x)) continue;
    const double distance = std::fabs(v - x);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return best;
}

RC_GTEST_PROP(Fp8Property, RandomValuesQuantizeToTheNearestCode, ()) {
  const Format f = *rc::gen::element(kE4M3, kE5M2);
  const int exponent = *rc::gen::inRange(-22, 20);
  const double mantissa = *rc::gen::inRange(-(1 << 20), 1 << 20) / double(1 << 20);
  const double x = std::ldexp(mantissa, exponent);
  RC_TAG(dtype_name(f.dtype));
  RC_ASSERT(static_cast<int>(quantize_fp8(f.dtype, x)) == nearest_code(f, x));
}

}  // namespace
}  // namespace pagecheck
