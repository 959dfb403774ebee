/// Byte formulas of the bandwidth reports (documented in bytes.h and docs/performance.md).
#include "pagecheck/bench/bytes.h"

#include <algorithm>

namespace pagecheck::bench {

ByteCount bytes_moved(const BenchShape& s) {
  const auto elem = static_cast<int64_t>(dtype_size(s.dtype));
  const auto kv_elem = static_cast<int64_t>(dtype_size(s.cache_dtype()));
  const int64_t scales = s.cache_dtype() != s.dtype ? 8 : 0;  // per-tensor k_scale, v_scale
  ByteCount c;
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    // A window reads the last W + q_len - 1 tokens of each sequence (whole blocks are counted
    // only as far as the tokens reach).
    const int64_t tokens =
        s.window > 0 ? std::min(s.context_len, s.window + s.query_len - 1) : s.context_len;
    const int64_t first = s.context_len - tokens;
    const int64_t blocks_read =
        (s.context_len + s.block_size - 1) / s.block_size - first / s.block_size;
    const int64_t kv = 2 * s.num_seqs * tokens * s.num_kv_heads * s.head_size * kv_elem;
    const int64_t rows = s.num_seqs * s.query_len;
    const int64_t query = rows * s.num_heads * s.head_size * elem;
    const int64_t table = 4 * s.num_seqs * blocks_read;
    const int64_t lens = 4 * s.num_seqs + (s.query_len > 1 ? 4 * (s.num_seqs + 1) : 0);
    c.read = kv + query + table + lens + scales;
    c.written = rows * s.num_heads * s.head_size * elem;
    return c;
  }
  // gather_cached_kv and reshape_and_cache move the same elements in opposite directions: the
  // cache side in the cache dtype, the token side in dtype.
  const int64_t elems = 2 * s.num_tokens * s.num_kv_heads * s.head_size;
  const bool gather = s.family == PC_FAMILY_GATHER_CACHED_KV;
  c.read = elems * (gather ? kv_elem : elem) + 8 * s.num_tokens + scales;
  c.written = elems * (gather ? elem : kv_elem);
  return c;
}

double bandwidth_gbps(int64_t bytes, double microseconds) {
  if (!(microseconds > 0)) return 0.0;
  return static_cast<double>(bytes) / (microseconds * 1e3);
}

}  // namespace pagecheck::bench
