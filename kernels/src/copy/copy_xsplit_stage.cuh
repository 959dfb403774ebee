#pragma once
/// Shared-memory exchange of the staged x-split copy kernels (copy_xsplit_kernels.cuh).
///
/// A staged block moves one tile of kTileTokens tokens x kStagedRun<kU> consecutive chunks
/// (of all kv heads in order) of each token. It touches the cache in the token-fastest order of
/// the vectorized kernels (each group of 8 lanes: one chunk of the tile's 8 tokens, so that a
/// warp reads or writes 512 contiguous bytes of x-split keys and, through the slot rows, of
/// x-split values) and the token rows in the token order (warp w: token w of the tile, lane l:
/// chunk l of each run of 32, so that a warp moves 32 consecutive chunks of one row). The chunks
/// change hands through `XSplitStage`, one __syncthreads() per block. Pure data movement.
#include <cuda_runtime.h>

#include <cstdint>

#include "copy/copy_kernels.cuh"
#include "copy/copy_plan.h"

namespace pagecheck::kernels::copy_detail {

static_assert(kTileThreads / 32 == kTileTokens, "a staged block has one warp per tile token");

/// The 16-byte cache chunks of one staged block, both tensors, and its tokens' slots. Column
/// `chunk ^ token` holds a chunk: the eight lanes of a quarter warp reach eight different
/// 16-byte bank groups in both orders.
template <int kRun>
struct XSplitStage {
  static_assert(kRun % 8 == 0, "the swizzle stays inside a row");
  uint4 key[kTileTokens][kRun];    ///< K chunks, [token in tile][chunk in run ^ token]
  uint4 value[kTileTokens][kRun];  ///< V chunks
  int64_t slot[kTileTokens];       ///< the tile tokens' slots (-1: skip, or past the end)
};

/// Column of chunk `chunk` (in the run) of tile token `token`.
__device__ __forceinline__ int stage_column(int chunk, int token) {
  return chunk ^ token;
}

/// The tile and first chunk of the calling block (p.item_div: blocks per tile).
struct StagedBlock {
  int64_t first_token;  ///< the tile's first token
  int first_chunk;      ///< the run's first chunk of a token (kv head major)
  int chunks;           ///< chunks per token (kv heads x chunks per head)
};

template <int kU>
__device__ __forceinline__ StagedBlock staged_block(const CopyParams& p) {
  const uint32_t tile = fast_div(blockIdx.x, p.item_div);
  StagedBlock b;
  b.first_token = int64_t{tile} * kTileTokens;
  b.first_chunk = static_cast<int>(blockIdx.x - tile * p.item_div.divisor) * kStagedRun<kU>;
  b.chunks = p.num_kv_heads * static_cast<int>(p.chunk_div.divisor);
  return b;
}

/// Chunk (in the run) of item u of the calling thread in the cache order: group
/// threadIdx.x / kTileTokens of 32 per item; its tile token is lane_in_group().
template <int kU>
__device__ __forceinline__ int cache_order_chunk(int u) {
  return u * (kTileThreads / kTileTokens) + static_cast<int>(threadIdx.x) / kTileTokens;
}

/// Chunk (in the run) of item u of the calling thread in the token order; its tile token is
/// its warp.
__device__ __forceinline__ int token_order_chunk(int u) {
  return u * 32 + (static_cast<int>(threadIdx.x) & 31);
}

/// The calling thread's tile token in the token order.
__device__ __forceinline__ int token_order_token() {
  return static_cast<int>(threadIdx.x) / 32;
}

/// Kv head and first dim of chunk `chunk` of a token (chunks of kN dims).
struct ChunkPlace {
  int head;
  int dim;
};

template <int kN>
__device__ __forceinline__ ChunkPlace chunk_place(const CopyParams& p, int chunk) {
  ChunkPlace c;
  c.head = static_cast<int>(fast_div(static_cast<uint32_t>(chunk), p.chunk_div));
  c.dim = (chunk - c.head * static_cast<int>(p.chunk_div.divisor)) * kN;
  return c;
}

}  // namespace pagecheck::kernels::copy_detail
