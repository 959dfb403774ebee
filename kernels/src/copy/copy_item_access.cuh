#pragma once
/// The cache-side access of one vectorized item, shared by the gather (loads) and the reshape
/// (stores), compiled for the kernel's CopyPath (copy_plan.h): a tensor known to take 16-byte
/// chunks holds only its one 16-byte access; a tensor known to be x-split values holds the slot
/// rows and the strided fallback; the generic path decides per tensor at run time.
#include <cuda_runtime.h>

#include <cstdint>

#include "copy/copy_codec.cuh"
#include "copy/copy_kernels.cuh"
#include "copy/copy_plan.h"
#include "copy/copy_slot_rows.cuh"

namespace pagecheck::kernels::copy_detail {

/// How one cache tensor is accessed by a kernel of a given path.
enum class TensorAccess : int {
  kAny = 0,     ///< run time: c.vector, else slot rows where `rows` and c.slot_rows, else strided
  kVector = 1,  ///< c.vector is set: one 16-byte access
  kRows = 2,    ///< c.slot_rows is set: slot rows where `rows`, else strided
};

/// The access of K (`value` false) or V under path P.
template <CopyPath P>
__host__ __device__ constexpr TensorAccess tensor_access(bool value) {
  if (P == CopyPath::kVector) return TensorAccess::kVector;
  if (P == CopyPath::kXSplit) return value ? TensorAccess::kRows : TensorAccess::kVector;
  return TensorAccess::kAny;
}

/// True when the kernel of path P may take token-fastest lanes (p.token_fastest for kGeneric).
template <CopyPath P>
__device__ __forceinline__ bool path_token_fastest(const CopyParams& p) {
  if constexpr (P == CopyPath::kGeneric) {
    return p.token_fastest != 0;
  } else {
    return P == CopyPath::kXSplit;
  }
}

/// True when a kernel of path P may find whole slot rows (then every item asks warp_slot_rows).
template <CopyPath P>
__device__ __forceinline__ bool path_any_rows(const CopyParams& p) {
  return P != CopyPath::kVector && path_token_fastest<P>(p) &&
         (p.key_cache.slot_rows || p.value_cache.slot_rows);
}

/// The accesses of K and V under one path.
struct PathAccess {
  TensorAccess key;    ///< tensor_access<P>(false)
  TensorAccess value;  ///< tensor_access<P>(true)
};

template <CopyPath P>
__host__ __device__ constexpr PathAccess path_access() {
  return {tensor_access<P>(false), tensor_access<P>(true)};
}

/// What both vectorized kernels start from: the shared memory of the warps' row-piece
/// transposes and the run-time flags of their path.
struct VectorizedPrologue {
  SlotRowStage& stage;  ///< rows_to_tokens / tokens_to_rows
  bool e5m2;            ///< an fp8 cache is E5M2 (else E4M3; raw copies ignore it)
  bool token_fastest;   ///< path_token_fastest
  bool any_rows;        ///< path_any_rows
};

/// The VectorizedPrologue of path P. Call it once per kernel: its shared memory is a static
/// `__shared__` of this function, the same for every call in one block.
template <CopyPath P>
__device__ __forceinline__ VectorizedPrologue vectorized_prologue(const CopyParams& p) {
  __shared__ SlotRowStage stage;
  return {stage, p.fp8_e5m2 != 0, path_token_fastest<P>(p), path_any_rows<P>(p)};
}

/// True when tensor `c` accessed as A uses the row pieces of the warp for this item.
template <TensorAccess A>
__device__ __forceinline__ bool uses_rows(const CacheTensor& c, bool rows) {
  if constexpr (A == TensorAccess::kVector) {
    return false;
  } else if constexpr (A == TensorAccess::kRows) {
    return rows;
  } else {
    return rows && !c.vector && c.slot_rows;
  }
}

/// Loads (kLoad) or stores the cache chunk of one item: token slot `at`, kv head `head`, chunk
/// starting at dim `dim`. `rows`: the warp's groups cover whole slot rows (warp_slot_rows), so
/// a tensor with slot rows moves the lane's row pieces (transposed by the caller).
template <bool kLoad, TensorAccess A, typename Elem, int N>
__device__ __forceinline__ void move_cache_item(const CacheTensor& c, const SlotPosition& at,
                                                int head, int dim, bool rows,
                                                Chunk<Elem, N>& chunk) {
  if constexpr (A == TensorAccess::kVector) {
    Elem* first = static_cast<Elem*>(c.data) + row_offset(c, at, head) +
                  chunk_offset(c, dim_position<N>(c, dim));
    if constexpr (kLoad) {
      chunk.v[0] = load16(first);
    } else {
      *reinterpret_cast<uint4*>(first) = chunk.v[0];
    }
    return;
  } else {
    constexpr bool kMayVector = A == TensorAccess::kAny;
    if (uses_rows<A>(c, rows)) {
      const SlotPosition first{at.block, at.offset - lane_in_group()};
      const int64_t row = row_offset(c, first, head);
      if constexpr (kLoad) {
        load_slot_rows(c, row, dim, chunk);
      } else {
        store_slot_rows(c, row, dim, chunk);
      }
    } else if constexpr (kLoad) {
      load_cache_chunk<Elem, N, kMayVector>(c, row_offset(c, at, head), dim, chunk);
    } else {
      store_cache_chunk<Elem, N, kMayVector>(c, row_offset(c, at, head), dim, chunk);
    }
  }
}

}  // namespace pagecheck::kernels::copy_detail
