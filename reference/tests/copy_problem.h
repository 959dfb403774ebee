#pragma once
/// A cache-copy problem for the reference tests, for any cache kind, KV dtype, scale kind,
/// padding and combined K/V: random cache bytes (NaN codes included), token values spread
/// from the fp8 subnormals to beyond the fp8 range, distinct slots (some -1) and random padding
/// bytes, so that a copy touching anything it should not changes a byte the tests compare.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "pagecheck/reference/problems.h"

namespace pagecheck::test {

/// Shape and contents of one copy problem.
struct CopyCase {
  ref::CacheKind kind = ref::CacheKind::kXSplit;      ///< page layout
  DType dtype = DType::kFloat16;                      ///< contiguous key / value dtype
  DType cache_dtype = DType::kFloat16;                ///< cache dtype (dtype, or fp8)
  ref::ScaleKind scale_kind = ref::ScaleKind::kNone;  ///< fp8 scales
  ref::CacheShape shape{4, 2, 64, 16};                ///< blocks, kv heads, head size, block size
  ref::CachePadding pad;                              ///< cache padding
  bool combined = false;                              ///< K and V in one allocation
  bool dequantize = false;                            ///< gather dequantizes
  int64_t num_tokens = 6;                             ///< contiguous rows
  int64_t token_pad = 0;                              ///< padding after each head and token
  double skip_fraction = 0.0;                         ///< share of rows with slot -1
  uint64_t seed = 1;                                  ///< contents
};

/// Random bytes.
inline std::vector<std::byte> random_bytes(std::mt19937_64& rng, int64_t n) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(n));
  for (std::byte& b : bytes) b = std::byte{static_cast<uint8_t>(rng())};
  return bytes;
}

/// Builds the problem of `c`: valid, with scales in [1/16, 16).
inline ref::CacheCopyProblem make_copy(const CopyCase& c) {
  std::mt19937_64 rng(c.seed);
  ref::CacheCopyProblem p;
  p.dtype = c.dtype;
  p.dequantize = c.dequantize;
  p.cache = ref::make_cache_layout(c.kind, c.cache_dtype, c.shape, c.pad, c.combined, c.scale_kind);
  const auto tokens = [&] {
    ref::TokenLayout t =
        ref::TokenLayout::packed(c.num_tokens, c.shape.num_kv_heads, c.shape.head_size);
    t.stride_head += c.token_pad;
    t.stride_token = c.shape.num_kv_heads * t.stride_head + c.token_pad;
    return t;
  };
  p.key_layout = tokens();
  p.value_layout = tokens();
  const int64_t cache_bytes = static_cast<int64_t>(dtype_size(c.cache_dtype));
  p.key_cache = random_bytes(rng, p.cache.key_span() * cache_bytes);
  p.value_cache = random_bytes(rng, p.cache.value_span() * cache_bytes);
  const int64_t token_bytes = static_cast<int64_t>(dtype_size(c.dtype));
  p.key = random_bytes(rng, p.key_layout.span() * token_bytes);
  p.value = random_bytes(rng, p.value_layout.span() * token_bytes);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-18, 18);
  for (int tensor = 0; tensor < 2; ++tensor) {
    std::vector<std::byte>& rows = tensor == 0 ? p.key : p.value;
    const ref::TokenLayout& layout = tensor == 0 ? p.key_layout : p.value_layout;
    for (int64_t t = 0; t < c.num_tokens; ++t)
      for (int64_t h = 0; h < c.shape.num_kv_heads; ++h)
        for (int64_t d = 0; d < c.shape.head_size; ++d) {
          const double v = std::ldexp(normal(rng), exponent(rng));
          store_element(c.dtype, rows.data(), layout.offset(t, h, d), v);
        }
  }
  const int64_t scales = ref::scale_count(c.scale_kind, c.shape.num_kv_heads);
  std::uniform_real_distribution<float> log_scale(-4.0f, 4.0f);
  for (int64_t i = 0; i < scales; ++i) {
    p.k_scale.push_back(std::exp2(log_scale(rng)));
    p.v_scale.push_back(std::exp2(log_scale(rng)));
  }
  std::vector<int64_t> slots(static_cast<std::size_t>(c.shape.num_blocks * c.shape.block_size));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  std::bernoulli_distribution skip(c.skip_fraction);
  for (int64_t t = 0; t < c.num_tokens; ++t) p.slot_mapping.push_back(skip(rng) ? -1 : slots[t]);
  return p;
}

}  // namespace pagecheck::test
