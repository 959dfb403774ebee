#pragma once
/// Slot rows: whole-row accesses along the slot axis of a cache tensor whose slots are
/// contiguous (CacheTensor::slot_rows; x-split values are [block][head][dim][slot]).
///
/// In the token-fastest lane order the 8 lanes of a group (threadIdx.x / kTileTokens) share
/// one chunk (kv head, N = 16 / E dims) of 8 consecutive tokens, one token per lane. When the
/// group's tokens sit in 8 consecutive slots of one block from a slot that is a multiple of
/// kTileTokens (prefill, whole blocks), the group's 128 cache bytes are N rows (dims) of 8 slots
/// x E bytes: the lanes move them as aligned row pieces of 16 bytes (8 for E = 1: one 16-byte
/// access where the lane's two rows are adjacent, paired_pieces), one or two per lane, and
/// transpose them through shared memory to or from the per-lane chunk (the N dims of the lane's
/// token). The decision is per warp (all its groups, one __all_sync), so the transposes'
/// __syncwarp() is reached by every lane; otherwise the kernels use strided per-element accesses.
/// Pure data movement: bit exact.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "copy/copy_codec.cuh"
#include "copy/copy_kernels.cuh"

namespace pagecheck::kernels::copy_detail {

/// Geometry of one group's rows for cache elements of E bytes.
template <int E>
struct SlotRows {
  static constexpr int kRowBytes = kTileTokens * E;               ///< one dim, 8 slots
  static constexpr int kPiece = kRowBytes < 16 ? kRowBytes : 16;  ///< bytes per access
  static constexpr int kPieces = 16 / kPiece;                     ///< accesses per lane
  using Piece = std::conditional_t<kPiece == 16, uint4, uint2>;
};

/// Shared-memory staging of a block: one 160-byte area per group (128 bytes and 32 of padding,
/// so that the four groups of a warp use different banks).
struct SlotRowStage {
  static constexpr int kGroupBytes = 160;
  alignas(16) unsigned char bytes[kTileThreads / kTileTokens][kGroupBytes];
};

/// The lane's index in its group (= its token's index in the tile).
__device__ __forceinline__ int lane_in_group() {
  return static_cast<int>(threadIdx.x) & (kTileTokens - 1);
}

/// True on every lane of the warp when each of its groups has all 8 tokens active, in slots
/// first .. first + 7 with first a multiple of kTileTokens (one block: the host requires
/// block_size to be a multiple of kTileTokens for slot_rows). Every lane of the warp must call it.
__device__ __forceinline__ bool warp_slot_rows(bool active, int64_t slot) {
  const int in_group = lane_in_group();
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t first = __shfl_sync(0xffffffffu, slot, lane - in_group);
  const bool ok = active && first >= 0 && first % kTileTokens == 0 && slot == first + in_group;
  return __all_sync(0xffffffffu, ok) != 0;
}

/// Piece p of the lane: its byte offset in the group's rows and its (row, byte in row).
template <int E>
struct PieceAt {
  int byte;  ///< offset in the group's N x kRowBytes bytes
  int row;   ///< dim index in the chunk
  int col;   ///< byte in the row
};

template <int E>
__device__ __forceinline__ PieceAt<E> piece_at(int p) {
  using R = SlotRows<E>;
  PieceAt<E> a;
  a.byte = (lane_in_group() * R::kPieces + p) * R::kPiece;
  a.row = a.byte / R::kRowBytes;
  a.col = a.byte - a.row * R::kRowBytes;
  return a;
}

/// Address of piece p: `row` is the offset of (block, head, first slot of the group), `dim` the
/// chunk's first dim.
template <typename Elem, int N>
__device__ __forceinline__ Elem* piece_address(const CacheTensor& c, int64_t row, int dim, int p) {
  const PieceAt<sizeof(Elem)> a = piece_at<sizeof(Elem)>(p);
  const DimPosition d = dim_position<N>(c, dim + a.row);
  return static_cast<Elem*>(c.data) + row + chunk_offset(c, d) + a.col / sizeof(Elem);
}

/// The lane's pieces, held in the bytes of a 16-byte chunk register.
template <typename Elem, int N>
__device__ __forceinline__ typename SlotRows<sizeof(Elem)>::Piece& piece(Chunk<Elem, N>& c, int p) {
  return reinterpret_cast<typename SlotRows<sizeof(Elem)>::Piece*>(c.v)[p];
}

/// Calls f(address of piece p, p) for each of the lane's row pieces.
template <typename Elem, int N, typename F>
__device__ __forceinline__ void for_each_piece(const CacheTensor& c, int64_t row, int dim, F&& f) {
  using Piece = typename SlotRows<sizeof(Elem)>::Piece;
#pragma unroll
  for (int p = 0; p < SlotRows<sizeof(Elem)>::kPieces; ++p) {
    f(reinterpret_cast<Piece*>(piece_address<Elem, N>(c, row, dim, p)), p);
  }
}

/// The lane's pieces as one aligned 16-byte run, or nullptr. With 8-byte pieces (1-byte
/// elements) the lane's two pieces are rows 2l and 2l + 1 of its group; where the tensor's rows
/// are exactly one piece apart (a block of kTileTokens slots: each dim's row is the whole block
/// row) and the first is 16-byte aligned, they are one 16-byte access instead of two half-sector
/// ones. Decided from the two addresses alone, so any strides and dim groups are safe.
template <typename Elem, int N>
__device__ __forceinline__ uint4* paired_pieces(const CacheTensor& c, int64_t row, int dim) {
  if constexpr (SlotRows<sizeof(Elem)>::kPieces != 2) {
    return nullptr;
  } else {
    const auto first = reinterpret_cast<uintptr_t>(piece_address<Elem, N>(c, row, dim, 0));
    const auto second = reinterpret_cast<uintptr_t>(piece_address<Elem, N>(c, row, dim, 1));
    const bool paired = second == first + SlotRows<sizeof(Elem)>::kPiece && first % 16 == 0;
    return paired ? reinterpret_cast<uint4*>(first) : nullptr;
  }
}

/// Loads the lane's row pieces into `out` (still in row order; rows_to_tokens transposes them).
template <typename Elem, int N>
__device__ __forceinline__ void load_slot_rows(const CacheTensor& c, int64_t row, int dim,
                                               Chunk<Elem, N>& out) {
  if (const uint4* run = paired_pieces<Elem, N>(c, row, dim)) {
    out.v[0] = __ldg(run);
    return;
  }
  for_each_piece<Elem, N>(c, row, dim, [&](auto* at, int p) { piece(out, p) = __ldg(at); });
}

/// Stores the lane's row pieces held in `in` (after tokens_to_rows).
template <typename Elem, int N>
__device__ __forceinline__ void store_slot_rows(const CacheTensor& c, int64_t row, int dim,
                                                Chunk<Elem, N>& in) {
  if (uint4* run = paired_pieces<Elem, N>(c, row, dim)) {
    *run = in.v[0];
    return;
  }
  for_each_piece<Elem, N>(c, row, dim, [&](auto* at, int p) { *at = piece(in, p); });
}

/// Row pieces -> the lane token's N elements, through the group's staging area (warp-uniform:
/// every lane of the warp calls it).
template <typename Elem, int N>
__device__ __forceinline__ void rows_to_tokens(SlotRowStage& stage, Chunk<Elem, N>& c) {
  using R = SlotRows<sizeof(Elem)>;
  unsigned char* g = stage.bytes[threadIdx.x / kTileTokens];
#pragma unroll
  for (int p = 0; p < R::kPieces; ++p) {
    *reinterpret_cast<typename R::Piece*>(g + piece_at<sizeof(Elem)>(p).byte) = piece(c, p);
  }
  __syncwarp();
  const int t = lane_in_group();
#pragma unroll
  for (int j = 0; j < N; ++j) {
    c.e[j] = *reinterpret_cast<const Elem*>(g + j * R::kRowBytes + t * sizeof(Elem));
  }
  __syncwarp();  // the area is free for the next item
}

/// The lane token's N elements -> row pieces (the mirror of rows_to_tokens).
template <typename Elem, int N>
__device__ __forceinline__ void tokens_to_rows(SlotRowStage& stage, Chunk<Elem, N>& c) {
  using R = SlotRows<sizeof(Elem)>;
  unsigned char* g = stage.bytes[threadIdx.x / kTileTokens];
  const int t = lane_in_group();
#pragma unroll
  for (int j = 0; j < N; ++j) {
    *reinterpret_cast<Elem*>(g + j * R::kRowBytes + t * sizeof(Elem)) = c.e[j];
  }
  __syncwarp();
#pragma unroll
  for (int p = 0; p < R::kPieces; ++p) {
    piece(c, p) = *reinterpret_cast<const typename R::Piece*>(g + piece_at<sizeof(Elem)>(p).byte);
  }
  __syncwarp();
}

}  // namespace pagecheck::kernels::copy_detail
