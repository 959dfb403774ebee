#pragma once
/// Device helpers of the copy kernels: the generic cache offset, the vectorized kernels' item
/// mapping, and chunk loads / stores of both sides, all 64-bit. A chunk is the 16 bytes of cache
/// elements (16 / cache element bytes dims) of one (token, head) that one item moves; its token
/// side is 16 x token bytes / cache bytes bytes (one, two or four 16-byte vectors).
#include <cuda_runtime.h>

#include <cstdint>

#include "common/vec.cuh"
#include "copy/copy_codec.cuh"
#include "copy/copy_params.h"
#include "copy/copy_plan.h"

namespace pagecheck::kernels::copy_detail {

/// Offset of dim `dim` inside a head: (dim / dim_split) * group + (dim % dim_split) * dim.
__device__ __forceinline__ int64_t dim_offset(const CacheTensor& c, int dim) {
  const int g = dim / c.dim_split;
  return int64_t{g} * c.group + int64_t{dim - g * c.dim_split} * c.dim;
}

/// A cache slot number (block * block_size + offset) split into its block and offset.
struct SlotPosition {
  int64_t block;
  int64_t offset;
};

/// Splits `slot` (>= 0) with a 32-bit division where it fits (a 64-bit one is a long software
/// sequence on the GPU; slots reach 2^31 only in caches of more than 2^31 slots).
__device__ __forceinline__ SlotPosition slot_position(int64_t slot, int block_size) {
  SlotPosition s;
  if (slot <= INT32_MAX) {
    const uint32_t narrow = static_cast<uint32_t>(slot);
    const uint32_t block = narrow / static_cast<uint32_t>(block_size);
    s.block = block;
    s.offset = narrow - block * static_cast<uint32_t>(block_size);
  } else {
    s.block = slot / block_size;
    s.offset = slot - s.block * block_size;
  }
  return s;
}

/// n / d for n in [0, 2^31) (FastDiv): one multiply-high, an add and a shift.
__device__ __forceinline__ uint32_t fast_div(uint32_t n, const FastDiv& d) {
  return (__umulhi(n, d.multiplier) + n) >> d.shift;
}

/// slot_position with the launch's FastDiv of block_size (the vectorized kernels).
__device__ __forceinline__ SlotPosition slot_position(int64_t slot, const FastDiv& block_size) {
  SlotPosition s;
  if (slot <= INT32_MAX) {
    const uint32_t narrow = static_cast<uint32_t>(slot);
    const uint32_t block = fast_div(narrow, block_size);
    s.block = block;
    s.offset = narrow - block * block_size.divisor;
  } else {
    s.block = slot / block_size.divisor;
    s.offset = slot - s.block * block_size.divisor;
  }
  return s;
}

/// Offset of (block, head, slot, 0) for the slot at `s`.
__device__ __forceinline__ int64_t row_offset(const CacheTensor& c, const SlotPosition& s,
                                              int head) {
  return s.block * c.block + s.offset * c.slot + int64_t{head} * c.head;
}

/// One item: token `token`, kv head `head`, first dim `dim` of its chunk.
struct TileItem {
  int64_t token;
  int head;
  int dim;
  bool active;  ///< inside the problem (the slot is checked separately)
};

/// Item `u` of the calling thread (kU items per thread, kThreadsFor<kU> threads per block).
/// Consecutive lanes take consecutive items; a block's items are contiguous. With `token_fastest`
/// (p.token_fastest, or a constant of the kernel's CopyPath), 8 consecutive tokens of one chunk
/// (x-split keys: 8 neighbouring 16-byte vectors, values: neighbouring slots of each dim), then the
/// next chunk; otherwise the chunks of one token in order (NHD / HND: one contiguous row per head
/// on both sides).
template <int kU>
__device__ __forceinline__ TileItem tile_item(const CopyParams& p, bool token_fastest, int u,
                                              int chunk_dims) {
  const int64_t idx =
      (int64_t{blockIdx.x} * kU + u) * kThreadsFor<kU> + static_cast<int64_t>(threadIdx.x);
  const int64_t per = p.item_div.divisor;  // items per tile (token_fastest) or per token
  int64_t token;
  int vec;
  // FastDiv where the item index fits in 31 bits (a 64-bit division is a long software sequence).
  const int64_t q =
      idx <= INT32_MAX ? int64_t{fast_div(static_cast<uint32_t>(idx), p.item_div)} : idx / per;
  const int rem = static_cast<int>(idx - q * per);
  if (token_fastest) {
    vec = rem / kTileTokens;
    token = q * kTileTokens + (rem - vec * kTileTokens);
  } else {
    token = q;
    vec = rem;
  }
  TileItem item;
  item.token = token;
  item.head = static_cast<int>(fast_div(static_cast<uint32_t>(vec), p.chunk_div));
  item.dim = (vec - item.head * static_cast<int>(p.chunk_div.divisor)) * chunk_dims;
  item.active = token < p.num_tokens;
  return item;
}

/// Dim `dim` of a tensor as (its dim_split group, its index inside the group).
struct DimPosition {
  int group;
  int in_group;
};

/// dim's group and index without a division in the common layouts: one group (NHD, HND, x-split
/// values: dim_split = head_size) or groups of exactly N dims (x-split keys, N a power of two);
/// a division otherwise.
template <int N>
__device__ __forceinline__ DimPosition dim_position(const CacheTensor& c, int dim) {
  DimPosition d;
  if (dim < c.dim_split) {
    d.group = 0;
  } else if (c.dim_split == N) {
    d.group = dim / N;
  } else {
    d.group = dim / c.dim_split;
  }
  d.in_group = dim - d.group * c.dim_split;
  return d;
}

/// Offset of the first element of a chunk of N dims starting at `d`.
__device__ __forceinline__ int64_t chunk_offset(const CacheTensor& c, const DimPosition& d) {
  return int64_t{d.group} * c.group + int64_t{d.in_group} * c.dim;
}

/// True when dims dim .. dim + n - 1 lie in one dim_split group (then they are c.dim apart from
/// the chunk's first element); `in_group` is dim's index inside its group.
__device__ __forceinline__ bool chunk_in_one_group(const CacheTensor& c, int in_group, int n) {
  return in_group + n <= c.dim_split;
}

/// Loads the N cache elements of a chunk starting at row offset `row` + dim `dim`: one 16-byte
/// load when the tensor allows it, else N scalar loads c.dim apart (one division for the chunk:
/// a chunk inside one dim group, as x-split values always are), or element by element where
/// the chunk crosses a group boundary. kMayVector = false: the caller knows c.vector is zero.
template <typename Elem, int N, bool kMayVector = true>
__device__ __forceinline__ void load_cache_chunk(const CacheTensor& c, int64_t row, int dim,
                                                 Chunk<Elem, N>& out) {
  static_assert(N * sizeof(Elem) == 16, "a cache chunk is 16 bytes");
  const Elem* base = static_cast<const Elem*>(c.data) + row;
  const DimPosition d = dim_position<N>(c, dim);
  if (kMayVector && c.vector) {
    out.v[0] = load16(base + chunk_offset(c, d));
    return;
  }
  if (chunk_in_one_group(c, d.in_group, N)) {
    const Elem* first = base + chunk_offset(c, d);
#pragma unroll
    for (int j = 0; j < N; ++j) out.e[j] = __ldg(first + j * c.dim);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out.e[j] = __ldg(base + dim_offset(c, dim + j));
  }
}

/// Stores a chunk of N cache elements (the mirror of load_cache_chunk).
template <typename Elem, int N, bool kMayVector = true>
__device__ __forceinline__ void store_cache_chunk(const CacheTensor& c, int64_t row, int dim,
                                                  const Chunk<Elem, N>& in) {
  static_assert(N * sizeof(Elem) == 16, "a cache chunk is 16 bytes");
  Elem* base = static_cast<Elem*>(c.data) + row;
  const DimPosition d = dim_position<N>(c, dim);
  if (kMayVector && c.vector) {
    *reinterpret_cast<uint4*>(base + chunk_offset(c, d)) = in.v[0];
    return;
  }
  if (chunk_in_one_group(c, d.in_group, N)) {
    Elem* first = base + chunk_offset(c, d);
#pragma unroll
    for (int j = 0; j < N; ++j) first[j * c.dim] = in.e[j];
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) base[dim_offset(c, dim + j)] = in.e[j];
  }
}

/// Address of (token, head, dim) of a token tensor.
template <typename Elem>
__device__ __forceinline__ Elem* token_at(const TokenTensor& t, int64_t token, int head, int dim) {
  return static_cast<Elem*>(t.data) + token * t.stride_token + int64_t{head} * t.stride_head + dim;
}

/// 16-byte loads of a token-side chunk (the host checked the alignment).
template <typename Elem, int N>
__device__ __forceinline__ void load_token_chunk(const TokenTensor& t, int64_t token, int head,
                                                 int dim, Chunk<Elem, N>& out) {
  const uint4* src = reinterpret_cast<const uint4*>(token_at<Elem>(t, token, head, dim));
#pragma unroll
  for (int i = 0; i < Chunk<Elem, N>::kVectors; ++i) out.v[i] = __ldg(src + i);
}

/// 16-byte stores of a token-side chunk.
template <typename Elem, int N>
__device__ __forceinline__ void store_token_chunk(const TokenTensor& t, int64_t token, int head,
                                                  int dim, const Chunk<Elem, N>& in) {
  uint4* dst = reinterpret_cast<uint4*>(token_at<Elem>(t, token, head, dim));
#pragma unroll
  for (int i = 0; i < Chunk<Elem, N>::kVectors; ++i) dst[i] = in.v[i];
}

/// Butterfly transpose of the kV x kV matrix of 16-byte vectors held by a group of kV
/// consecutive lanes (kV a power of two, the group's first lane a multiple of kV): afterwards
/// v[n] of group lane j is what was v[j] of group lane n. Every lane of the warp must call it.
/// The vector to send is a copy selected by value (an lvalue conditional would put the chunk in
/// local memory).
template <int kV>
__device__ __forceinline__ void transpose_lane_group(uint4 (&v)[kV]) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
  for (int b = 1; b < kV; b <<= 1) {
    const bool upper = (lane & b) != 0;
#pragma unroll
    for (int n = 0; n < kV; ++n) {
      if (n & b) continue;
      const uint4 low = v[n];
      const uint4 high = v[n | b];
      const uint4 send = upper ? low : high;
      uint4 got;
      got.x = __shfl_xor_sync(0xffffffffu, send.x, b);
      got.y = __shfl_xor_sync(0xffffffffu, send.y, b);
      got.z = __shfl_xor_sync(0xffffffffu, send.z, b);
      got.w = __shfl_xor_sync(0xffffffffu, send.w, b);
      v[n] = upper ? got : low;
      v[n | b] = upper ? high : got;
    }
  }
}

/// store_token_chunk by lane groups, for chunks of more than one 16-byte vector: the kV lanes
/// of a group exchange their vectors (transpose_lane_group) and addresses, so that store
/// instruction n of the group writes the whole chunk of its lane n (kV x 16 contiguous bytes,
/// whole 32-byte sectors) instead of every lane writing 16 bytes of its own. Needs no relation
/// between the lanes' items; every lane of the warp must call it (`active`: this lane's item is
/// stored; an inactive lane's chunk and address are never written).
template <typename Elem, int N>
__device__ __forceinline__ void store_token_chunk_grouped(const TokenTensor& t, int64_t token,
                                                          int head, int dim, bool active,
                                                          Chunk<Elem, N> chunk) {
  constexpr int kV = Chunk<Elem, N>::kVectors;
  if constexpr (kV == 1) {
    if (active) store_token_chunk(t, token, head, dim, chunk);
  } else {
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int first = lane & ~(kV - 1);
    const int j = lane - first;
    const uint32_t stored = __ballot_sync(0xffffffffu, active);
    const uint64_t mine = reinterpret_cast<uint64_t>(token_at<Elem>(t, token, head, dim));
    transpose_lane_group<kV>(chunk.v);
#pragma unroll
    for (int n = 0; n < kV; ++n) {
      const uint64_t at = __shfl_sync(0xffffffffu, mine, first + n);
      if ((stored >> (first + n)) & 1u) reinterpret_cast<uint4*>(at)[j] = chunk.v[n];
    }
  }
}

/// A chunk of Codec's cache elements, and its token side.
template <typename Codec>
using CacheChunk = Chunk<typename Codec::CacheElem, kChunkDims<Codec>>;
template <typename Codec>
using TokenChunk = Chunk<typename Codec::TokenElem, kChunkDims<Codec>>;

/// The K and V chunks of a thread's kU items (ChunkT: CacheChunk or TokenChunk). Kept in
/// registers: the kernels index them only inside fully unrolled loops.
template <typename ChunkT, int kU>
struct KvChunks {
  ChunkT k[kU];  ///< key chunk of item u
  ChunkT v[kU];  ///< value chunk of item u
};

/// The K and V scales of a thread's kU items (load_scale: 1 for raw copies, never read), loaded
/// early, with the first loads of the kernel, and made Fp8Scale where they are used.
template <typename Codec, int kU>
struct KvScales {
  float k[kU];  ///< key scale of item u
  float v[kU];  ///< value scale of item u

  /// Loads the scales of item u, whose kv head is `head`.
  __device__ __forceinline__ void load(const CopyParams& p, int u, int head) {
    k[u] = load_scale<Codec>(p.k_scale, p.scale_per_head, head);
    v[u] = load_scale<Codec>(p.v_scale, p.scale_per_head, head);
  }
};

/// One scalar-kernel element: token, head, dim of flat index i (dim fastest).
struct ElementIndex {
  int64_t token;
  int head;
  int dim;
};

__device__ __forceinline__ ElementIndex element_index(const CopyParams& p, int64_t i) {
  const int64_t per_token = int64_t{p.num_kv_heads} * p.head_size;
  ElementIndex e;
  e.token = i / per_token;
  const int rem = static_cast<int>(i - e.token * per_token);
  e.head = rem / p.head_size;
  e.dim = rem - e.head * p.head_size;
  return e;
}

}  // namespace pagecheck::kernels::copy_detail
