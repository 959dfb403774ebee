/// Reference KV-cache copies between the paged cache and contiguous K/V, over the generic cache
/// accessor: raw element copies when both sides share a dtype, otherwise the fp8 conversions
/// of docs/dtypes.md (one float32 operation with the scale, then one rounding).
#include "pagecheck/reference/cache_copy.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace pagecheck::ref {
namespace {

/// Which way the elements move.
enum class Direction { kCacheToTokens, kTokensToCache };

/// Moves one element between a cache element and a token element.
struct ElementCopy {
  DType cache_dtype;
  DType token_dtype;
  const PagedCacheLayout& layout;  ///< the cache (its scale kind)
  Direction direction;

  void operator()(std::byte* cache, int64_t cache_index, std::byte* token, int64_t token_index,
                  const std::vector<float>& scales, int64_t head) const {
    if (cache_dtype == token_dtype) {  // exact, NaN payloads and signed zeros included
      const std::size_t size = dtype_size(cache_dtype);
      std::byte* c = cache + cache_index * static_cast<int64_t>(size);
      std::byte* t = token + token_index * static_cast<int64_t>(size);
      if (direction == Direction::kCacheToTokens) {
        std::memcpy(t, c, size);
      } else {
        std::memcpy(c, t, size);
      }
      return;
    }
    const float scale = layout.scale_at(scales, head);
    if (direction == Direction::kCacheToTokens) {  // dequantize: code * scale in float32
      const float code = static_cast<float>(load_element(cache_dtype, cache, cache_index));
      store_element(token_dtype, token, token_index, code * scale);
    } else {  // quantize: value / scale in float32, then round to the fp8 grid (saturating)
      const float value = static_cast<float>(load_element(token_dtype, token, token_index));
      store_element(cache_dtype, cache, cache_index, value / scale);
    }
  }
};

void copy_tokens(CacheCopyProblem& p, Direction direction) {
  p.validate();
  const PagedCacheLayout& c = p.cache;
  if (direction == Direction::kCacheToTokens && p.dtype != c.dtype && !p.dequantize) {
    throw std::invalid_argument(std::string("dequantize = false: gathering raw codes needs dtype = "
                                            "cache.dtype, but dtype = ") +
                                dtype_name(p.dtype) + " and cache.dtype = " + dtype_name(c.dtype));
  }
  const ElementCopy copy{c.dtype, p.dtype, c, direction};
  std::byte* key_cache = p.key_cache.data();
  std::byte* value_cache = c.combined ? p.key_cache.data() : p.value_cache.data();
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot == -1) continue;  // skipped token
    const int64_t block = slot / c.block_size;
    const int64_t offset = slot % c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        copy(key_cache, c.key_at(block, h, offset, d), p.key.data(), p.key_layout.offset(t, h, d),
             p.k_scale, h);
        copy(value_cache, c.value_at(block, h, offset, d), p.value.data(),
             p.value_layout.offset(t, h, d), p.v_scale, h);
      }
    }
  }
}

}  // namespace

void gather_cached_kv(CacheCopyProblem& problem) {
  copy_tokens(problem, Direction::kCacheToTokens);
}

void reshape_and_cache(CacheCopyProblem& problem) {
  copy_tokens(problem, Direction::kTokensToCache);
}

}  // namespace pagecheck::ref
