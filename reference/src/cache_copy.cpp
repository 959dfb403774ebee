/// Reference KV-cache copies between the paged cache and contiguous K/V: raw element copies.
#include "pagecheck/reference/cache_copy.h"

#include <cstring>

namespace pagecheck::ref {
namespace {

/// Which way the elements move.
enum class Direction { kCacheToTokens, kTokensToCache };

void copy_tokens(CacheCopyProblem& p, Direction direction) {
  p.validate();
  const PagedCacheLayout& c = p.cache;
  const std::size_t size = dtype_size(p.dtype);
  for (int64_t t = 0; t < p.num_tokens(); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot == -1) continue;  // skipped token
    const int64_t block = slot / c.block_size;
    const int64_t offset = slot % c.block_size;
    for (int64_t h = 0; h < c.num_kv_heads; ++h) {
      for (int64_t d = 0; d < c.head_size; ++d) {
        std::byte* cache_key = p.key_cache.data() + c.key_offset(block, h, d, offset) * size;
        std::byte* cache_value = p.value_cache.data() + c.value_offset(block, h, d, offset) * size;
        std::byte* token_key = p.key.data() + p.key_layout.offset(t, h, d) * size;
        std::byte* token_value = p.value.data() + p.value_layout.offset(t, h, d) * size;
        if (direction == Direction::kCacheToTokens) {
          std::memcpy(token_key, cache_key, size);
          std::memcpy(token_value, cache_value, size);
        } else {
          std::memcpy(cache_key, token_key, size);
          std::memcpy(cache_value, token_value, size);
        }
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
