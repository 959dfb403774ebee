/// The built-in copy variants on every cache layout they declare (x-split, NHD, HND; K and V
/// separate or combined; packed and padded strides) and on fp8 caches (E4M3, E5M2; per-tensor
/// and per-kv-head scales that differ by orders of magnitude): gather (raw codes or
/// dequantized) and reshape_and_cache (quantizing) against the reference, bit for bit over the
/// whole output buffers, which start as poison (materialize's). Also the NaN / infinity rule:
/// NaN and infinite tokens quantized, NaN and infinite codes dequantized.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "case_builder.h"
#include "copy_exact.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/abi_args.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::gpu_test {
namespace {

using ref::CacheKind;
using ref::ScaleKind;

/// One layout case: a CopyCase plus whether only the gather applies (raw fp8 codes).
struct LayoutCase {
  CopyCase copy;
  bool gather_only = false;
};

std::ostream& operator<<(std::ostream& os, const LayoutCase& c) {
  return os << c.copy;
}

/// Sets the cache of `c`: kind, KV dtype (fp8 with `scale` kind and scales spread over orders
/// of magnitude), combined.
LayoutCase layout(Copy builder, CacheKind kind, DType kv, ScaleKind scale, bool combined,
                  gen::Regime regime) {
  LayoutCase c{builder};
  gen::CopySpec& s = c.copy.spec;
  s.cache.kind = kind;
  s.cache.kv_dtype = kv;
  s.cache.combined = combined;
  if (combined) s.cache.pad.value = s.cache.pad.key;  // a combined cache is padded alike
  s.regime = regime;
  if (dtype_info(kv).fp8) {
    s.cache.scale_kind = scale;
    const std::vector<float> spread = {0.0078125f, 3.5f, 240.0f, 0.37f};
    const int64_t n = scale == ScaleKind::kPerKvHead ? s.num_kv_heads : 1;
    s.cache.k_scale.assign(spread.begin(), spread.begin() + n);
    s.cache.v_scale.assign(spread.rbegin(), spread.rbegin() + n);
    s.dequantize = s.dtype != kv;
  }
  gen::validate(s);
  return c;
}

std::vector<LayoutCase> layout_cases() {
  using gen::Regime;
  constexpr DType f16 = DType::kFloat16, bf16 = DType::kBFloat16, f32 = DType::kFloat32;
  constexpr DType e4m3 = DType::kFloat8E4M3, e5m2 = DType::kFloat8E5M2;
  const ScaleKind none = ScaleKind::kNone, tensor = ScaleKind::kPerTensor,
                  head = ScaleKind::kPerKvHead;
  std::vector<LayoutCase> out = {
      layout(Copy("nhd_f16", f16, 128, 16, 4, 37, 40, 5, 11), CacheKind::kNHD, f16, none, false,
             Regime::kBits),
      layout(Copy("hnd_bf16", bf16, 64, 8, 3, 29, 40, 4, 12), CacheKind::kHND, bf16, none, false,
             Regime::kBits),
      layout(Copy("nhd_f32_strided", f32, 80, 32, 2, 23, 12, 3, 13).strided_tokens(),
             CacheKind::kNHD, f32, none, false, Regime::kBits),
      layout(Copy("nhd_f16_padded", f16, 96, 16, 3, 31, 30, 6, 14).padded_cache(), CacheKind::kNHD,
             f16, none, false, Regime::kBits),
      layout(Copy("hnd_bf16_padded", bf16, 128, 8, 2, 19, 30, 0, 15).padded_cache(),
             CacheKind::kHND, bf16, none, false, Regime::kBits),
      layout(Copy("xsplit_f16_combined", f16, 128, 16, 2, 33, 30, 5, 16), CacheKind::kXSplit, f16,
             none, true, Regime::kBits),
      layout(Copy("nhd_bf16_combined", bf16, 64, 16, 4, 27, 30, 4, 17), CacheKind::kNHD, bf16, none,
             true, Regime::kBits),
      layout(Copy("hnd_f32_combined_padded", f32, 112, 8, 2, 21, 30, 3, 18).padded_cache(),
             CacheKind::kHND, f32, none, true, Regime::kBits),
      layout(Copy("xsplit_f16_e4m3_head", f16, 128, 16, 4, 37, 40, 5, 21), CacheKind::kXSplit, e4m3,
             head, false, Regime::kFullRange),
      layout(Copy("nhd_bf16_e4m3_tensor", bf16, 128, 16, 2, 41, 40, 6, 22), CacheKind::kNHD, e4m3,
             tensor, false, Regime::kMixed),
      layout(Copy("nhd_f32_e5m2_head", f32, 64, 8, 4, 29, 40, 4, 23), CacheKind::kNHD, e5m2, head,
             false, Regime::kFullRange),
      layout(Copy("hnd_f16_e5m2_tensor", f16, 256, 32, 2, 17, 12, 0, 24), CacheKind::kHND, e5m2,
             tensor, false, Regime::kFullRange),
      layout(Copy("hnd_bf16_e4m3_combined", bf16, 96, 16, 3, 25, 30, 5, 25), CacheKind::kHND, e4m3,
             head, true, Regime::kFullRange),
      layout(Copy("nhd_f16_e4m3_padded", f16, 192, 16, 2, 23, 30, 4, 26).padded_cache(),
             CacheKind::kNHD, e4m3, head, false, Regime::kMixed),
      layout(Copy("xsplit_f32_e5m2_strided", f32, 128, 8, 2, 19, 30, 3, 27).strided_tokens(),
             CacheKind::kXSplit, e5m2, tensor, false, Regime::kFullRange),
  };
  // Raw fp8 codes (dtype = cache dtype): gather only, bit patterns.
  LayoutCase raw = layout(Copy("nhd_e4m3_raw", e4m3, 128, 16, 2, 31, 30, 5, 31), CacheKind::kNHD,
                          e4m3, head, false, Regime::kBits);
  raw.gather_only = true;
  out.push_back(raw);
  LayoutCase raw5 = layout(Copy("xsplit_e5m2_raw", e5m2, 64, 16, 3, 21, 30, 4, 32),
                           CacheKind::kXSplit, e5m2, tensor, true, Regime::kBits);
  raw5.gather_only = true;
  out.push_back(raw5);
  return out;
}

class CopyLayouts : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(CopyLayouts, GatherBitExact) {
  expect_copy_exact(gen::materialize(for_family(GetParam().copy, PC_FAMILY_GATHER_CACHED_KV)),
                    PC_FAMILY_GATHER_CACHED_KV);
}

TEST_P(CopyLayouts, ReshapeBitExact) {
  if (GetParam().gather_only) GTEST_SKIP() << "raw fp8 codes: a gather case";
  gen::CopySpec spec = for_family(GetParam().copy, PC_FAMILY_RESHAPE_AND_CACHE);
  spec.dequantize = false;
  expect_copy_exact(gen::materialize(spec), PC_FAMILY_RESHAPE_AND_CACHE);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CopyLayouts, ::testing::ValuesIn(layout_cases()),
                         [](const ::testing::TestParamInfo<LayoutCase>& info) {
                           return info.param.copy.name;
                         });

/// The first token with a slot.
int64_t first_live_token(const ref::CacheCopyProblem& p) {
  for (std::size_t t = 0; t < p.slot_mapping.size(); ++t) {
    if (p.slot_mapping[t] >= 0) return static_cast<int64_t>(t);
  }
  return -1;
}

void put_bits(std::vector<std::byte>& buffer, int64_t index, uint32_t bits, std::size_t size) {
  std::memcpy(buffer.data() + index * static_cast<int64_t>(size), &bits, size);
}

/// The specials tests: for every fp8 cache dtype `kv` and token dtype `dtype`, the problem of
/// `family` on 9 tokens (2 heads of 64) and a cache of kind `kind` with `scale` scales (16-slot
/// blocks) and mixed contents of `seed` (a reshape quantizes), `plant(p, dtype, kv, t)` writing
/// the special values around its first live token t, then every variant bit for bit.
template <typename Plant>
void check_specials(pc_family family, CacheKind kind, ScaleKind scale, uint64_t seed, Plant plant) {
  const bool gather = family == PC_FAMILY_GATHER_CACHED_KV;
  for (DType kv : {DType::kFloat8E4M3, DType::kFloat8E5M2}) {
    for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (gather ? " <- " : " -> ") + dtype_name(kv));
      const LayoutCase c = layout(Copy("specials", dtype, 64, 16, 2, 9, 12, 0, seed), kind, kv,
                                  scale, false, gen::Regime::kMixed);
      gen::CopySpec spec = for_family(c.copy, family);
      if (!gather) spec.dequantize = false;
      ref::CacheCopyProblem p = gen::materialize(spec);
      const int64_t t = first_live_token(p);
      ASSERT_GE(t, 0);
      plant(p, dtype, kv, t);
      expect_copy_exact(p, family);
    }
  }
}

/// NaN (with payloads, both signs), +-infinity and values beyond the largest finite one in the
/// tokens a reshape quantizes: NaN -> 0x7f, infinities and overflow saturate (docs/dtypes.md).
TEST(CopyFp8Specials, QuantizeNanAndInfinity) {
  const auto plant = [](ref::CacheCopyProblem& p, DType dtype, DType, int64_t t) {
    const std::size_t size = dtype_size(dtype);
    const bool f32 = dtype == DType::kFloat32, f16 = dtype == DType::kFloat16;
    const uint32_t specials[] = {
        f32   ? 0x7fc01234u
        : f16 ? 0x7e01u
              : 0x7fc1u,  // NaN with a payload
        f32   ? 0xffc00000u
        : f16 ? 0xfe00u
              : 0xffc0u,  // negative NaN
        f32   ? 0x7f800000u
        : f16 ? 0x7c00u
              : 0x7f80u,  // +infinity
        f32   ? 0xff800000u
        : f16 ? 0xfc00u
              : 0xff80u,  // -infinity
        f32   ? 0x7f7fffffu
        : f16 ? 0x7bffu
              : 0x7f7fu,  // largest finite
        f32   ? 0x80000001u
        : f16 ? 0x8001u
              : 0x8001u,  // tiny negative: -0
    };
    for (int64_t i = 0; i < static_cast<int64_t>(std::size(specials)); ++i) {
      put_bits(p.key, p.key_layout.offset(t, i % 2, i), specials[i], size);
      put_bits(p.value, p.value_layout.offset(t, (i + 1) % 2, 3 * i), specials[i], size);
    }
  };
  check_specials(PC_FAMILY_RESHAPE_AND_CACHE, CacheKind::kNHD, ScaleKind::kPerKvHead, 41, plant);
}

/// NaN codes (both signs, every E5M2 NaN payload) and E5M2 infinities dequantized: the
/// reference's NaN of the output dtype, infinities times the scale.
TEST(CopyFp8Specials, DequantizeNanAndInfinityCodes) {
  const auto plant = [](ref::CacheCopyProblem& p, DType, DType kv, int64_t t) {
    const int64_t slot = p.slot_mapping[t];
    const int64_t block = slot / p.cache.block_size, offset = slot % p.cache.block_size;
    const bool e5m2 = kv == DType::kFloat8E5M2;
    const std::vector<uint32_t> codes =
        e5m2 ? std::vector<uint32_t>{0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff, 0x7c, 0xfc, 0x7b, 0x80}
             : std::vector<uint32_t>{0x7f, 0xff, 0x7e, 0xfe, 0x01, 0x80};
    for (std::size_t i = 0; i < codes.size(); ++i) {
      const int64_t d = static_cast<int64_t>(i);
      put_bits(p.key_cache, p.cache.key_at(block, d % 2, offset, d), codes[i], 1);
      put_bits(p.value_cache, p.cache.value_at(block, (d + 1) % 2, offset, 2 * d), codes[i], 1);
    }
  };
  check_specials(PC_FAMILY_GATHER_CACHED_KV, CacheKind::kHND, ScaleKind::kPerTensor, 42, plant);
}

}  // namespace
}  // namespace pagecheck::gpu_test
