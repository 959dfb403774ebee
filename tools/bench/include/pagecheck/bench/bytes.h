#pragma once
/// Bytes a kernel must move for a shape: the numerator of every effective bandwidth.
///
/// Formulas (E = element size, H = kv heads, D = head size, every slot valid):
///  - gather_cached_kv: read K and V of each token once from the cache (2*T*H*D*E) and its slot
///    (8*T); write K and V once (2*T*H*D*E).
///  - reshape_and_cache: read K and V once (2*T*H*D*E) and the slots (8*T); write K and V once
///    into the cache (2*T*H*D*E).
///  - paged_attention (B sequences of context C, Hq query heads, block size S): read K and V of
///    each sequence's context once per KV head (2*B*C*H*D*E), the query (B*Hq*D*E), the used
///    block-table entries (4*B*ceil(C/S)) and the context lengths (4*B); write the output once
///    (B*Hq*D*E). Re-reads of K/V by several query heads of a group are not counted.
#include <cstdint>

#include "pagecheck/bench/shapes.h"

namespace pagecheck::bench {

/// Bytes read and written by one kernel call.
struct ByteCount {
  int64_t read = 0;     ///< bytes the kernel must read from device memory
  int64_t written = 0;  ///< bytes the kernel must write to device memory
  /// read + written
  int64_t total() const { return read + written; }
};

/// The bytes a kernel of `shape.family` must move for `shape` (formulas above).
ByteCount bytes_moved(const BenchShape& shape);

/// Effective bandwidth in GB/s (1e9 bytes per second) of moving `bytes` in `microseconds`;
/// 0 when the time is not positive.
double bandwidth_gbps(int64_t bytes, double microseconds);

}  // namespace pagecheck::bench
