#pragma once
/// Device helpers of the copy kernels: element and 16-byte vector views of raw storage bits
/// (copies are bit exact, so float16 and bfloat16 share the 2-byte instantiation) and the
/// per-element / per-vector index arithmetic, all 64-bit.
#include <cuda_runtime.h>

#include <cstdint>

#include "copy/copy_params.h"

namespace pagecheck::kernels::copy_detail {

/// Raw storage element of E bytes.
template <int E>
struct Element;
template <>
struct Element<2> {
  using type = uint16_t;
};
template <>
struct Element<4> {
  using type = uint32_t;
};

/// Packs 16 / E elements into a 16-byte vector (element 0 at the lowest address).
template <int E>
__device__ __forceinline__ uint4 pack16(const typename Element<E>::type (&v)[16 / E]) {
  if constexpr (E == 4) {
    return make_uint4(v[0], v[1], v[2], v[3]);
  } else {
    return make_uint4(
        uint32_t{v[0]} | (uint32_t{v[1]} << 16), uint32_t{v[2]} | (uint32_t{v[3]} << 16),
        uint32_t{v[4]} | (uint32_t{v[5]} << 16), uint32_t{v[6]} | (uint32_t{v[7]} << 16));
  }
}

/// Unpacks a 16-byte vector into 16 / E elements.
template <int E>
__device__ __forceinline__ void unpack16(const uint4& q, typename Element<E>::type (&v)[16 / E]) {
  if constexpr (E == 4) {
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = static_cast<uint16_t>(w[i] & 0xffffu);
      v[2 * i + 1] = static_cast<uint16_t>(w[i] >> 16);
    }
  }
}

/// Element offsets of one (token, head, dim) in the cache for cache slot `slot`.
struct CacheOffsets {
  int64_t key;
  int64_t value;
};

__device__ __forceinline__ CacheOffsets cache_offsets(const CopyParams& p, int64_t slot, int head,
                                                      int dim, int x) {
  const int64_t block = slot / p.block_size;
  const int64_t offset = slot - block * p.block_size;
  CacheOffsets o;
  o.key = block * p.kc_stride_block + head * p.kc_stride_head + (dim / x) * p.kc_stride_group +
          offset * p.kc_stride_slot + dim % x;
  o.value =
      block * p.vc_stride_block + head * p.vc_stride_head + int64_t{dim} * p.vc_stride_dim + offset;
  return o;
}

/// Launch shape of the vectorized kernels: a thread block copies a tile of kTileTokens
/// consecutive tokens x kTileVectors (head, x-group) vectors, kUnroll items per thread, with the
/// token index fastest across lanes so that consecutive tokens (usually consecutive slots) share
/// cache sectors, and all of a thread's loads are issued before its stores.
inline constexpr int kTileTokens = 8;
inline constexpr int kTileThreads = 256;
inline constexpr int kTileUnroll = 4;
inline constexpr int kTileVectors = kTileThreads * kTileUnroll / kTileTokens;

/// Grid of the vectorized kernels: (token tiles, vector chunks).
inline dim3 tile_grid(int64_t num_tokens, int vectors_per_token) {
  return dim3(static_cast<unsigned>((num_tokens + kTileTokens - 1) / kTileTokens),
              static_cast<unsigned>((vectors_per_token + kTileVectors - 1) / kTileVectors), 1);
}

/// One item of a tile: token `token` (slot `slot`, -1 = skip), kv head `head`, x-group `group`.
struct TileItem {
  int64_t token;
  int64_t slot;
  int head;
  int group;
  bool active;  ///< inside the problem and slot != -1
};

/// Item `u` of the calling thread; `slots` holds the tile's slot numbers (shared memory).
__device__ __forceinline__ TileItem tile_item(const CopyParams& p, const int64_t* slots, int u,
                                              int groups, int vectors) {
  const int idx = threadIdx.x + u * kTileThreads;
  const int t = idx % kTileTokens;
  const int vec = blockIdx.y * kTileVectors + idx / kTileTokens;
  TileItem item;
  item.token = int64_t{blockIdx.x} * kTileTokens + t;
  item.slot = slots[t];
  const int v = min(vec, vectors - 1);
  item.head = v / groups;
  item.group = v - item.head * groups;
  item.active = vec < vectors && item.token < p.num_tokens && item.slot >= 0;
  return item;
}

/// Loads the tile's slot numbers into shared memory (-1 past the last token); contains a
/// __syncthreads().
__device__ __forceinline__ void load_tile_slots(const CopyParams& p, int64_t* slots) {
  if (threadIdx.x < kTileTokens) {
    const int64_t token = int64_t{blockIdx.x} * kTileTokens + threadIdx.x;
    slots[threadIdx.x] = token < p.num_tokens ? p.slot_mapping[token] : -1;
  }
  __syncthreads();
}

}  // namespace pagecheck::kernels::copy_detail
