#pragma once
/// The staged x-split copy kernels (CopyPath::kXSplit with kStagedXSplit; the exchange is
/// described in copy_xsplit_stage.cuh): K takes 16-byte chunks, V slot rows where a warp's
/// slots are rows (else strided elements), both moved in the token-fastest order on the cache
/// side and in whole rows (32 consecutive chunks per warp) on the token side. Each translation
/// unit instantiates the one of its family.
#include <cuda_runtime.h>

#include <cstdint>

#include "copy/copy_codec.cuh"
#include "copy/copy_codec_chunk.cuh"
#include "copy/copy_item_access.cuh"
#include "copy/copy_kernels.cuh"
#include "copy/copy_slot_rows.cuh"
#include "copy/copy_xsplit_stage.cuh"

namespace pagecheck::kernels::copy_detail {

/// Blocks per SM the staged kernels are compiled for (64 registers with an fp8 conversion or
/// 1-byte elements, whose V row pieces take two accesses; 48 otherwise; 5 x 38 KB of shared
/// memory fit in an SM).
template <typename Codec>
inline constexpr int kStagedBlocksPerSm = Codec::kConverts || Codec::kCacheBytes == 1 ? 4 : 5;

/// What both staged kernels start from: the block's tile and run, and their shared memory (the
/// V row-piece transposes and the exchange).
template <int kU>
struct StagedPrologue {
  StagedBlock block;                   ///< staged_block<kU>() of the calling block
  SlotRowStage& rows_stage;            ///< rows_to_tokens / tokens_to_rows
  XSplitStage<kStagedRun<kU>>& stage;  ///< the exchange between the two orders
};

/// The StagedPrologue of the calling block. Call it once per kernel: its shared memory is a
/// static `__shared__` of this function, the same for every call in one block.
template <int kU>
__device__ __forceinline__ StagedPrologue<kU> staged_prologue(const CopyParams& p) {
  __shared__ SlotRowStage rows_stage;
  __shared__ XSplitStage<kStagedRun<kU>> stage;
  return {staged_block<kU>(p), rows_stage, stage};
}

/// gather, staged: the cache loads of kU items per thread in the token-fastest order (one slot
/// per thread: its tile token is the same for every item), the V row pieces transposed per
/// group, every chunk into the stage; after the barrier each warp takes one token's chunks,
/// converts them and stores whole row runs (chunks wider than 16 bytes by lane groups,
/// store_token_chunk_grouped). Slot -1 or past the end: nothing stored.
template <typename Codec, int kU>
__global__ void __launch_bounds__(kTileThreads, kStagedBlocksPerSm<Codec>)
    gather_xsplit_kernel(const __grid_constant__ CopyParams p) {
  constexpr int kN = kChunkDims<Codec>;
  const auto [b, rows_stage, stage] = staged_prologue<kU>(p);
  // Cache order.
  const int t = lane_in_group();
  const int64_t token = b.first_token + t;
  const int64_t slot = token < p.num_tokens ? __ldg(p.slot_mapping + token) : -1;
  if (threadIdx.x < kTileTokens) stage.slot[t] = slot;  // threads 0..7: tile tokens 0..7
  const SlotPosition at = slot_position(slot < 0 ? 0 : slot, p.block_div);
  bool rows[kU];
  KvChunks<CacheChunk<Codec>, kU> kv;  // item u: cache-order chunk u
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int chunk = b.first_chunk + cache_order_chunk<kU>(u);
    const bool active = slot >= 0 && chunk < b.chunks;
    rows[u] = warp_slot_rows(active, slot);
    if (!active) continue;
    const ChunkPlace c = chunk_place<kN>(p, chunk);
    move_cache_item<true, TensorAccess::kVector>(p.key_cache, at, c.head, c.dim, rows[u], kv.k[u]);
    move_cache_item<true, TensorAccess::kRows>(p.value_cache, at, c.head, c.dim, rows[u], kv.v[u]);
  }
  // Token order: the scales of the thread's token-order chunks, issued before the barrier.
  const int w = token_order_token();
  KvScales<Codec, kU> scale;  // item u: token-order chunk u
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int chunk = min(b.first_chunk + token_order_chunk(u), b.chunks - 1);  // a real head
    scale.load(p, u, chunk_place<kN>(p, chunk).head);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (rows[u]) rows_to_tokens(rows_stage, kv.v[u]);  // warp-uniform
    const int column = stage_column(cache_order_chunk<kU>(u), t);
    stage.key[t][column] = kv.k[u].v[0];
    stage.value[t][column] = kv.v[u].v[0];
  }
  __syncthreads();
  if (stage.slot[w] < 0) return;  // no barrier follows
  const bool e5m2 = p.fp8_e5m2 != 0;
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (b.first_chunk + u * 32 >= b.chunks) break;  // the warp's first chunk of item u
    const int chunk = b.first_chunk + token_order_chunk(u);
    const bool active = chunk < b.chunks;  // the lane-group stores need the whole warp
    const ChunkPlace c = chunk_place<kN>(p, chunk);
    const int column = stage_column(token_order_chunk(u), w);
    CacheChunk<Codec> kc;
    CacheChunk<Codec> vc;
    kc.v[0] = stage.key[w][column];
    vc.v[0] = stage.value[w][column];
    TokenChunk<Codec> kt;
    TokenChunk<Codec> vt;
    chunk_to_tokens<Codec>(kc, kt, fp8_scale(scale.k[u]), e5m2);
    chunk_to_tokens<Codec>(vc, vt, fp8_scale(scale.v[u]), e5m2);
    store_token_chunk_grouped(p.key, b.first_token + w, c.head, c.dim, active, kt);
    store_token_chunk_grouped(p.value, b.first_token + w, c.head, c.dim, active, vt);
  }
}

/// reshape, staged (the mirror of gather_xsplit_kernel): each warp loads one token's row runs
/// and its slot, converts the chunks to cache elements and puts them into the stage; after the
/// barrier the threads take them in the token-fastest order, transpose V into row pieces per
/// group where the warp's slots are rows, and store. Slot -1 or past the end: nothing written.
template <typename Codec, int kU>
__global__ void __launch_bounds__(kTileThreads, kStagedBlocksPerSm<Codec>)
    reshape_xsplit_kernel(const __grid_constant__ CopyParams p) {
  constexpr int kN = kChunkDims<Codec>;
  const auto [b, rows_stage, stage] = staged_prologue<kU>(p);
  const bool e5m2 = p.fp8_e5m2 != 0;
  // Token order.
  const int w = token_order_token();
  const int64_t token = b.first_token + w;
  const bool token_in = token < p.num_tokens;
  KvScales<Codec, kU> scale;           // item u: token-order chunk u
  KvChunks<TokenChunk<Codec>, kU> kv;  // likewise
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int chunk = b.first_chunk + token_order_chunk(u);
    const ChunkPlace c = chunk_place<kN>(p, min(chunk, b.chunks - 1));  // a real head
    scale.load(p, u, c.head);
    if (!token_in || chunk >= b.chunks) continue;
    load_token_chunk(p.key, token, c.head, c.dim, kv.k[u]);
    load_token_chunk(p.value, token, c.head, c.dim, kv.v[u]);
  }
  const int64_t my_slot = token_in ? __ldg(p.slot_mapping + token) : -1;
  if ((threadIdx.x & 31) == 0) stage.slot[w] = my_slot;
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (!token_in || b.first_chunk + token_order_chunk(u) >= b.chunks) continue;
    CacheChunk<Codec> kc;
    CacheChunk<Codec> vc;
    chunk_to_cache<Codec>(kv.k[u], kc, fp8_scale(scale.k[u]), e5m2);
    chunk_to_cache<Codec>(kv.v[u], vc, fp8_scale(scale.v[u]), e5m2);
    const int column = stage_column(token_order_chunk(u), w);
    stage.key[w][column] = kc.v[0];
    stage.value[w][column] = vc.v[0];
  }
  __syncthreads();
  // Cache order.
  const int t = lane_in_group();
  const int64_t slot = stage.slot[t];
  const SlotPosition at = slot_position(slot < 0 ? 0 : slot, p.block_div);
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const int chunk = b.first_chunk + cache_order_chunk<kU>(u);
    const bool active = slot >= 0 && chunk < b.chunks;
    const bool rows = warp_slot_rows(active, slot);
    const int column = stage_column(cache_order_chunk<kU>(u), t);
    CacheChunk<Codec> kc;
    CacheChunk<Codec> vc;
    kc.v[0] = stage.key[t][column];
    vc.v[0] = stage.value[t][column];
    if (rows) tokens_to_rows(rows_stage, vc);  // warp-uniform
    if (!active) continue;
    const ChunkPlace c = chunk_place<kN>(p, chunk);
    move_cache_item<false, TensorAccess::kVector>(p.key_cache, at, c.head, c.dim, rows, kc);
    move_cache_item<false, TensorAccess::kRows>(p.value_cache, at, c.head, c.dim, rows, vc);
  }
}

}  // namespace pagecheck::kernels::copy_detail
