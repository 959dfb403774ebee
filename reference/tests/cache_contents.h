#pragma once
/// Test helpers of the attention tests: moving cache contents between two problems' layouts,
/// element by element through the layout accessors, and a fresh NaN-filled cache of a layout.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pagecheck/reference/problems.h"
#include "pagecheck/verify/selfcheck_problems.h"

namespace pagecheck::test {

/// The buffer holding `p`'s values (the key buffer when the cache is combined).
inline std::vector<std::byte>& value_buffer(ref::PagedAttentionProblem& p) {
  return p.cache.combined ? p.key_cache : p.value_cache;
}
inline const std::vector<std::byte>& value_buffer(const ref::PagedAttentionProblem& p) {
  return p.cache.combined ? p.key_cache : p.value_cache;
}

/// Gives `p` the cache layout `layout` with NaN in every element (contents to be copied in).
inline void replace_cache(ref::PagedAttentionProblem& p, const ref::PagedCacheLayout& layout) {
  p.cache = layout;
  const std::size_t size = dtype_size(layout.dtype);
  p.key_cache.assign(layout.key_span() * size, std::byte{0});
  p.value_cache.assign(layout.value_span() * size, std::byte{0});
  verify::fill_nan(layout.dtype, p.key_cache);
  verify::fill_nan(layout.dtype, p.value_cache);
}

/// For every element (block, head, slot, dim) of `to`'s cache, copies the raw bytes of K and
/// V element (src_block(block), src_head(head), slot, dim) of `from`'s cache (same dtype);
/// a negative src_block leaves the element as it is.
template <typename BlockFn, typename HeadFn>
void copy_cache(const ref::PagedAttentionProblem& from, ref::PagedAttentionProblem& to,
                BlockFn src_block, HeadFn src_head) {
  const ref::PagedCacheLayout &a = from.cache, &b = to.cache;
  const std::size_t size = dtype_size(b.dtype);
  const std::vector<std::byte>& from_values = value_buffer(from);
  std::vector<std::byte>& to_values = value_buffer(to);
  for (int64_t block = 0; block < b.num_blocks; ++block) {
    const int64_t sb = src_block(block);
    if (sb < 0) continue;
    for (int64_t head = 0; head < b.num_kv_heads; ++head) {
      const int64_t sh = src_head(head);
      for (int64_t slot = 0; slot < b.block_size; ++slot) {
        for (int64_t d = 0; d < b.head_size; ++d) {
          std::memcpy(to.key_cache.data() + b.key_at(block, head, slot, d) * size,
                      from.key_cache.data() + a.key_at(sb, sh, slot, d) * size, size);
          std::memcpy(to_values.data() + b.value_at(block, head, slot, d) * size,
                      from_values.data() + a.value_at(sb, sh, slot, d) * size, size);
        }
      }
    }
  }
}

/// The same cache contents under another layout (same sizes and dtype).
inline void relayout(const ref::PagedAttentionProblem& from, ref::PagedAttentionProblem& to,
                     const ref::PagedCacheLayout& layout) {
  replace_cache(to, layout);
  copy_cache(
      from, to, [](int64_t b) { return b; }, [](int64_t h) { return h; });
}

}  // namespace pagecheck::test
