/// Cache copies over every cache kind, padding, combined K/V and KV dtype: gather writes each
/// mapped row from its slot (raw bytes, or code * scale rounded once to the row dtype), reshape
/// writes each mapped slot (raw bytes, or the fp8 code of value / scale), and neither changes
/// any other byte (skipped rows, unmapped slots, padding, the other tensor). The scale
/// arithmetic is pinned to float32 by inputs where float32 and exact arithmetic differ.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "copy_problem.h"
#include "pagecheck/reference/cache_copy.h"

namespace pagecheck {
namespace test {
inline void showValue(const CopyCase& c, std::ostream& os) {
  os << ref::cache_kind_name(c.kind) << " " << dtype_name(c.dtype) << " <-> "
     << dtype_name(c.cache_dtype) << " " << ref::scale_kind_name(c.scale_kind) << " blocks "
     << c.shape.num_blocks << " kv " << c.shape.num_kv_heads << " head " << c.shape.head_size
     << " block " << c.shape.block_size << (c.combined ? " combined" : "") << " pad k "
     << c.pad.key.block << "/" << c.pad.key.head << "/" << c.pad.key.slot << " v "
     << c.pad.value.block << "/" << c.pad.value.head << "/" << c.pad.value.slot << " tokens "
     << c.num_tokens << " token_pad " << c.token_pad << " skip " << c.skip_fraction
     << (c.dequantize ? " dequantize" : "") << " seed " << c.seed;
}
}  // namespace test

namespace {

using ref::CacheCopyProblem;
using ref::CacheKind;
using ref::ScaleKind;
using test::CopyCase;

/// A random copy case: raw copies of every dtype, or an fp8 cache with 16/32-bit rows.
rc::Gen<CopyCase> gen_copy_case() {
  return rc::gen::exec([] {
    CopyCase c;
    c.kind = *rc::gen::element(CacheKind::kXSplit, CacheKind::kNHD, CacheKind::kHND);
    c.cache_dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                      DType::kFloat8E4M3, DType::kFloat8E5M2);
    const bool fp8 = dtype_info(c.cache_dtype).fp8;
    const bool convert = fp8 && *rc::gen::arbitrary<bool>();
    c.dtype = convert ? *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16)
                      : c.cache_dtype;
    c.dequantize = convert;
    if (fp8) c.scale_kind = *rc::gen::element(ScaleKind::kPerTensor, ScaleKind::kPerKvHead);
    const int64_t x = dtype_x(c.cache_dtype);
    c.shape.num_blocks = *rc::gen::inRange<int64_t>(1, 5);
    c.shape.num_kv_heads = *rc::gen::inRange<int64_t>(1, 4);
    c.shape.head_size = c.kind == CacheKind::kXSplit ? x * *rc::gen::inRange<int64_t>(1, 4)
                                                     : *rc::gen::inRange<int64_t>(1, 40);
    c.shape.block_size = *rc::gen::element<int64_t>(1, 3, 8, 16);
    const auto gen_pad = [] {
      return ref::TensorPadding{*rc::gen::element<int64_t>(0, 0, 5),
                                *rc::gen::element<int64_t>(0, 0, 2),
                                *rc::gen::element<int64_t>(0, 0, 1)};
    };
    c.combined = *rc::gen::arbitrary<bool>();
    c.pad.key = gen_pad();
    c.pad.value = c.combined ? c.pad.key : gen_pad();
    c.num_tokens = *rc::gen::inRange<int64_t>(0, c.shape.num_blocks * c.shape.block_size + 1);
    c.token_pad = *rc::gen::element<int64_t>(0, 0, 1, 5);
    c.skip_fraction = *rc::gen::element(0.0, 0.25, 1.0);
    c.seed = *rc::gen::noShrink(rc::gen::arbitrary<uint64_t>());
    return c;
  });
}

/// Where element (block, head, slot, dim) of K (tensor 0) or V (1) lives: buffer and index.
std::byte* cache_element(CacheCopyProblem& p, int tensor, int64_t b, int64_t h, int64_t s,
                         int64_t d) {
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t size = static_cast<int64_t>(dtype_size(c.dtype));
  if (tensor == 0) return p.key_cache.data() + c.key_at(b, h, s, d) * size;
  std::byte* base = c.combined ? p.key_cache.data() : p.value_cache.data();
  return base + c.value_at(b, h, s, d) * size;
}

/// Element (t, h, d) of the contiguous key (tensor 0) or value (1).
std::byte* token_element(CacheCopyProblem& p, int tensor, int64_t t, int64_t h, int64_t d) {
  const int64_t size = static_cast<int64_t>(dtype_size(p.dtype));
  const ref::TokenLayout& layout = tensor == 0 ? p.key_layout : p.value_layout;
  return (tensor == 0 ? p.key : p.value).data() + layout.offset(t, h, d) * size;
}

float scale(const CacheCopyProblem& p, int tensor, int64_t head) {
  const std::vector<float>& s = tensor == 0 ? p.k_scale : p.v_scale;
  return p.cache.scale_at(s, head);
}

/// Calls fn(tensor, t, h, d, block, slot) for every element of every mapped row.
template <typename Fn>
void for_each_mapped(const CacheCopyProblem& p, Fn fn) {
  for (int tensor = 0; tensor < 2; ++tensor)
    for (int64_t t = 0; t < p.num_tokens(); ++t) {
      if (p.slot_mapping[t] < 0) continue;
      const int64_t block = p.slot_mapping[t] / p.cache.block_size;
      const int64_t slot = p.slot_mapping[t] % p.cache.block_size;
      for (int64_t h = 0; h < p.cache.num_kv_heads; ++h)
        for (int64_t d = 0; d < p.cache.head_size; ++d) fn(tensor, t, h, d, block, slot);
    }
}

/// Byte-wise: `after` equals `before` except inside the marked elements.
void assert_unchanged_outside(const std::vector<std::byte>& before,
                              const std::vector<std::byte>& after, const std::vector<bool>& mark) {
  RC_ASSERT(before.size() == after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (!mark[i]) RC_ASSERT(before[i] == after[i]);
  }
}

RC_GTEST_PROP(CacheCopy, GatherWritesEachMappedRowAndNothingElse, ()) {
  const CopyCase c = *gen_copy_case();
  RC_TAG(ref::cache_kind_name(c.kind), c.dequantize ? "dequantize" : "raw");
  CacheCopyProblem p = test::make_copy(c);
  const CacheCopyProblem before = p;
  ref::gather_cached_kv(p);
  RC_ASSERT(p.key_cache == before.key_cache);
  RC_ASSERT(p.value_cache == before.value_cache);
  CacheCopyProblem cache_view = before;  // reads the cache through the test's own accessor
  std::vector<bool> key_written(p.key.size()), value_written(p.value.size());
  const std::size_t size = dtype_size(p.dtype);
  for_each_mapped(p, [&](int tensor, int64_t t, int64_t h, int64_t d, int64_t b, int64_t s) {
    const std::byte* source = cache_element(cache_view, tensor, b, h, s, d);
    std::byte expected[4];
    if (!p.dequantize) {
      std::memcpy(expected, source, size);
    } else {
      const float code = static_cast<float>(load_element(p.cache.dtype, source, 0));
      store_element(p.dtype, expected, 0, code * scale(p, tensor, h));
    }
    std::byte* actual = token_element(p, tensor, t, h, d);
    RC_ASSERT(std::memcmp(actual, expected, size) == 0);
    std::vector<bool>& mark = tensor == 0 ? key_written : value_written;
    const std::size_t at =
        static_cast<std::size_t>(actual - (tensor == 0 ? p.key : p.value).data());
    for (std::size_t i = 0; i < size; ++i) mark[at + i] = true;
  });
  assert_unchanged_outside(before.key, p.key, key_written);
  assert_unchanged_outside(before.value, p.value, value_written);
}

RC_GTEST_PROP(CacheCopy, ReshapeWritesEachMappedSlotAndNothingElse, ()) {
  const CopyCase c = *gen_copy_case();
  RC_TAG(ref::cache_kind_name(c.kind), c.combined ? "combined" : "separate",
         c.dtype == c.cache_dtype ? "raw" : "quantize");
  CacheCopyProblem p = test::make_copy(c);
  const CacheCopyProblem before = p;
  ref::reshape_and_cache(p);
  RC_ASSERT(p.key == before.key);
  RC_ASSERT(p.value == before.value);
  std::vector<bool> key_written(p.key_cache.size()), value_written(p.value_cache.size());
  const std::size_t size = dtype_size(p.cache.dtype);
  CacheCopyProblem rows = before;
  for_each_mapped(p, [&](int tensor, int64_t t, int64_t h, int64_t d, int64_t b, int64_t s) {
    const std::byte* source = token_element(rows, tensor, t, h, d);
    std::byte expected[4];
    if (p.dtype == p.cache.dtype) {
      std::memcpy(expected, source, size);
    } else {
      const float value = static_cast<float>(load_element(p.dtype, source, 0));
      expected[0] = std::byte{quantize_fp8(p.cache.dtype, value / scale(p, tensor, h))};
    }
    std::byte* actual = cache_element(p, tensor, b, h, s, d);
    RC_ASSERT(std::memcmp(actual, expected, size) == 0);
    const bool in_key = tensor == 0 || p.cache.combined;
    std::vector<bool>& mark = in_key ? key_written : value_written;
    const std::size_t at =
        static_cast<std::size_t>(actual - (in_key ? p.key_cache : p.value_cache).data());
    for (std::size_t i = 0; i < size; ++i) mark[at + i] = true;
  });
  assert_unchanged_outside(before.key_cache, p.key_cache, key_written);
  assert_unchanged_outside(before.value_cache, p.value_cache, value_written);
}

RC_GTEST_PROP(CacheCopy, RawGatherAfterReshapeReturnsTheRows, ()) {
  CopyCase c = *gen_copy_case();
  c.dtype = c.cache_dtype;
  c.dequantize = false;
  CacheCopyProblem p = test::make_copy(c);
  const CacheCopyProblem written = p;
  ref::reshape_and_cache(p);
  std::mt19937_64 rng(c.seed + 1);  // overwrite the rows before gathering them back
  p.key = test::random_bytes(rng, static_cast<int64_t>(p.key.size()));
  p.value = test::random_bytes(rng, static_cast<int64_t>(p.value.size()));
  CacheCopyProblem expected = written;
  ref::gather_cached_kv(p);
  for_each_mapped(p, [&](int tensor, int64_t t, int64_t h, int64_t d, int64_t, int64_t) {
    RC_ASSERT(std::memcmp(token_element(p, tensor, t, h, d),
                          token_element(expected, tensor, t, h, d), dtype_size(p.dtype)) == 0);
  });
}

TEST(CacheCopy, CopiesAreBitExactIncludingNaNPayloadsAndSignedZeros) {
  CopyCase c;
  c.num_tokens = 1;
  CacheCopyProblem p = test::make_copy(c);
  const uint16_t patterns[] = {0x7d01, 0xfe77, 0x8000, 0x0001, 0x7c00};  // sNaN, qNaN, -0, ...
  for (int64_t d = 0; d < 5; ++d) std::memcpy(token_element(p, 0, 0, 0, d), &patterns[d], 2);
  ref::reshape_and_cache(p);
  const int64_t slot = p.slot_mapping[0];
  for (int64_t d = 0; d < 5; ++d) {
    uint16_t bits = 0;
    std::memcpy(&bits, cache_element(p, 0, slot / 16, 0, slot % 16, d), 2);
    EXPECT_EQ(bits, patterns[d]) << "dim " << d;
  }
}

TEST(CacheCopy, DequantizeMultipliesInFloat32) {
  // Find a code and a scale whose float32 product rounds to a float16 tie that the exact
  // product is not on: the float32 order of operations (engines' kernels) then differs from
  // exact arithmetic, and the reference must follow float32.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(1.0f, 2.0f);
  const DType e4m3 = DType::kFloat8E4M3;
  for (int attempt = 0; attempt < 2000000; ++attempt) {
    const uint8_t code = static_cast<uint8_t>(0x30 + rng() % 0x30);
    const float s = unit(rng);
    const double code_value = dequantize_fp8(e4m3, code);
    std::byte via_float[2], exact[2];
    store_element(DType::kFloat16, via_float, 0, static_cast<float>(code_value) * s);
    store_element(DType::kFloat16, exact, 0, code_value * static_cast<double>(s));
    if (std::memcmp(via_float, exact, 2) == 0) continue;
    CopyCase c;
    c.kind = CacheKind::kNHD;
    c.cache_dtype = e4m3;
    c.scale_kind = ScaleKind::kPerTensor;
    c.dequantize = true;
    c.num_tokens = 1;
    CacheCopyProblem p = test::make_copy(c);
    p.k_scale[0] = s;
    const int64_t slot = p.slot_mapping[0];
    *cache_element(p, 0, slot / 16, 1, slot % 16, 3) = std::byte{code};
    ref::gather_cached_kv(p);
    EXPECT_EQ(std::memcmp(token_element(p, 0, 0, 1, 3), via_float, 2), 0);
    return;
  }
  FAIL() << "no input found where float32 and exact products round differently";
}

TEST(CacheCopy, QuantizeDividesInFloat32) {
  // A float32 value whose float32 quotient by the scale is exactly an e4m3 midpoint while the
  // exact quotient is not: quantize(float32 quotient) and quantize(exact quotient) differ.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> unit(1.0f, 2.0f);
  const DType e4m3 = DType::kFloat8E4M3;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    const double mid =
        0.5 * (dequantize_fp8(e4m3, 0x38 + attempt % 8) + dequantize_fp8(e4m3, 0x39 + attempt % 8));
    const float s = unit(rng);
    const float v = static_cast<float>(mid * s);
    const uint8_t via_float = quantize_fp8(e4m3, v / s);
    if (via_float == quantize_fp8(e4m3, static_cast<double>(v) / s)) continue;
    CopyCase c;
    c.kind = CacheKind::kHND;
    c.dtype = DType::kFloat32;
    c.cache_dtype = e4m3;
    c.scale_kind = ScaleKind::kPerKvHead;
    c.num_tokens = 1;
    CacheCopyProblem p = test::make_copy(c);
    p.v_scale[1] = s;
    std::memcpy(token_element(p, 1, 0, 1, 5), &v, 4);
    ref::reshape_and_cache(p);
    const int64_t slot = p.slot_mapping[0];
    EXPECT_EQ(std::to_integer<uint8_t>(*cache_element(p, 1, slot / 16, 1, slot % 16, 5)),
              via_float);
    return;
  }
  FAIL() << "no input found where float32 and exact quotients quantize differently";
}

TEST(CacheCopy, RawGatherNeedsTheCacheDtype) {
  CopyCase c;
  c.cache_dtype = DType::kFloat8E5M2;
  c.scale_kind = ScaleKind::kPerTensor;
  c.dequantize = false;  // but dtype float16 != cache dtype
  CacheCopyProblem p = test::make_copy(c);
  const CacheCopyProblem before = p;
  try {
    ref::gather_cached_kv(p);
    ADD_FAILURE() << "raw gather into another dtype accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dequantize = false"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(p.key == before.key && p.value == before.value);
  EXPECT_NO_THROW(ref::reshape_and_cache(p));  // reshape always converts
}

}  // namespace
}  // namespace pagecheck
