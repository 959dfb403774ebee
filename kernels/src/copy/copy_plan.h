#pragma once
/// Launch shape of the vectorized copy kernels, shared by the host checks and the launchers
/// (no CUDA headers): kTileThreads threads per block, `unroll` items per thread (1, or
/// copy_unroll() from kUnrollFromItems items), an item being one 16-byte cache chunk of one
/// (token, head).
#include <cstdint>

#include "copy/copy_params.h"

namespace pagecheck::kernels::copy_detail {

inline constexpr int kTileTokens = 8;     ///< tokens of a token-fastest tile
inline constexpr int kTileThreads = 256;  ///< threads per block
inline constexpr int kTileUnroll = 4;     ///< largest items per thread
/// Items from which a launch uses copy_unroll() items per thread (below: one, for more blocks
/// and a shorter critical path on small copies).
inline constexpr int64_t kUnrollFromItems = int64_t{1} << 18;

/// Items per thread of a large copy whose loads bring `loaded_chunk_bytes` per tensor and item
/// (gather: the 16-byte cache chunk; reshape: the chunk's 16, 32 or 64 token bytes): kTileUnroll
/// 16-byte loads per tensor in flight per thread, so that a converting reshape keeps the
/// registers (and occupancy) of a raw one.
constexpr int copy_unroll(int loaded_chunk_bytes) {
  const int u = kTileUnroll * 16 / loaded_chunk_bytes;
  return u < 1 ? 1 : u;
}

/// The large unroll of a gather (its loads: the 16-byte cache chunk) or a reshape (its loads:
/// the chunk's token bytes), for token / cache elements of the given sizes; the host's
/// CopyParams::unroll and the launchers' template argument both come from here.
constexpr int large_unroll(bool gather, int token_bytes, int cache_bytes) {
  return copy_unroll(gather ? 16 : 16 * token_bytes / cache_bytes);
}

/// Items of a problem: token-fastest tiles of 8 tokens x `vectors`, or tokens x vectors.
inline int64_t tile_items(int64_t num_tokens, int vectors, bool token_fastest) {
  if (!token_fastest) return num_tokens * vectors;
  return (num_tokens + kTileTokens - 1) / kTileTokens * kTileTokens * vectors;
}

/// Thread blocks of a vectorized launch with chunks of `chunk_dims` dims.
inline int64_t grid_blocks(const CopyParams& p, int chunk_dims) {
  const int vectors = p.num_kv_heads * (p.head_size / chunk_dims);
  const int64_t items = tile_items(p.num_tokens, vectors, p.token_fastest != 0);
  const int64_t per_block = int64_t{kTileThreads} * (p.unroll > 0 ? p.unroll : 1);
  return (items + per_block - 1) / per_block;
}

}  // namespace pagecheck::kernels::copy_detail
