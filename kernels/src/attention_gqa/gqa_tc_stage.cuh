#pragma once
/// The K/V stage copies of v3_gqa's tensor-core kernel (gqa_tc_kernel.cuh): which keys of a
/// stage each thread copies, their block-table entries loaded one stage ahead (so that no
/// table load waits in the chain between a stage's barrier and its copies), and the cp.async
/// copies themselves. K has 16-byte vectors along the dims; V along the dims (the same items as
/// K) or along the slots (a vector of kVector keys of one dim).
/// A K tensor whose consecutive slots are consecutive vectors (x-split) is copied slots fastest
/// into a stage in its own order, [vector][key] (KeyStage): 8 threads then move one 128-byte
/// line of the cache into 128 contiguous bytes of shared memory. Into a [key][dim] stage each
/// 32-byte sector of it would go to two places, which cp.async moves as two transfers (ncu:
/// twice the L2 sectors and 8x the shared-memory wavefronts of the NHD copies,
/// docs/performance.md).
#include <cuda_runtime.h>

#include <cstdint>

#include "attention_gqa/gqa_load.cuh"
#include "attention_gqa/gqa_mma.cuh"
#include "attention_gqa/gqa_params.h"
#include "attention_gqa/gqa_tc_traits.h"

namespace pagecheck::kernels::gqa {

/// Where (key, dim) of a K stage lies: element key * key + (dim / kVector) * vector +
/// dim % kVector. [key][dim] rows (key = kRowStride, vector = kVector), or [vector][key] for
/// a K copied slots fastest (key = kVector, vector = kTile * kVector).
struct KeyStage {
  int key;     ///< elements between keys
  int vector;  ///< elements between 16-byte vectors of a key
};

/// Per-block constants of the stage copies, in shared memory: the element offset of each
/// 16-byte vector of a token (K and V along the dims) and of each dim (V along the slots).
template <int HEAD, int KV_BYTES>
struct StageOffsets {
  int32_t key_vec[HEAD / (16 / KV_BYTES)];    ///< K: dim offset of vector j
  int32_t value_vec[HEAD / (16 / KV_BYTES)];  ///< V along the dims: dim offset of vector j
  int32_t value_dim[HEAD];                    ///< V along the slots: offset of dim d
};

/// The copy items of one stage and this thread's share of them.
template <int HEAD, class KV>
struct StageItems {
  using Tr = GqaTcTraits<HEAD, sizeof(KV)>;
  static constexpr int kVec = Tr::kVector;            ///< cache elements per 16-byte copy
  static constexpr int kChunks = HEAD / kVec;         ///< 16-byte vectors per token
  static constexpr int kItems = Tr::kTile * kChunks;  ///< dim vectors of a stage (K or V)
  static constexpr int kIters = (kItems + Tr::kThreads - 1) / Tr::kThreads;  ///< per thread
  /// Every item of a thread has the same vector index, in both item orders (stage_item), and
  /// its item i is kKeyStep keys after item i - 1 (ThreadItems).
  static constexpr bool kFixedChunk =
      Tr::kThreads % kChunks == 0 && (Tr::kThreads / 8) % kChunks == 0;
  static constexpr int kKeyStep =
      Tr::kThreads / kChunks;  ///< kFixedChunk: keys between a thread's items
  static constexpr int kSlotChunks = Tr::kTile / kVec;   ///< key vectors per dim (V slots)
  static constexpr int kSlotItems = HEAD * kSlotChunks;  ///< slot vectors of a stage
  static constexpr int kSlotIters = (kSlotItems + Tr::kThreads - 1) / Tr::kThreads;
  static_assert(Tr::kThreads % kSlotChunks == 0, "a thread keeps its key vector");
  /// [key][dim] rows: K copied dims fastest, and V along the dims.
  static constexpr KeyStage kRowMajor{Tr::kRowStride, kVec};
  /// [vector][key]: K copied slots fastest (x-split).
  static constexpr KeyStage kVectorMajor{kVec, Tr::kTile* kVec};
};

/// Key and vector index of dim item c of a stage: dims fastest (key c / kChunks), or with
/// `slots_fast` 8 consecutive keys of one vector fastest, then the vectors, then the next 8.
struct StageItem {
  int key;    ///< key of the stage
  int chunk;  ///< 16-byte vector of the key's dims
};
template <int HEAD, class KV>
__device__ __forceinline__ StageItem stage_item(int c, bool slots_fast) {
  constexpr int kChunks = StageItems<HEAD, KV>::kChunks;
  if (slots_fast) return {c % 8 + 8 * (c / (8 * kChunks)), (c / 8) % kChunks};
  return {c / kChunks, c % kChunks};
}

/// This thread's dim items of every stage, computed once per block: the K stage order and,
/// where StageItems::kFixedChunk holds, item 0's key and stage places (item i lies kKeyStep
/// keys further), so the copies of a stage compute no item index.
struct ThreadItems {
  bool slots_fast;   ///< K copied slots fastest into [vector][key] (x-split), else [key][dim]
  KeyStage k_order;  ///< the K stage layout
  int key;           ///< kFixedChunk: key of item 0
  int chunk;         ///< kFixedChunk: the vector of every item
  int k_dst;         ///< kFixedChunk: K stage element of item 0
  int k_step;        ///< kFixedChunk: K stage elements between items
  int v_dst;         ///< kFixedChunk: [key][dim] V stage element of item 0
};
template <int HEAD, class KV>
__device__ __forceinline__ ThreadItems thread_items(bool slots_fast) {
  using It = StageItems<HEAD, KV>;
  const StageItem first = stage_item<HEAD, KV>(threadIdx.x, slots_fast);
  const KeyStage k = slots_fast ? It::kVectorMajor : It::kRowMajor;
  return {slots_fast,
          k,
          first.key,
          first.chunk,
          first.key * k.key + first.chunk * k.vector,
          It::kKeyStep * k.key,
          first.key * It::kRowMajor.key + first.chunk * It::kRowMajor.vector};
}

/// Block-table facts of this thread's items in one stage, loaded one stage before its copies.
template <int HEAD, class KV>
struct StageEntries {
  using It = StageItems<HEAD, KV>;
  int32_t phys[It::kIters];  ///< dim items: physical block of the item's key, -1: not read
  int32_t slot[It::kIters];  ///< dim items: the key's slot in its block
  int32_t v_phys;            ///< slot vector: its physical block, -1: no key of it is read
  int32_t v_slot0;           ///< slot vector: the slot of its first key
};

/// The block of a key position and the position's slot in it: a shift and a mask when the
/// block size is a power of two (POW2). Positions are non-negative.
struct BlockSlot {
  uint32_t block;  ///< index into the sequence's block-table row
  int slot;        ///< slot within the block
};
template <bool POW2>
__device__ __forceinline__ BlockSlot block_of(const GqaParams& p, int tok) {
  const uint32_t t = static_cast<uint32_t>(tok);
  if constexpr (POW2) {
    return {t >> p.block_shift, static_cast<int>(t & static_cast<uint32_t>(p.block_size - 1))};
  } else {
    const uint32_t b = t / static_cast<uint32_t>(p.block_size);
    return {b, static_cast<int>(t - b * static_cast<uint32_t>(p.block_size))};
  }
}

/// True when every key of the stage at `tile0` lies inside [span_lo, span_hi): its entries and
/// copies need no per-item bounds (every stage of a partition but its first and last).
__device__ __forceinline__ bool interior_stage(int tile0, int tile, int span_lo, int span_hi) {
  return tile0 >= span_lo && tile0 + tile <= span_hi;
}

/// Loads the table entries of stage `tile0` for this thread: keys outside [span_lo, span_hi)
/// and items past the stage are not read (phys = -1). INTERIOR: the stage is interior_stage,
/// so no key is checked.
template <int HEAD, class KV, bool POW2, bool INTERIOR>
__device__ __forceinline__ void load_entries(StageEntries<HEAD, KV>& e, const GqaParams& p,
                                             const int32_t* table_row, int tile0, int span_lo,
                                             int span_hi, const ThreadItems& items, bool v_slots) {
  using It = StageItems<HEAD, KV>;
  using Tr = typename It::Tr;
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < It::kIters; ++i) {
    const int c = tid + i * Tr::kThreads;
    const int tok = tile0 + (It::kFixedChunk ? items.key + i * It::kKeyStep
                                             : stage_item<HEAD, KV>(c, items.slots_fast).key);
    e.phys[i] = -1;
    e.slot[i] = 0;
    if ((It::kItems % Tr::kThreads == 0 || c < It::kItems) &&
        (INTERIOR || (tok >= span_lo && tok < span_hi))) {
      const BlockSlot bs = block_of<POW2>(p, tok);
      e.slot[i] = bs.slot;
      e.phys[i] = __ldg(table_row + bs.block);
    }
  }
  e.v_phys = -1;
  e.v_slot0 = 0;
  if (v_slots) {
    // The keys of a vector (kVec-aligned) share one block: block_size % kVec == 0 (host).
    const int tok0 = tile0 + tid % It::kSlotChunks * It::kVec;
    const int lo = INTERIOR ? tok0 : max(tok0, span_lo);
    const int hi = INTERIOR ? tok0 + It::kVec : min(tok0 + It::kVec, span_hi);
    if (INTERIOR || lo < hi) {
      const BlockSlot bs = block_of<POW2>(p, lo);
      e.v_slot0 = tok0 - (lo - bs.slot);  // lo - slot: the block's first position
      e.v_phys = __ldg(table_row + bs.block);
    }
  }
}

/// Per-thread constants of the copies: the dim offset of this thread's vector when it is the
/// same for all its items (StageItems::kFixedChunk), else read from the offsets table.
struct ChunkOffsets {
  int32_t key;    ///< K: offset of this thread's vector (ThreadItems::chunk)
  int32_t value;  ///< V along the dims: the same
};

/// Issues the copies of stage `tile0` (entries `e`) into k_dst / v_dst. Keys not read are
/// zero-filled (a 0-byte cp.async of an in-bounds address); a slot vector only partly inside
/// [span_lo, span_hi) is read element by element (never beyond the span). k_head / v_head:
/// the tensors at this kv head; dim items in stage_item's order (`items.slots_fast`), K into
/// `items.k_order`, V along the dims into [key][dim]. Block, slot and dim strides and a slot's
/// offset within a block fit in 32 bits (host check in gqa_uses_tensor_cores); only the block
/// term is 64-bit. INTERIOR: the stage is interior_stage (every item is read whole).
template <int HEAD, class KV, bool INTERIOR>
__device__ __forceinline__ void issue_stage(const StageEntries<HEAD, KV>& e, const GqaParams& p,
                                            const KV* k_head, const KV* v_head,
                                            const StageOffsets<HEAD, sizeof(KV)>& off,
                                            ChunkOffsets fixed, int tile0, int span_lo, int span_hi,
                                            const ThreadItems& items, bool v_slots, KV* k_dst,
                                            KV* v_dst) {
  using It = StageItems<HEAD, KV>;
  using Tr = typename It::Tr;
  constexpr int kVec = It::kVec;
  const int tid = threadIdx.x;
  // Item i goes to dst + first + i * step (kFixedChunk), else to its place in `order`.
  auto copy_dims = [&](const KV* head, uint32_t block_stride, uint32_t slot_stride,
                       const int32_t* vec_off, int32_t fixed_off, KeyStage order, int first,
                       int step, KV* dst) {
#pragma unroll
    for (int i = 0; i < It::kIters; ++i) {
      const int c = tid + i * Tr::kThreads;
      if (It::kItems % Tr::kThreads != 0 && c >= It::kItems) break;
      int32_t voff;
      int place;
      if constexpr (It::kFixedChunk) {
        voff = fixed_off;
        place = first + i * step;
      } else {
        const StageItem item = stage_item<HEAD, KV>(c, items.slots_fast);
        voff = vec_off[item.chunk];
        place = item.key * order.key + item.chunk * order.vector;
      }
      const bool read = INTERIOR || e.phys[i] >= 0;
      const uint32_t ph = read ? static_cast<uint32_t>(e.phys[i]) : 0u;
      const uint64_t o =
          uint64_t{ph} * block_stride +
          (static_cast<uint32_t>(e.slot[i]) * slot_stride + static_cast<uint32_t>(voff));
      cp_async16(dst + place, head + o, read ? 16 : 0);
    }
  };
  copy_dims(k_head, static_cast<uint32_t>(p.key.block), static_cast<uint32_t>(p.key.slot),
            off.key_vec, fixed.key, items.k_order, items.k_dst, items.k_step, k_dst);
  if (!v_slots) {
    copy_dims(v_head, static_cast<uint32_t>(p.value.block), static_cast<uint32_t>(p.value.slot),
              off.value_vec, fixed.value, It::kRowMajor, items.v_dst,
              It::kKeyStep * It::kRowMajor.key, v_dst);
    return;
  }
  // V with slots contiguous: item (dim, key vector kc = tid % kSlotChunks).
  const int kc = tid % It::kSlotChunks;
  const int tok0 = tile0 + kc * kVec;
  const bool full = INTERIOR || (tok0 >= span_lo && tok0 + kVec <= span_hi);
  const bool v_read = INTERIOR || e.v_phys >= 0;
  const KV* const vsrc = v_head +
                         uint64_t{static_cast<uint32_t>(v_read ? e.v_phys : 0)} *
                             static_cast<uint32_t>(p.value.block) +
                         e.v_slot0;
#pragma unroll
  for (int i = 0; i < It::kSlotIters; ++i) {
    const int c = tid + i * Tr::kThreads;
    if (It::kSlotItems % Tr::kThreads != 0 && c >= It::kSlotItems) break;
    const int dim = c / It::kSlotChunks;
    KV* const dst = v_dst + dim * Tr::kSlotStride + kc * kVec;
    if (!v_read || full) {
      cp_async16(dst, vsrc + off.value_dim[dim], v_read ? 16 : 0);
    } else {
      const KV* const src = vsrc + off.value_dim[dim];
#pragma unroll 1
      for (int j = 0; j < kVec; ++j) {
        const int tok = tok0 + j;
        dst[j] = tok >= span_lo && tok < span_hi ? src[j] : KV(0.f);
      }
    }
  }
}

}  // namespace pagecheck::kernels::gqa
