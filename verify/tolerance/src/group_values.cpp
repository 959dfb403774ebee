/// Decoded values of the attended keys, for the error model (group_values.h).
#include "group_values.h"

namespace pagecheck::verify::detail {

GroupValues decode_values(const ref::PagedAttentionProblem& p, int64_t seq, int64_t kv, int64_t lo,
                          int64_t hi) {
  const ref::PagedCacheLayout& c = p.cache;
  const int64_t hs = c.head_size, bs = c.block_size;
  GroupValues g;
  if (lo >= hi) return g;
  g.lo = lo;
  g.hi = hi;
  const std::byte* value_buffer = c.combined ? p.key_cache.data() : p.value_cache.data();
  const double vs = c.scale_at(p.v_scale, kv);
  g.values.resize((hi - lo) * hs);
  for (int64_t t = lo; t < hi; ++t) {
    const int64_t block = p.batch.block_table[seq * p.batch.max_blocks_per_seq + t / bs];
    for (int64_t d = 0; d < hs; ++d) {
      g.values[(t - lo) * hs + d] =
          vs * load_element(c.dtype, value_buffer, c.value_at(block, kv, t % bs, d));
    }
  }
  return g;
}

}  // namespace pagecheck::verify::detail
