/// Layouts: packed strides match the serving-engine shapes, offsets follow the documented
/// index order, spans cover exactly the last element, and bad layouts name the field.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "pagecheck/reference/layout.h"

namespace pagecheck {
namespace {

using ref::PagedCacheLayout;
using ref::TokenLayout;

TEST(Layout, PackedCacheFloat16) {
  // key [5, 3, 64/8, 16, 8], value [5, 3, 64, 16]
  const PagedCacheLayout c = PagedCacheLayout::packed(DType::kFloat16, 5, 3, 64, 16);
  EXPECT_EQ(c.x, 8);
  EXPECT_EQ(c.key_stride_slot, 8);
  EXPECT_EQ(c.key_stride_group, 16 * 8);
  EXPECT_EQ(c.key_stride_head, 8 * 16 * 8);
  EXPECT_EQ(c.key_stride_block, 3 * 8 * 16 * 8);
  EXPECT_EQ(c.value_stride_dim, 16);
  EXPECT_EQ(c.value_stride_head, 64 * 16);
  EXPECT_EQ(c.value_stride_block, 3 * 64 * 16);
  EXPECT_EQ(c.key_span(), 5 * 3 * 64 * 16);
  EXPECT_EQ(c.value_span(), 5 * 3 * 64 * 16);
  // key[4][2][37 / 8][9][37 % 8] and value[4][2][37][9], written out by hand.
  EXPECT_EQ(c.key_offset(4, 2, 37, 9), (((4 * 3 + 2) * 8 + 4) * 16 + 9) * 8 + 5);
  EXPECT_EQ(c.value_offset(4, 2, 37, 9), ((4 * 3 + 2) * 64 + 37) * 16 + 9);
  EXPECT_NO_THROW(c.validate(DType::kFloat16));
  EXPECT_NO_THROW(c.validate(DType::kBFloat16));
  EXPECT_THROW(c.validate(DType::kFloat32), std::invalid_argument);  // x = 4 for float32
}

TEST(Layout, PackedCacheFloat32) {
  const PagedCacheLayout c = PagedCacheLayout::packed(DType::kFloat32, 2, 1, 12, 3);
  EXPECT_EQ(c.x, 4);
  EXPECT_EQ(c.key_offset(1, 0, 7, 2), ((1 * 3 + 1) * 3 + 2) * 4 + 3);
  EXPECT_NO_THROW(c.validate(DType::kFloat32));
}

TEST(Layout, PaddedCacheIsValidAndSpansItsLastElement) {
  PagedCacheLayout c = PagedCacheLayout::packed(DType::kFloat16, 3, 2, 16, 4);
  c.key_stride_slot = 9;
  c.key_stride_group = 4 * 9 + 5;
  c.key_stride_head = 2 * c.key_stride_group + 1;
  c.key_stride_block = 2 * c.key_stride_head + 7;
  c.value_stride_dim = 6;
  c.value_stride_head = 16 * 6;
  c.value_stride_block = 2 * 16 * 6 + 3;
  EXPECT_NO_THROW(c.validate(DType::kFloat16));
  EXPECT_EQ(c.key_span(), c.key_offset(2, 1, 15, 3) + 1);
  EXPECT_EQ(c.value_span(), c.value_offset(2, 1, 15, 3) + 1);
}

void expect_invalid(const PagedCacheLayout& c, const std::string& needle) {
  try {
    c.validate(DType::kFloat16);
    ADD_FAILURE() << "accepted; expected an error naming " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Layout, BadCacheLayoutsNameTheField) {
  const PagedCacheLayout good = PagedCacheLayout::packed(DType::kFloat16, 4, 2, 64, 16);
  PagedCacheLayout c = good;
  c.num_blocks = 0;
  expect_invalid(c, "cache layout: num_blocks = 0 must be positive");
  c = good;
  c.block_size = -3;
  expect_invalid(c, "block_size = -3");
  c = PagedCacheLayout::packed(DType::kFloat16, 4, 2, 100, 16);
  expect_invalid(c, "cache layout: head_size 100 is not a multiple of x = 8 for float16");
  c = good;
  c.key_stride_group = 100;  // < 16 slots * 8
  expect_invalid(c, "key_stride_group = 100");
  c = good;
  c.key_stride_head = good.key_stride_head - 1;
  expect_invalid(c, "key_stride_head");
  c = good;
  c.key_stride_block = 1;
  expect_invalid(c, "key_stride_block = 1");
  c = good;
  c.key_stride_group = int64_t{1} << 61;  // 8 groups of it overflow int64
  expect_invalid(c, "does not fit in 64-bit offsets");
  c = good;
  c.value_stride_dim = 15;
  expect_invalid(c, "value_stride_dim = 15 is smaller than block_size = 16");
  c = good;
  c.value_stride_block = good.value_stride_block - 1;
  expect_invalid(c, "value_stride_block");
}

TEST(Layout, TokenLayouts) {
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
