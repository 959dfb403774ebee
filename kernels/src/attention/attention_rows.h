#pragma once
/// Which keys one query row of the v1 / v2_split kernels attends, and how v2_split's partitions
/// tile them. Used by the kernels and by the host (workspace, grid, tests), so it compiles as
/// host and device code and includes no CUDA header.
#include <cstdint>

#if defined(__CUDACC__)
#define PAGECHECK_ROWS_FN __host__ __device__ __forceinline__ constexpr
#else
#define PAGECHECK_ROWS_FN inline constexpr
#endif

namespace pagecheck::kernels {

/// Largest q_len per sequence v1 and v2_split accept (batch.query_start).
inline constexpr int kMaxQueryLen = 16;
/// Largest tile (compiled block size) of the kernels: a row's first partition starts at most
/// kMaxTile - 1 tokens before its first attended key.
inline constexpr int kMaxTile = 32;

/// The attended key positions [lo, hi) of one query row (docs/reference.md): row i of a sequence
/// of context ctx with q_len new tokens sits at pos = ctx - q_len + i; it attends t < pos + 1 when
/// causal (else t < ctx) and t > pos - window when window > 0. For ctx >= 1 and q_len <= ctx
/// the range is never empty (it holds pos); for ctx = 0 it is empty.
struct AttentionRow {
  int pos;   ///< the row's position
  int lo;    ///< first attended key position
  int hi;    ///< one past the last attended key position (>= lo)
  int base;  ///< lo rounded down to the tile: the first partition starts here
};

/// The row's range; `tile` is the kernel's tile (its compiled block size, a power of two).
PAGECHECK_ROWS_FN AttentionRow attention_row(int ctx, int q_len, int i, int window, bool causal,
                                             int tile) {
  AttentionRow r{};
  r.pos = ctx - q_len + i;
  r.hi = causal ? r.pos + 1 : ctx;
  if (r.hi > ctx) r.hi = ctx;
  r.lo = 0;
  if (window > 0 && r.pos - window + 1 > 0) r.lo = r.pos - window + 1;
  if (r.hi < r.lo) r.hi = r.lo;
  r.base = r.lo / tile * tile;
  return r;
}

/// Partitions of `size` tokens that cover a range of `span` tokens (0 for an empty range).
PAGECHECK_ROWS_FN int64_t partitions_over(int64_t span, int64_t size) {
  return span > 0 ? (span + size - 1) / size : 0;
}

/// v2_split partitions of a row: partition j covers [base + j * size, base + (j + 1) * size)
/// intersected with [lo, hi); there are ceil((hi - base) / size) of them, each non-empty (the
/// first holds lo, since lo - base < tile <= size), and no key outside [lo, hi) is read.
PAGECHECK_ROWS_FN int row_partitions(const AttentionRow& r, int size) {
  return static_cast<int>(partitions_over(r.hi - r.base, size));
}

/// Host-side bound on hi - base over every row of a launch: the longest context, or with a
/// window the window plus the other new tokens (a non-causal row also sees the later new tokens)
/// plus the tile rounding, if shorter. Partition plans and workspaces are sized over it, so a
/// windowed launch has no partition wholly outside the window.
PAGECHECK_ROWS_FN int64_t attention_span_bound(int64_t max_context_len, int64_t window,
                                               int64_t max_query_len) {
  const int64_t q = max_query_len > 1 ? max_query_len : 1;
  if (window <= 0) return max_context_len;
  const int64_t span = window + (q - 1) + (kMaxTile - 1);
  return span < max_context_len ? span : max_context_len;
}

}  // namespace pagecheck::kernels

#undef PAGECHECK_ROWS_FN
