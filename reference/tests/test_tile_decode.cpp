/// The reference's fast decoders (F16C or the Eigen-built table for float16, shifts for
/// bfloat16) agree with load_element on every 16-bit pattern, observed through paged_attention
/// itself. Each sequence's last token holds the patterns; a huge ALiBi slope gives every
/// earlier token a weight of exactly 0, so the output is the last value row and, with a one-hot
/// query and scale 1, the log-sum-exp of head h is key element h. The last token's position
/// in its block selects the decoder path (8-wide vector or scalar remainder).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "pagecheck/reference/paged_attention.h"

namespace pagecheck {
namespace {

constexpr int64_t kHeadSize = 128;
constexpr int64_t kNumSeqs = 65536 / kHeadSize;

/// Keys that can show up as a logit: finite and far above the ALiBi penalty of -1e30.
bool usable_key(double value) {
  return std::isfinite(value) && std::fabs(value) < 1e29;
}

/// 512 sequences of `ctx` tokens; key and value element (seq, dim) of the last token hold bit
/// pattern seq * 128 + dim (other keys replaced by 0: 0 * inf would poison the dot);
/// earlier tokens hold zeros.
ref::PagedAttentionProblem every_pattern(DType dtype, int64_t block_size, int32_t ctx) {
  ref::PagedAttentionProblem p;
  p.dtype = dtype;
  p.num_seqs = kNumSeqs;
  p.num_heads = kHeadSize;  // MQA: head h has query = one-hot(h)
  p.max_blocks_per_seq = 1;
  p.scale = 1.0f;
  p.query_layout = ref::TokenLayout::packed(kNumSeqs, p.num_heads, kHeadSize);
  p.cache = ref::PagedCacheLayout::packed(dtype, kNumSeqs, 1, kHeadSize, block_size);
  p.query.assign(p.query_layout.span() * 2, std::byte{0});
  p.key_cache.assign(p.cache.key_span() * 2, std::byte{0xff});  // NaN past the context
  p.value_cache.assign(p.cache.value_span() * 2, std::byte{0xff});
  if (ctx > 1) p.alibi_slopes.assign(p.num_heads, 1e30f);
  for (int64_t s = 0; s < kNumSeqs; ++s) {
    p.block_table.push_back(static_cast<int32_t>(kNumSeqs - 1 - s));
    p.context_lens.push_back(ctx);
    for (int64_t t = 0; t + 1 < ctx; ++t) {
      for (int64_t d = 0; d < kHeadSize; ++d) {
        store_element(dtype, p.key_cache.data(), p.cache.key_offset(p.block_table[s], 0, d, t), 0);
        store_element(dtype, p.value_cache.data(), p.cache.value_offset(p.block_table[s], 0, d, t),
                      0);
      }
    }
    for (int64_t h = 0; h < p.num_heads; ++h) {
      store_element(dtype, p.query.data(), p.query_layout.offset(s, h, h), 1.0);
    }
    for (int64_t d = 0; d < kHeadSize; ++d) {
      const uint16_t bits = static_cast<uint16_t>(s * kHeadSize + d);
      std::byte raw[2];
      std::memcpy(raw, &bits, 2);
      const uint16_t key_bits = usable_key(load_element(dtype, raw, 0)) ? bits : 0;
      const int64_t block = p.block_table[s];
      const int64_t slot = ctx - 1;
      std::memcpy(p.value_cache.data() + p.cache.value_offset(block, 0, d, slot) * 2, &bits, 2);
      std::memcpy(p.key_cache.data() + p.cache.key_offset(block, 0, d, slot) * 2, &key_bits, 2);
    }
  }
  return p;
}

void check_every_pattern(DType dtype, int64_t block_size, int32_t ctx) {
  const ref::PagedAttentionProblem p = every_pattern(dtype, block_size, ctx);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {2});
  for (int64_t s = 0; s < kNumSeqs; ++s) {
    for (int64_t d = 0; d < kHeadSize; ++d) {
      const uint16_t bits = static_cast<uint16_t>(s * kHeadSize + d);
      std::byte raw[2];
      std::memcpy(raw, &bits, 2);
      const double expected = load_element(dtype, raw, 0);
      // Value: out = (0 + ... + 1 * v) / 1 (a -0 may become +0; == treats them alike).
      const double out = r.out[(s * p.num_heads + 0) * kHeadSize + d];
      if (std::isnan(expected)) {
        ASSERT_TRUE(std::isnan(out)) << dtype_name(dtype) << " value 0x" << std::hex << bits;
      } else {
        ASSERT_EQ(out, expected) << dtype_name(dtype) << " value 0x" << std::hex << bits;
      }
      // Key: lse of head d = logit = k[d] (log of a sum of one exp(0) is 0).
      if (usable_key(expected)) {
        ASSERT_EQ(r.lse[s * p.num_heads + d], expected)
            << dtype_name(dtype) << " key 0x" << std::hex << bits;
      }
    }
  }
}

TEST(TileDecode, Float16VectorPath) {
  check_every_pattern(DType::kFloat16, 16, 16);
}
TEST(TileDecode, Float16RemainderPath) {
  check_every_pattern(DType::kFloat16, 11, 11);
}
TEST(TileDecode, Float16SingleToken) {
  check_every_pattern(DType::kFloat16, 8, 1);
}
TEST(TileDecode, BFloat16EveryBitPattern) {
  check_every_pattern(DType::kBFloat16, 16, 16);
}

}  // namespace
}  // namespace pagecheck
