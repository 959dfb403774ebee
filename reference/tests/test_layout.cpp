/// Cache layouts: the x-split builder keeps the old packed and padded strides (goldens depend
/// on them), every kind's key_at / value_at equals an independent walk through memory in the
/// kind's storage order, validate accepts what the builder makes and rejects overlapping
/// custom strides by name, and any strides validate accepts give distinct offsets.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pagecheck/reference/layout.h"

namespace pagecheck {
namespace {

using ref::CacheKind;
using ref::CachePadding;
using ref::CacheShape;
using ref::make_cache_layout;
using ref::PagedCacheLayout;
using ref::ScaleKind;
using ref::TensorPadding;

ScaleKind scale_for(DType dtype) {
  return dtype_info(dtype).fp8 ? ScaleKind::kPerTensor : ScaleKind::kNone;
}

TEST(Layout, XSplitPackedStridesAreTheOldOnes) {
  // float16: key [5, 3, 64/8, 16, 8], value [5, 3, 64, 16], the old PagedCacheLayout::packed.
  const PagedCacheLayout c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, {5, 3, 64, 16});
  EXPECT_EQ(c.key.dim_split, 8);
  EXPECT_EQ(c.key.dim, 1);
  EXPECT_EQ(c.key.slot, 8);
  EXPECT_EQ(c.key.group, 16 * 8);
  EXPECT_EQ(c.key.head, 8 * 16 * 8);
  EXPECT_EQ(c.key.block, 3 * 8 * 16 * 8);
  EXPECT_EQ(c.value.dim_split, 64);
  EXPECT_EQ(c.value.slot, 1);
  EXPECT_EQ(c.value.dim, 16);
  EXPECT_EQ(c.value.head, 64 * 16);
  EXPECT_EQ(c.value.block, 3 * 64 * 16);
  EXPECT_EQ(c.key_span(), 5 * 3 * 64 * 16);
  EXPECT_EQ(c.value_span(), 5 * 3 * 64 * 16);
  // key[4][2][37 / 8][9][37 % 8] and value[4][2][37][9], written out by hand.
  EXPECT_EQ(c.key_at(4, 2, 9, 37), (((4 * 3 + 2) * 8 + 4) * 16 + 9) * 8 + 5);
  EXPECT_EQ(c.value_at(4, 2, 9, 37), ((4 * 3 + 2) * 64 + 37) * 16 + 9);
  EXPECT_NO_THROW(c.validate());
  EXPECT_TRUE(c.packed());
  EXPECT_FALSE(c.combined);
  EXPECT_EQ(c.value_base, 0);
  // float32: x = 4; fp8: x = 16.
  const PagedCacheLayout f32 =
      make_cache_layout(CacheKind::kXSplit, DType::kFloat32, {2, 1, 12, 3});
  EXPECT_EQ(f32.key_at(1, 0, 2, 7), ((1 * 3 + 1) * 3 + 2) * 4 + 3);
  EXPECT_NO_THROW(f32.validate());
  const PagedCacheLayout e4m3 = make_cache_layout(CacheKind::kXSplit, DType::kFloat8E4M3,
                                                  {2, 2, 32, 4}, {}, false, ScaleKind::kPerTensor);
  EXPECT_EQ(e4m3.key.slot, 16);
  EXPECT_EQ(e4m3.key.block, 2 * 32 * 4);
  EXPECT_NO_THROW(e4m3.validate());
}

RC_GTEST_PROP(Layout, XSplitPaddingIsTheOldGenerators, ()) {
  // The old generator: packed strides, + pad on the head stride, block = kv_heads * head + pad.
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16);
  const int64_t x = 16 / static_cast<int64_t>(dtype_size(dtype));
  const CacheShape shape{*rc::gen::inRange<int64_t>(1, 9), *rc::gen::inRange<int64_t>(1, 5),
                         x * *rc::gen::inRange<int64_t>(1, 17), *rc::gen::inRange<int64_t>(1, 33)};
  CachePadding pad;
  pad.key.head = *rc::gen::inRange<int64_t>(0, 3 * x);
  pad.key.block = *rc::gen::inRange<int64_t>(0, 5 * x);
  pad.value.head = *rc::gen::inRange<int64_t>(0, 3 * x);
  pad.value.block = *rc::gen::inRange<int64_t>(0, 5 * x);
  const PagedCacheLayout c = make_cache_layout(CacheKind::kXSplit, dtype, shape, pad);
  const int64_t packed_head = shape.head_size * shape.block_size;
  RC_ASSERT(c.key.slot == x);
  RC_ASSERT(c.key.group == shape.block_size * x);
  RC_ASSERT(c.key.head == packed_head + pad.key.head);
  RC_ASSERT(c.key.block == shape.num_kv_heads * (packed_head + pad.key.head) + pad.key.block);
  RC_ASSERT(c.value.dim == shape.block_size);
  RC_ASSERT(c.value.slot == 1);
  RC_ASSERT(c.value.head == packed_head + pad.value.head);
  RC_ASSERT(c.value.block == shape.num_kv_heads * (packed_head + pad.value.head) + pad.value.block);
  RC_ASSERT(c.packed() == !pad.any());
}

/// Offsets of every element of one cache tensor, indexed ((block * H + head) * S + slot) * D
/// + dim, by walking memory in the kind's storage order (independent of the stride formula).
struct Walk {
  const CacheShape& s;
  int64_t x;
  std::vector<int64_t> key, value;

  int64_t index(int64_t b, int64_t h, int64_t slot, int64_t d) const {
    return ((b * s.num_kv_heads + h) * s.block_size + slot) * s.head_size + d;
  }
  /// Places block b's page of one tensor from `pos`; returns the position after it.
  int64_t page(CacheKind kind, bool is_key, int64_t b, const TensorPadding& p, int64_t pos,
               std::vector<int64_t>& out) const {
    const int64_t H = s.num_kv_heads, S = s.block_size, D = s.head_size;
    if (kind == CacheKind::kXSplit && is_key) {  // [H, D/x, S, x]
      for (int64_t h = 0; h < H; ++h, pos += p.head)
        for (int64_t g = 0; g < D / x; ++g)
          for (int64_t slot = 0; slot < S; ++slot, pos += p.slot)
            for (int64_t i = 0; i < x; ++i) out[index(b, h, slot, g * x + i)] = pos++;
    } else if (kind == CacheKind::kXSplit) {  // [H, D, S]
      for (int64_t h = 0; h < H; ++h, pos += p.head)
        for (int64_t d = 0; d < D; ++d, pos += p.slot)
          for (int64_t slot = 0; slot < S; ++slot) out[index(b, h, slot, d)] = pos++;
    } else if (kind == CacheKind::kNHD) {  // [S, H, D]
      for (int64_t slot = 0; slot < S; ++slot, pos += p.slot)
        for (int64_t h = 0; h < H; ++h, pos += p.head)
          for (int64_t d = 0; d < D; ++d) out[index(b, h, slot, d)] = pos++;
    } else {  // HND: [H, S, D]
      for (int64_t h = 0; h < H; ++h, pos += p.head)
        for (int64_t slot = 0; slot < S; ++slot, pos += p.slot)
          for (int64_t d = 0; d < D; ++d) out[index(b, h, slot, d)] = pos++;
    }
    return pos;
  }
  /// Walks all blocks: separate tensors, or [num_blocks, 2, page] when combined.
  void all(CacheKind kind, const CachePadding& pad, bool combined) {
    const int64_t n = s.num_blocks * s.num_kv_heads * s.block_size * s.head_size;
    key.assign(n, -1);
    value.assign(n, -1);
    if (!combined) {
      for (int64_t b = 0, pos = 0; b < s.num_blocks; ++b) {
        pos = page(kind, true, b, pad.key, pos, key) + pad.key.block;
      }
      for (int64_t b = 0, pos = 0; b < s.num_blocks; ++b) {
        pos = page(kind, false, b, pad.value, pos, value) + pad.value.block;
      }
      return;
    }
    std::vector<int64_t> scratch(n);
    const int64_t page_len = std::max(page(kind, true, 0, pad.key, 0, scratch),
                                      page(kind, false, 0, pad.value, 0, scratch));
    for (int64_t b = 0, pos = 0; b < s.num_blocks; ++b) {
      page(kind, true, b, pad.key, pos, key);
      page(kind, false, b, pad.value, pos + page_len, value);
      pos += 2 * page_len + pad.key.block;
    }
  }
};

RC_GTEST_PROP(Layout, EveryKindMatchesAWalkThroughMemory, ()) {
  const CacheKind kind = *rc::gen::element(CacheKind::kXSplit, CacheKind::kNHD, CacheKind::kHND);
  const DType dtype = *rc::gen::element(DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                        DType::kFloat8E4M3, DType::kFloat8E5M2);
  const int64_t x = dtype_x(dtype);
  const CacheShape shape{*rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 4),
                         x * *rc::gen::inRange<int64_t>(1, 4), *rc::gen::inRange<int64_t>(1, 6)};
  const bool combined = *rc::gen::arbitrary<bool>();
  const auto gen_pad = [] {
    return TensorPadding{*rc::gen::element<int64_t>(0, 0, 1, 7),
                         *rc::gen::element<int64_t>(0, 0, 3), *rc::gen::element<int64_t>(0, 0, 2)};
  };
  CachePadding pad{gen_pad(), gen_pad()};
  if (combined) pad.value = pad.key;
  RC_TAG(ref::cache_kind_name(kind), combined ? "combined" : "separate",
         pad.any() ? "padded" : "packed");
  const PagedCacheLayout c = make_cache_layout(kind, dtype, shape, pad, combined, scale_for(dtype));
  RC_ASSERT(c.kind == kind && c.dtype == dtype && c.combined == combined);
  c.validate();
  RC_ASSERT(c.packed() == !pad.any());
  Walk walk{shape, x, {}, {}};
  walk.all(kind, pad, combined);
  int64_t last_key = -1, last_value = -1;
  for (int64_t b = 0; b < shape.num_blocks; ++b)
    for (int64_t h = 0; h < shape.num_kv_heads; ++h)
      for (int64_t slot = 0; slot < shape.block_size; ++slot)
        for (int64_t d = 0; d < shape.head_size; ++d) {
          const int64_t i = walk.index(b, h, slot, d);
          RC_ASSERT(c.key_at(b, h, slot, d) == walk.key[i]);
          RC_ASSERT(c.value_at(b, h, slot, d) == walk.value[i]);
          last_key = std::max(last_key, walk.key[i]);
          last_value = std::max(last_value, walk.value[i]);
        }
  if (combined) {
    RC_ASSERT(c.key_span() == std::max(last_key, last_value) + 1);
    RC_ASSERT(c.value_span() == 0);
  } else {
    RC_ASSERT(c.key_span() == last_key + 1);
    RC_ASSERT(c.value_span() == last_value + 1);
  }
}

void expect_invalid(const PagedCacheLayout& c, const std::string& needle) {
  try {
    c.validate();
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Layout, BadSizesAndDtypesNameTheField) {
  const PagedCacheLayout good =
      make_cache_layout(CacheKind::kXSplit, DType::kFloat16, {4, 2, 64, 16});
  PagedCacheLayout c = good;
  c.num_blocks = 0;
  expect_invalid(c, "cache layout: num_blocks = 0 must be positive");
  c = good;
  c.block_size = -3;
  expect_invalid(c, "block_size = -3");
  c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, {4, 2, 100, 16});
  expect_invalid(c, "cache layout: head_size = 100 is not a multiple of key.dim_split = 8");
  c = good;
  c.value.dim_split = 0;
  expect_invalid(c, "cache layout: value.dim_split = 0 must be positive");
  c = good;
  c.scale_kind = ScaleKind::kPerTensor;
  expect_invalid(c, "scale_kind = per_tensor needs an fp8 dtype, not float16");
  c = make_cache_layout(CacheKind::kNHD, DType::kFloat8E5M2, {4, 2, 64, 16});
  expect_invalid(c, "scale_kind = none with the fp8 dtype fp8_e5m2");
  c.scale_kind = ScaleKind::kPerKvHead;
  EXPECT_NO_THROW(c.validate());
  c.dtype = static_cast<DType>(9);
  expect_invalid(c, "dtype: unknown value 9");
  c = good;
  c.key.group = int64_t{1} << 61;  // 8 groups of it overflow int64
  expect_invalid(c, "does not fit in 64-bit offsets");
}

TEST(Layout, OverlappingCustomStridesNameTheField) {
  const CacheShape shape{4, 2, 64, 16};
  PagedCacheLayout c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, shape);
  c.key.slot = 4;  // < x = 8
  expect_invalid(c, "cache layout: key.slot = 4 is smaller than the span 8 of key.dim");
  c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, shape);
  c.key.dim = 0;
  expect_invalid(c, "key.dim = 0 is smaller than one element");
  c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, shape);
  c.value.dim = 15;
  expect_invalid(c, "value.dim = 15 is smaller than the span 16 of value.slot");
  c = make_cache_layout(CacheKind::kXSplit, DType::kFloat16, shape);
  c.key.block -= 1;
  expect_invalid(c, "key.block = " + std::to_string(c.key.block) + " is smaller than the span");
  c = make_cache_layout(CacheKind::kNHD, DType::kFloat16, shape);
  c.value.slot = 2 * 64 - 1;  // rows of a page overlap
  expect_invalid(c, "value.slot = 127 is smaller than the span 128 of value.dim, value.head");
  c = make_cache_layout(CacheKind::kHND, DType::kBFloat16, shape);
  c.key.head = 16 * 64 - 64;
  expect_invalid(c, "key.head = 960 is smaller than the span 1024 of key.dim, key.slot");
  c = make_cache_layout(CacheKind::kHND, DType::kFloat16, shape);
  c.value_base = 5;
  expect_invalid(c, "value_base = 5 must be 0 unless combined");
}

TEST(Layout, CombinedCachesSeparateKAndV) {
  const CacheShape shape{3, 2, 16, 4};
  const PagedCacheLayout good =
      make_cache_layout(CacheKind::kNHD, DType::kFloat16, shape, {}, /*combined=*/true);
  const int64_t page = 4 * 2 * 16;
  EXPECT_EQ(good.value_base, page);
  EXPECT_EQ(good.key.block, 2 * page);
  EXPECT_EQ(good.value.block, 2 * page);
  EXPECT_EQ(good.key_span(), 3 * 2 * page);
  EXPECT_TRUE(good.packed());
  EXPECT_NO_THROW(good.validate());
  PagedCacheLayout c = good;
  c.value_base = page - 1;
  expect_invalid(c, "value_base = " + std::to_string(page - 1) + " is smaller than the span");
  c = good;
  c.value.block = 3 * page;
  expect_invalid(c, "combined key and value must share their strides at or above value_base");
  c = good;
  c.key.block = c.value.block = 2 * page - 1;
  expect_invalid(c, "block = " + std::to_string(2 * page - 1) + " is smaller than the span");
  c = good;
  c.value_base = 0;
  expect_invalid(c, "value_base = 0 must be positive");
  // Two halves [2, num_blocks, page] (the V tensor after all K blocks) are fine too.
  c = make_cache_layout(CacheKind::kNHD, DType::kFloat16, shape);
  c.combined = true;
  c.value_base = 3 * page;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.key_span(), 6 * page);
}

TEST(Layout, BuilderRejectsBadPadding) {
  CachePadding pad;
  pad.key.slot = 1;
  try {
    make_cache_layout(CacheKind::kHND, DType::kFloat16, {2, 2, 16, 4}, pad, true);
    ADD_FAILURE() << "unshared padding of a combined cache accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("padding"), std::string::npos) << e.what();
  }
  pad.value.slot = 1;
  EXPECT_NO_THROW(make_cache_layout(CacheKind::kHND, DType::kFloat16, {2, 2, 16, 4}, pad, true));
  pad.key.head = -1;
  try {
    make_cache_layout(CacheKind::kNHD, DType::kFloat16, {2, 2, 16, 4}, pad);
    ADD_FAILURE() << "negative padding accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("padding.key.head = -1"), std::string::npos) << e.what();
  }
}

/// One axis of a random custom layout.
struct RandomAxis {
  int64_t size;
  int64_t* stride;
};

/// Mixed-radix strides in a random order with random gaps, then, sometimes, one stride nudged
/// (which may make two elements share an offset). Returns the span of the axes.
int64_t random_strides(std::vector<RandomAxis> axes, int64_t unit) {
  const auto order = *rc::gen::unique<std::vector<int>>(
      axes.size(), rc::gen::inRange<int>(0, static_cast<int>(axes.size())));
  int64_t span = unit;
  for (int i : order) {
    *axes[i].stride = span + *rc::gen::element<int64_t>(0, 0, 1, 3);
    span = (axes[i].size - 1) * *axes[i].stride + span;
  }
  return span;
}

RC_GTEST_PROP(Layout, StridesThatValidateNeverShareAnOffset, ()) {
  PagedCacheLayout c;
  c.dtype = DType::kFloat32;
  c.num_blocks = *rc::gen::inRange<int64_t>(1, 4);
  c.num_kv_heads = *rc::gen::inRange<int64_t>(1, 4);
  c.head_size = *rc::gen::element<int64_t>(2, 4, 6, 8);
  c.block_size = *rc::gen::inRange<int64_t>(1, 5);
  c.combined = *rc::gen::arbitrary<bool>();
  int64_t inner = 0;
  for (ref::CacheTensorStrides* t : {&c.key, &c.value}) {
    std::vector<int64_t> splits;
    for (int64_t d = 1; d <= c.head_size; ++d) {
      if (c.head_size % d == 0) splits.push_back(d);
    }
    t->dim_split = *rc::gen::elementOf(splits);
    std::vector<RandomAxis> axes{{c.num_kv_heads, &t->head},
                                 {c.block_size, &t->slot},
                                 {c.head_size / t->dim_split, &t->group},
                                 {t->dim_split, &t->dim}};
    if (!c.combined) axes.push_back({c.num_blocks, &t->block});
    inner = std::max(inner, random_strides(axes, 1));
  }
  if (c.combined) {
    c.value_base = inner + *rc::gen::element<int64_t>(0, 0, 2);
    c.key.block = c.value.block = c.value_base + inner + *rc::gen::element<int64_t>(0, 0, 1);
  }
  const bool nudged = *rc::gen::arbitrary<bool>();
  if (nudged) {
    int64_t* fields[] = {&c.key.block, &c.key.head,   &c.key.slot,  &c.key.group,
                         &c.key.dim,   &c.value.head, &c.value.dim, &c.value_base};
    *fields[*rc::gen::inRange(0, 8)] += *rc::gen::element<int64_t>(-2, -1, 1);
  }
  // Brute force: does any element of K, of V, or of K and V (combined) share an offset?
  std::set<int64_t> seen;
  bool collision = false;
  for (int tensor = 0; tensor < 2; ++tensor) {
    if (!c.combined) seen.clear();
    for (int64_t b = 0; b < c.num_blocks; ++b)
      for (int64_t h = 0; h < c.num_kv_heads; ++h)
        for (int64_t s = 0; s < c.block_size; ++s)
          for (int64_t d = 0; d < c.head_size; ++d) {
            const int64_t at = tensor == 0 ? c.key_at(b, h, s, d) : c.value_at(b, h, s, d);
            collision |= at < 0 || !seen.insert(at).second;
          }
  }
  bool valid = true;
  try {
    c.validate();
  } catch (const std::invalid_argument&) {
    valid = false;
  }
  RC_CLASSIFY(valid, "valid");
  RC_CLASSIFY(collision, "collision");
  if (!nudged) RC_ASSERT(valid);  // the construction satisfies the rule exactly
  if (valid) RC_ASSERT(!collision);
}

TEST(Layout, KindAndScaleNames) {
  for (CacheKind k : {CacheKind::kXSplit, CacheKind::kNHD, CacheKind::kHND}) {
    EXPECT_EQ(ref::parse_cache_kind(ref::cache_kind_name(k)), k);
  }
  EXPECT_EQ(ref::parse_cache_kind("xsplit"), CacheKind::kXSplit);
  EXPECT_EQ(ref::parse_cache_kind("NHD"), CacheKind::kNHD);
  EXPECT_EQ(ref::parse_cache_kind("HND"), CacheKind::kHND);
  EXPECT_STREQ(ref::cache_kind_name(CacheKind::kXSplit), "x_split");
  for (ScaleKind k : {ScaleKind::kNone, ScaleKind::kPerTensor, ScaleKind::kPerKvHead}) {
    EXPECT_EQ(ref::parse_scale_kind(ref::scale_kind_name(k)), k);
  }
  try {
    ref::parse_cache_kind("nhdx");
    ADD_FAILURE() << "nhdx accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'nhdx'"), std::string::npos) << e.what();
  }
  try {
    ref::parse_scale_kind("per_head");
    ADD_FAILURE() << "per_head accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'per_head'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ref::cache_kind_name(static_cast<CacheKind>(3)), std::invalid_argument);
}

TEST(Layout, TokenLayouts) {
  using ref::TokenLayout;
  const TokenLayout packed = TokenLayout::packed(3, 4, 64);
  EXPECT_EQ(packed.stride_head, 64);
  EXPECT_EQ(packed.stride_token, 256);
  EXPECT_EQ(packed.span(), 3 * 256);
  EXPECT_EQ(packed.offset(2, 3, 5), 2 * 256 + 3 * 64 + 5);
  EXPECT_EQ(TokenLayout::packed(0, 4, 64).span(), 0);
  TokenLayout fused = packed;  // a query sliced out of a fused QKV row
  fused.stride_token = 3 * 256;
  EXPECT_NO_THROW(fused.validate("query"));
  EXPECT_EQ(fused.span(), 2 * 768 + 256);
  TokenLayout bad = packed;
  bad.stride_token = 200;
  try {
    bad.validate("query");
    ADD_FAILURE() << "overlapping tokens accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("query layout: stride_token = 200"), std::string::npos)
        << e.what();
  }
  bad = packed;
  bad.head_size = 0;
  EXPECT_THROW(bad.validate("key"), std::invalid_argument);
}

}  // namespace
}  // namespace pagecheck
