/// The built-in copy variants on copies large enough for the vectorized kernels' multi-item
/// paths (at least 2^18 items of one 16-byte cache chunk: 2-4 items per thread) and the staged
/// x-split kernels' blocks that start partway into a token's row (more chunks per token than one
/// staged run of 32 x items-per-thread, and counts that are not a multiple of it): gather and
/// reshape_and_cache against the reference, bit for bit over the whole poisoned output buffers
/// (expect_copy_exact). Slots are distinct and in a random order over the pool (every few tokens
/// -1); x-split, NHD and HND caches of float16, bfloat16 and fp8 (E4M3 and E5M2 with per-kv-head
/// scales over six decades, full-range contents at the saturation edge). Each case stays under
/// 400 MB of host memory and 200 MB of device memory per variant. Suite LargeCache (left out of
/// the sanitizer runs); filter 'LargeCache.Copy*'.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "case_builder.h"
#include "copy/copy_plan.h"
#include "copy_exact.h"
#include "gpu_test_support.h"
#include "pagecheck/reference/cache_copy.h"
#include "pagecheck/verify/gen/materialize.h"

namespace pagecheck::gpu_test {
namespace {

using ref::CacheKind;
using ref::ScaleKind;

/// Items from which the vectorized copy kernels take several items per thread.
constexpr int64_t kMultiItemFrom = kernels::copy_detail::kUnrollFromItems;

/// One large case: a CopyCase plus whether it must reach the multi-item paths.
struct LargeCase {
  CopyCase copy;  ///< the case (a gather spec; for_family gives the reshape)
  /// tokens x chunks per token >= kMultiItemFrom (false: below it, one item per thread)
  bool multi_item = true;
};

std::ostream& operator<<(std::ostream& os, const LargeCase& c) {
  return os << c.copy;
}

/// Per-kv-head scales of `heads` heads, over six decades (an fp8 quotient of one head would
/// saturate or flush to zero under another head's scale), in an order that differs from K to V.
std::vector<float> head_scales(int64_t heads, bool reversed) {
  const std::vector<float> spread = {0.0078125f, 3.5f, 240.0f, 0.37f, 1.0f / 4096, 17.0f, 1.25f};
  std::vector<float> out;
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t i = reversed ? heads - 1 - h : h;
    out.push_back(spread[static_cast<std::size_t>(i) % spread.size()]);
  }
  return out;
}

/// A large case: the slots of `builder` (distinct, random order, some -1), a cache of `kind`
/// holding `kv` (fp8: per-kv-head scales, full-range contents; else random bit patterns).
LargeCase large(Copy builder, CacheKind kind, DType kv, bool multi_item = true) {
  LargeCase c{builder, multi_item};
  gen::CopySpec& s = c.copy.spec;
  s.cache.kind = kind;
  s.cache.kv_dtype = kv;
  s.regime = gen::Regime::kBits;
  if (dtype_info(kv).fp8) {
    s.cache.scale_kind = ScaleKind::kPerKvHead;
    s.cache.k_scale = head_scales(s.num_kv_heads, false);
    s.cache.v_scale = head_scales(s.num_kv_heads, true);
    s.dequantize = s.dtype != kv;
    s.regime = gen::Regime::kFullRange;
  }
  gen::validate(s);
  return c;
}

std::vector<LargeCase> large_cases() {
  constexpr DType f16 = DType::kFloat16, bf16 = DType::kBFloat16;
  constexpr DType e4m3 = DType::kFloat8E4M3, e5m2 = DType::kFloat8E5M2;
  // Copy(name, dtype, head, block, kv_heads, tokens, blocks, skip_every, seed): the pools hold
  // 1.25 slots per token (the distinct random slots spread over every block, a fifth of the
  // slots stay poison), which keeps the caches, and the reference's time, small.
  return {
      // 2048 tokens x 32 heads x 128: 2^20 float16 chunks, 4 staged runs of 128 per token.
      large(Copy("xsplit_f16_b16", f16, 128, 16, 32, 2048, 160, 13, 601), CacheKind::kXSplit, f16),
      large(Copy("xsplit_f16_b8", f16, 128, 8, 32, 2048, 320, 11, 602), CacheKind::kXSplit, f16),
      large(Copy("nhd_f16", f16, 128, 16, 32, 2048, 160, 13, 603), CacheKind::kNHD, f16),
      large(Copy("hnd_f16", f16, 128, 8, 32, 2048, 320, 17, 604), CacheKind::kHND, f16),
      // fp8 caches: 2^19 chunks of 16 codes; a reshape from float16 loads 32 token bytes per
      // chunk (2 items per thread, staged runs of 64).
      large(Copy("xsplit_f16_e4m3", f16, 128, 16, 32, 2048, 160, 13, 606), CacheKind::kXSplit,
            e4m3),
      large(Copy("nhd_f16_e4m3", f16, 128, 8, 32, 2048, 320, 11, 607), CacheKind::kNHD, e4m3),
      // bfloat16 into E5M2 at exactly kMultiItemFrom chunks (1024 tokens).
      large(Copy("xsplit_bf16_e5m2_t1024", bf16, 128, 16, 32, 1024, 80, 7, 608), CacheKind::kXSplit,
            e5m2),
      // 12 heads x 80: 120 chunks per token (not a multiple of 32), 2047 tokens (a partial tile).
      // Below kMultiItemFrom: one item per thread, staged runs of 32 (3 whole, one of 24).
      large(Copy("xsplit_f16_h80_kv12_t2047", f16, 80, 16, 12, 2047, 160, 9, 609),
            CacheKind::kXSplit, f16, false),
      // The same row at 4095 tokens: multi-item, one staged run of 128 holding 120 chunks.
      large(Copy("xsplit_f16_h80_kv12_t4095", f16, 80, 16, 12, 4095, 320, 9, 610),
            CacheKind::kXSplit, f16),
      // 20 heads x 80: 200 chunks, runs of 128 and 72 (a block starts at chunk 128 of a row).
      large(Copy("xsplit_f16_h80_kv20_t2047", f16, 80, 8, 20, 2047, 320, 5, 611),
            CacheKind::kXSplit, f16),
      // fp8 36 heads x 64: 144 chunks per token; reshape runs of 64, 64 and 16, gather runs of
      // 128 and 16.
      large(Copy("xsplit_f16_e4m3_h64_kv36_t2047", f16, 64, 16, 36, 2047, 160, 9, 612),
            CacheKind::kXSplit, e4m3),
  };
}

/// Asserts that `c` reaches the paths it was built for, then checks every variant of `family`.
void check_large(const LargeCase& c, pc_family family) {
  gen::CopySpec spec = for_family(c.copy, family);
  if (family == PC_FAMILY_RESHAPE_AND_CACHE) spec.dequantize = false;
  const int64_t tokens = static_cast<int64_t>(spec.slot_mapping.size());
  const int64_t chunks =
      gen::kv_row_vectors(spec.cache.kv_dtype, spec.num_kv_heads, spec.head_size);
  ASSERT_GT(chunks, 32) << "the case must span more than one staged run of 32 chunks";
  // x-split items: tiles of kTileTokens tokens (the most items a case of `tokens` can have).
  constexpr int64_t kTile = kernels::copy_detail::kTileTokens;
  const int64_t tile_tokens = (tokens + kTile - 1) / kTile * kTile;
  if (c.multi_item) {
    ASSERT_GE(tokens * chunks, kMultiItemFrom) << "the case must reach the multi-item paths";
  } else {
    ASSERT_LT(tile_tokens * chunks, kMultiItemFrom) << "the case must take one item per thread";
  }
  ASSERT_GT(std::count(spec.slot_mapping.begin(), spec.slot_mapping.end(), int64_t{-1}), 0)
      << "the case must hold padding slots";
  // Before materialize: without a device the ~10^7 contents and the reference would cost the
  // CPU runs seconds per case for nothing.
  PAGECHECK_SKIP_WITHOUT_DEVICE();
  expect_copy_exact(gen::materialize(spec), family);
}

/// Gather and reshape of the case named `name` of large_cases().
void check_case(const std::string& name) {
  static const std::vector<LargeCase> cases = large_cases();
  const auto c = std::find_if(cases.begin(), cases.end(),
                              [&](const LargeCase& l) { return l.copy.name == name; });
  ASSERT_NE(c, cases.end()) << "no large copy case " << name;
  SCOPED_TRACE(::testing::PrintToString(*c));
  {
    SCOPED_TRACE("gather_cached_kv");
    check_large(*c, PC_FAMILY_GATHER_CACHED_KV);
  }
  SCOPED_TRACE("reshape_and_cache");
  check_large(*c, PC_FAMILY_RESHAPE_AND_CACHE);
}

// Suite LargeCache: tools/gpu-check's sanitizer runs leave it out (seconds of reference per
// case, 10^6-item launches).
TEST(LargeCache, CopyXSplitF16Block16) {
  check_case("xsplit_f16_b16");
}
TEST(LargeCache, CopyXSplitF16Block8) {
  check_case("xsplit_f16_b8");
}
TEST(LargeCache, CopyNhdF16) {
  check_case("nhd_f16");
}
TEST(LargeCache, CopyHndF16) {
  check_case("hnd_f16");
}
TEST(LargeCache, CopyXSplitF16E4m3) {
  check_case("xsplit_f16_e4m3");
}
TEST(LargeCache, CopyNhdF16E4m3) {
  check_case("nhd_f16_e4m3");
}
TEST(LargeCache, CopyXSplitBf16E5m2) {
  check_case("xsplit_bf16_e5m2_t1024");
}
TEST(LargeCache, CopyXSplitH80Kv12Tokens2047) {
  check_case("xsplit_f16_h80_kv12_t2047");
}
TEST(LargeCache, CopyXSplitH80Kv12Tokens4095) {
  check_case("xsplit_f16_h80_kv12_t4095");
}
TEST(LargeCache, CopyXSplitH80Kv20Tokens2047) {
  check_case("xsplit_f16_h80_kv20_t2047");
}
TEST(LargeCache, CopyXSplitE4m3H64Kv36Tokens2047) {
  check_case("xsplit_f16_e4m3_h64_kv36_t2047");
}

}  // namespace
}  // namespace pagecheck::gpu_test
