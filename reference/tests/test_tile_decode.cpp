/// The reference's fast decoders (F16C or the Eigen-built table for float16, shifts for
/// bfloat16, code tables times the scale for fp8) agree with load_element on every bit
/// pattern, under every cache kind, observed through paged_attention itself. Each sequence's
/// last token holds the patterns; a huge ALiBi slope gives every earlier token a weight of
/// exactly 0, so the output is the last value row and, with a one-hot query and scale 1, the
/// log-sum-exp of head h is key element h. The last token's position in its block selects the
/// decoder path (8-wide vector or scalar remainder), the kind the run direction (x-split keys
/// in x-vectors, NHD / HND rows, x-split values along the slots).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "pagecheck/reference/paged_attention.h"

namespace pagecheck {
namespace {

constexpr int64_t kHeadSize = 128;

/// Keys that can show up as a logit: finite and far above the ALiBi penalty of -1e30.
bool usable_key(double value) {
  return std::isfinite(value) && std::fabs(value) < 1e29;
}

/// One test cache: its kind, dtype, block size, context and fp8 scales.
struct Case {
  DType dtype = DType::kFloat16;
  ref::CacheKind kind = ref::CacheKind::kXSplit;
  int64_t block_size = 16;
  int32_t ctx = 16;
  float k_scale = 1.0f;  ///< fp8 only
  float v_scale = 1.0f;  ///< fp8 only
};

/// Every bit pattern of the case's dtype (patterns / 128 sequences of ctx tokens); key and
/// value element (seq, dim) of the last token hold pattern seq * 128 + dim (keys that are no
/// usable logit replaced by 0: 0 * inf would poison the dot); earlier tokens hold zeros, and
/// every other slot all-ones bits (NaN).
ref::PagedAttentionProblem every_pattern(const Case& c) {
  const int64_t size = static_cast<int64_t>(dtype_size(c.dtype));
  const int64_t num_seqs = (int64_t{1} << (8 * size)) / kHeadSize;
  const bool fp8 = dtype_info(c.dtype).fp8;
  ref::PagedAttentionProblem p;
  p.dtype = fp8 ? DType::kFloat32 : c.dtype;
  p.num_heads = kHeadSize;  // MQA: head h has query = one-hot(h)
  p.scale = 1.0f;
  p.query_layout = ref::TokenLayout::packed(num_seqs, p.num_heads, kHeadSize);
  p.cache = ref::make_cache_layout(c.kind, c.dtype, {num_seqs, 1, kHeadSize, c.block_size}, {},
                                   false, fp8 ? ref::ScaleKind::kPerTensor : ref::ScaleKind::kNone);
  if (fp8) {
    p.k_scale = {c.k_scale};
    p.v_scale = {c.v_scale};
  }
  p.query.assign(p.query_layout.span() * dtype_size(p.dtype), std::byte{0});
  p.key_cache.assign(p.cache.key_span() * size, std::byte{0xff});  // NaN past the context
  p.value_cache.assign(p.cache.value_span() * size, std::byte{0xff});
  if (c.ctx > 1) p.features.alibi_slopes.assign(p.num_heads, 1e30f);
  p.batch.num_seqs = num_seqs;
  p.batch.max_blocks_per_seq = 1;
  for (int64_t s = 0; s < num_seqs; ++s) {
    const int64_t block = num_seqs - 1 - s;
    p.batch.block_table.push_back(static_cast<int32_t>(block));
    p.batch.context_lens.push_back(c.ctx);
    for (int64_t t = 0; t + 1 < c.ctx; ++t) {
      for (int64_t d = 0; d < kHeadSize; ++d) {
        store_element(c.dtype, p.key_cache.data(), p.cache.key_at(block, 0, t, d), 0);
        store_element(c.dtype, p.value_cache.data(), p.cache.value_at(block, 0, t, d), 0);
      }
    }
    for (int64_t h = 0; h < p.num_heads; ++h) {
      store_element(p.dtype, p.query.data(), p.query_layout.offset(s, h, h), 1.0);
    }
    for (int64_t d = 0; d < kHeadSize; ++d) {
      const uint16_t bits = static_cast<uint16_t>(s * kHeadSize + d);
      const uint16_t key_bits =
          usable_key(load_element(c.dtype, reinterpret_cast<const std::byte*>(&bits), 0)) ? bits
                                                                                          : 0;
      const int64_t slot = c.ctx - 1;
      std::memcpy(p.value_cache.data() + p.cache.value_at(block, 0, slot, d) * size, &bits, size);
      std::memcpy(p.key_cache.data() + p.cache.key_at(block, 0, slot, d) * size, &key_bits, size);
    }
  }
  return p;
}

void check_every_pattern(const Case& c) {
  const ref::PagedAttentionProblem p = every_pattern(c);
  const ref::PagedAttentionResult r = ref::paged_attention(p, {2});
  const std::string what =
      std::string(dtype_name(c.dtype)) + " " + ref::cache_kind_name(c.kind) + " ";
  for (int64_t s = 0; s < p.num_seqs(); ++s) {
    for (int64_t d = 0; d < kHeadSize; ++d) {
      const uint16_t bits = static_cast<uint16_t>(s * kHeadSize + d);
      const double code = load_element(c.dtype, reinterpret_cast<const std::byte*>(&bits), 0);
      // fp8: the exact product code * scale (scales with few significant bits keep it exact
      // in float32 too).
      const double value = dtype_info(c.dtype).fp8 ? code * c.v_scale : code;
      const double key = dtype_info(c.dtype).fp8 ? code * c.k_scale : code;
      // Value: out = (0 + ... + 1 * v) / 1 (a -0 may become +0; == treats them alike).
      const double out = r.out[(s * p.num_heads + 0) * kHeadSize + d];
      if (std::isnan(value)) {
        ASSERT_TRUE(std::isnan(out)) << what << "value 0x" << std::hex << bits;
      } else {
        ASSERT_EQ(out, value) << what << "value 0x" << std::hex << bits;
      }
      // Key: lse of head d = logit = k[d] (log of a sum of one exp(0) is 0).
      if (usable_key(code)) {
        ASSERT_EQ(r.lse[s * p.num_heads + d], key) << what << "key 0x" << std::hex << bits;
      }
    }
  }
}

constexpr ref::CacheKind kKinds[] = {ref::CacheKind::kXSplit, ref::CacheKind::kNHD,
                                     ref::CacheKind::kHND};

TEST(TileDecode, Float16VectorPath) {
  for (ref::CacheKind kind : kKinds) check_every_pattern({DType::kFloat16, kind, 16, 16});
}
TEST(TileDecode, Float16RemainderPath) {
  for (ref::CacheKind kind : kKinds) check_every_pattern({DType::kFloat16, kind, 11, 11});
}
TEST(TileDecode, Float16SingleToken) {
  check_every_pattern({DType::kFloat16, ref::CacheKind::kXSplit, 8, 1});
}
TEST(TileDecode, BFloat16EveryBitPattern) {
  for (ref::CacheKind kind : kKinds) check_every_pattern({DType::kBFloat16, kind, 16, 16});
}
TEST(TileDecode, Fp8EveryCodeTimesItsScale) {
  for (DType dtype : {DType::kFloat8E4M3, DType::kFloat8E5M2}) {
    for (ref::CacheKind kind : kKinds) {
      check_every_pattern({dtype, kind, 16, 16, 0.375f, 1.25f});
      check_every_pattern({dtype, kind, 5, 3, 2.0f, 0.5f});
    }
  }
}

}  // namespace
}  // namespace pagecheck
