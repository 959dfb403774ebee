/// CPU tests of the generic planted row's building blocks (pagecheck/verify/planted_row.h)
/// against the reference's own code: every float16 / bfloat16 pattern and every fp8 code decodes
/// to the reference's value, and the row's offsets and spans are the layout's for every kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"
#include "pagecheck/verify/planted_row.h"

namespace pagecheck {
namespace {

namespace planted = verify::planted;

/// Same value, or both NaN; the sign of zero counts.
void expect_same(double expected, float got, const char* what, int pattern) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(got)) << what << " 0x" << std::hex << pattern;
    return;
  }
  EXPECT_EQ(expected, static_cast<double>(got)) << what << " 0x" << std::hex << pattern;
  EXPECT_EQ(std::signbit(expected), std::signbit(got)) << what << " 0x" << std::hex << pattern;
}

TEST(PlantedRow, DecodesEvery16BitPatternAsTheReference) {
  for (int bits = 0; bits < 0x10000; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    std::byte raw[2];
    std::memcpy(raw, &h, sizeof h);
    expect_same(load_element(DType::kFloat16, raw, 0),
                planted::load_as_float(PC_DTYPE_FLOAT16, &h, 0), "float16", bits);
    expect_same(load_element(DType::kBFloat16, raw, 0),
                planted::load_as_float(PC_DTYPE_BFLOAT16, &h, 0), "bfloat16", bits);
  }
}

TEST(PlantedRow, DecodesEveryFp8CodeAsTheReference) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    expect_same(dequantize_fp8(DType::kFloat8E4M3, c),
                planted::load_as_float(PC_DTYPE_FP8_E4M3, &c, 0), "e4m3", code);
    expect_same(dequantize_fp8(DType::kFloat8E5M2, c),
                planted::load_as_float(PC_DTYPE_FP8_E5M2, &c, 0), "e5m2", code);
  }
}

pc_cache_strides strides_of(const ref::CacheTensorStrides& s) {
  return pc_cache_strides{s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
}

TEST(PlantedRow, OffsetsAndSpansAreTheLayoutsForEveryKind) {
  std::mt19937_64 rng(7);
  const ref::CacheShape shape{5, 3, 32, 8};
  const ref::TensorPadding pad{16, 8, 8};
  for (ref::CacheKind kind :
       {ref::CacheKind::kXSplit, ref::CacheKind::kNHD, ref::CacheKind::kHND}) {
    for (DType dtype : {DType::kFloat16, DType::kFloat8E4M3}) {
      for (bool padded : {false, true}) {
        SCOPED_TRACE(std::string(ref::cache_kind_name(kind)) + " " + dtype_name(dtype) +
                     (padded ? " padded" : ""));
        const ref::CachePadding padding =
            padded ? ref::CachePadding{pad, pad} : ref::CachePadding{};
        const ref::PagedCacheLayout c = ref::make_cache_layout(kind, dtype, shape, padding);
        const pc_cache_strides k = strides_of(c.key), v = strides_of(c.value);
        for (int i = 0; i < 500; ++i) {
          const int64_t b = rng() % 5, h = rng() % 3, s = rng() % 8, d = rng() % 32;
          EXPECT_EQ(planted::row_cache_offset(k, b, h, s, d, false), c.key_at(b, h, s, d));
          EXPECT_EQ(planted::row_cache_offset(v, b, h, s, d, false), c.value_at(b, h, s, d));
        }
        EXPECT_LE(planted::row_tensor_span(k, 5, 3, 8, 32), c.key_span());
        EXPECT_LE(planted::row_tensor_span(v, 5, 3, 8, 32), c.value_span());
        EXPECT_EQ(planted::row_tensor_span(k, 5, 3, 8, 32), c.key_at(4, 2, 7, 31) + 1);
        EXPECT_EQ(planted::row_tensor_span(v, 5, 3, 8, 32), c.value_at(4, 2, 7, 31) + 1);
        // The planted stride swap moves an NHD element with more than one head.
        if (kind == ref::CacheKind::kNHD) {
          EXPECT_NE(planted::row_cache_offset(k, 0, 1, 0, 0, true), c.key_at(0, 1, 0, 0));
        }
      }
    }
  }
}

}  // namespace
}  // namespace pagecheck
