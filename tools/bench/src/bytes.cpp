/// Byte formulas of the bandwidth reports (documented in bytes.h and docs/performance.md).
#include "pagecheck/bench/bytes.h"

namespace pagecheck::bench {

ByteCount bytes_moved(const BenchShape& s) {
  const auto elem = static_cast<int64_t>(dtype_size(s.dtype));
  ByteCount c;
  if (s.family == PC_FAMILY_PAGED_ATTENTION) {
    const int64_t blocks_per_seq = (s.context_len + s.block_size - 1) / s.block_size;
    const int64_t kv = 2 * s.num_seqs * s.context_len * s.num_kv_heads * s.head_size * elem;
    const int64_t query = s.num_seqs * s.num_heads * s.head_size * elem;
    const int64_t table = 4 * s.num_seqs * blocks_per_seq;
    const int64_t lens = 4 * s.num_seqs;
    c.read = kv + query + table + lens;
    c.written = s.num_seqs * s.num_heads * s.head_size * elem;
    return c;
  }
  // gather_cached_kv and reshape_and_cache move the same bytes in opposite directions.
  const int64_t kv = 2 * s.num_tokens * s.num_kv_heads * s.head_size * elem;
  c.read = kv + 8 * s.num_tokens;
  c.written = kv;
  return c;
}

double bandwidth_gbps(int64_t bytes, double microseconds) {
  if (!(microseconds > 0)) return 0.0;
  return static_cast<double>(bytes) / (microseconds * 1e3);
}

}  // namespace pagecheck::bench
