#pragma once
/// Launch shape of the vectorized copy kernels, shared by the host checks and the launchers
/// (no CUDA headers): tile_threads(unroll) threads per block, `unroll` items per thread (1, or
/// copy_unroll() from kUnrollFromItems items), an item being one 16-byte cache chunk of one
/// (token, head).
#include <cstdint>

#include "copy/copy_params.h"

namespace pagecheck::kernels::copy_detail {

inline constexpr int kTileTokens = 8;     ///< tokens of a token-fastest tile
inline constexpr int kTileThreads = 256;  ///< threads per block (the largest; see tile_threads)
/// Threads per block of a launch with one item per thread (a small copy: twice the blocks of
/// kTileThreads, so that its one wave spreads evenly over the SMs).
inline constexpr int kSmallTileThreads = 128;
inline constexpr int kTileUnroll = 4;  ///< largest items per thread
/// Items from which a launch uses copy_unroll() items per thread (below: one, for more blocks
/// and a shorter critical path on small copies).
inline constexpr int64_t kUnrollFromItems = int64_t{1} << 18;

/// Items per thread of a large copy whose widest side of a chunk is `chunk_bytes` (16, 32 or
/// 64): kTileUnroll 16-byte vectors per tensor in flight per thread, so that a converting copy
/// keeps the registers (and occupancy) of a raw one.
constexpr int copy_unroll(int chunk_bytes) {
  const int u = kTileUnroll * 16 / chunk_bytes;
  return u < 1 ? 1 : u;
}

/// The large unroll of a gather or a reshape with token / cache elements of the given sizes:
/// from the chunk's wider side (16 bytes of cache elements, 16 x token_bytes / cache_bytes of
/// tokens), which a converting copy holds in registers on either side; the host's
/// CopyParams::unroll and the launchers' template argument both come from here.
constexpr int large_unroll(int token_bytes, int cache_bytes) {
  const int wider = token_bytes > cache_bytes ? token_bytes : cache_bytes;
  return copy_unroll(16 * wider / cache_bytes);
}

/// Threads per block of a launch with kU items per thread (usable in device code).
template <int kU>
inline constexpr int kThreadsFor = kU > 1 ? kTileThreads : kSmallTileThreads;

/// Threads per block of a launch with `unroll` items per thread (host).
constexpr int tile_threads(int unroll) {
  return unroll > 1 ? kThreadsFor<2> : kThreadsFor<1>;
}

/// Items of a problem: token-fastest tiles of 8 tokens x `vectors`, or tokens x vectors.
inline int64_t tile_items(int64_t num_tokens, int vectors, bool token_fastest) {
  if (!token_fastest) return num_tokens * vectors;
  return (num_tokens + kTileTokens - 1) / kTileTokens * kTileTokens * vectors;
}

/// The FastDiv of divisor d (1 <= d < 2^31).
constexpr FastDiv make_fast_div(uint32_t d) {
  uint32_t shift = 0;
  while ((uint64_t{1} << shift) < d) ++shift;
  const uint64_t multiplier =
      d == 1 ? 0 : ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1;
  return {d, static_cast<uint32_t>(multiplier), shift};
}

/// The kernels' fast_div (copy_kernels.cuh) on the host, for the check below.
constexpr uint32_t fast_div_host(uint32_t n, const FastDiv& d) {
  return static_cast<uint32_t>((((uint64_t{n} * d.multiplier) >> 32) + n) >> d.shift);
}

/// True when fast_div_host is exact for divisors 1 .. max_divisor at the dividends around
/// multiples of d, near 2^31 and at a spread of others (the rule: Granlund and Montgomery).
constexpr bool fast_div_checks(uint32_t max_divisor) {
  for (uint32_t d = 1; d <= max_divisor; ++d) {
    const FastDiv f = make_fast_div(d);
    const uint32_t top = 0x7fffffffu;
    const uint32_t probes[] = {
        0,       1,       d - 1,         d,       d + 1,   2 * d,     top,
        top - 1, top - d, top - top % d, top / 3, top / 7, 65535 * d, 1000003u * (d % 7 + 1)};
    for (uint32_t n : probes) {
      if (n <= top && fast_div_host(n, f) != n / d) return false;
    }
  }
  return true;
}
static_assert(fast_div_checks(2048), "FastDiv rounds some quotient wrongly");

/// Which cache accesses a vectorized kernel compiles; the launchers choose it from the flags of
/// CopyParams (copy_path), so that a kernel holds only the code (and the registers) of its path.
enum class CopyPath : int {
  kGeneric = 0,  ///< per tensor at run time: 16-byte chunk, slot rows or strided elements
  kVector = 1,   ///< both tensors take 16-byte chunks; lanes walk the chunks of a token
  kXSplit = 2,   ///< K takes 16-byte chunks, V slot rows (strided elements where a warp's slots
                 ///< are not rows); token-fastest lanes (x-split caches)
};

/// The path of a launch with these parameters.
inline CopyPath copy_path(const CopyParams& p) {
  if (p.key_cache.vector && p.value_cache.vector && !p.token_fastest) return CopyPath::kVector;
  if (p.key_cache.vector && p.value_cache.slot_rows && p.token_fastest) return CopyPath::kXSplit;
  return CopyPath::kGeneric;
}

/// kXSplit launches run the staged kernels (copy_xsplit_stage.cuh: cache side in the
/// token-fastest order, token side in whole rows, exchanged through shared memory), one item per
/// thread as well (so that the small GPU test cases cover them); false: the vectorized kernel
/// with token-fastest items (token rows in 64-byte pieces).
inline constexpr bool kStagedXSplit = true;

/// Chunks of each of its kTileTokens tokens one staged block of kTileThreads threads moves, with
/// kU items per thread: one warp per token, 32 consecutive chunks per item (device code).
template <int kU>
inline constexpr int kStagedRun = 32 * kU;

/// kStagedRun for `unroll` items per thread (host).
constexpr int staged_run(int unroll) {
  return kStagedRun<1> * unroll;
}

/// True when p's launch runs the staged kernels.
inline bool staged(const CopyParams& p) {
  return kStagedXSplit && copy_path(p) == CopyPath::kXSplit;
}

/// Staged blocks per tile of kTileTokens tokens: the tile's `vectors` chunks in runs.
inline int staged_runs(int vectors, int unroll) {
  return (vectors + staged_run(unroll) - 1) / staged_run(unroll);
}

/// Thread blocks of a vectorized launch with chunks of `chunk_dims` dims.
inline int64_t grid_blocks(const CopyParams& p, int chunk_dims) {
  const int vectors = p.num_kv_heads * (p.head_size / chunk_dims);
  if (staged(p)) {
    const int64_t tiles = (p.num_tokens + kTileTokens - 1) / kTileTokens;
    return tiles * staged_runs(vectors, p.unroll > 0 ? p.unroll : 1);
  }
  const int64_t items = tile_items(p.num_tokens, vectors, p.token_fastest != 0);
  const int unroll = p.unroll > 0 ? p.unroll : 1;
  const int64_t per_block = int64_t{tile_threads(unroll)} * unroll;
  return (items + per_block - 1) / per_block;
}

}  // namespace pagecheck::kernels::copy_detail
