/// gather_cached_kv kernels: paged cache -> contiguous key / value rows, for every cache layout
/// the strides describe. Rows whose slot is -1 are left untouched. Raw copies are bit exact;
/// fp8 caches are copied as codes or dequantized (copy_codec.cuh).
#include "copy/copy_codec_chunk.cuh"
#include "copy/copy_family.cuh"
#include "copy/copy_host.h"
#include "copy/copy_item_access.cuh"
#include "copy/copy_kernels.cuh"
#include "copy/copy_slot_rows.cuh"
#include "copy/copy_xsplit_kernels.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::SlotPosition;

/// naive: one thread per (token, head, dim), scalar loads and stores of K and V.
template <typename Codec>
__global__ void gather_naive_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const bool e5m2 = p.fp8_e5m2 != 0;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const copy_detail::ElementIndex e = copy_detail::element_index(p, i);
    const int64_t slot = p.slot_mapping[e.token];
    if (slot < 0) continue;
    const CacheTensor& kc = p.key_cache;
    const CacheTensor& vc = p.value_cache;
    const copy_detail::SlotPosition at = copy_detail::slot_position(slot, p.block_size);
    const CacheElem k = static_cast<const CacheElem*>(
        kc.data)[copy_detail::row_offset(kc, at, e.head) + copy_detail::dim_offset(kc, e.dim)];
    const CacheElem v = static_cast<const CacheElem*>(
        vc.data)[copy_detail::row_offset(vc, at, e.head) + copy_detail::dim_offset(vc, e.dim)];
    const copy_detail::Fp8Scale ks =
        copy_detail::fp8_scale(copy_detail::load_scale<Codec>(p.k_scale, p.scale_per_head, e.head));
    const copy_detail::Fp8Scale vs =
        copy_detail::fp8_scale(copy_detail::load_scale<Codec>(p.v_scale, p.scale_per_head, e.head));
    *copy_detail::token_at<TokenElem>(p.key, e.token, e.head, e.dim) =
        copy_detail::to_token<Codec>(k, ks, e5m2);
    *copy_detail::token_at<TokenElem>(p.value, e.token, e.head, e.dim) =
        copy_detail::to_token<Codec>(v, vs, e5m2);
  }
}

/// vectorized: each thread moves kU items, an item being one 16-byte chunk of cache elements
/// of one (token, head) (see copy_kernels.cuh for the lane order). The slot of each item is read
/// by its own thread (no shared memory, no barrier): first the slots of all the thread's items
/// (issued together), then the cache loads of all of them (move_cache_item: one 16-byte load
/// where chunks are contiguous and aligned, the lane's row pieces where the warp's groups cover
/// whole slot rows, else strided scalar loads), then the stores, so a thread waits for two
/// round trips to memory, not two per item. kPath compiles only the accesses of the layout
/// (copy_item_access.cuh). Token side: chunks of one 16-byte vector stored by their lane; wider
/// ones (fp8 dequantized to 16 or 32-bit tokens) by lane groups (store_token_chunk_grouped), so
/// every lane of the warp reaches the stores. Inactive items (past the end, slot -1) load and
/// store nothing.
template <typename Codec, int kU, copy_detail::CopyPath kPath>
__global__ void __launch_bounds__(copy_detail::kThreadsFor<kU>)
    gather_vectorized_kernel(const __grid_constant__ CopyParams p) {
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  constexpr copy_detail::PathAccess kAccess = copy_detail::path_access<kPath>();
  const auto [stage, e5m2, token_fastest, any_rows] = copy_detail::vectorized_prologue<kPath>(p);
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  copy_detail::KvScales<Codec, kU> scale;  // fp8: issued with the slots
  bool rows[kU];
  copy_detail::KvChunks<copy_detail::CacheChunk<Codec>, kU> kv;
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u] = copy_detail::tile_item<kU>(p, token_fastest, u, kN);
    slot[u] = item[u].active ? __ldg(p.slot_mapping + item[u].token) : -1;
    scale.load(p, u, item[u].head);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u].active = slot[u] >= 0;
    rows[u] = any_rows && copy_detail::warp_slot_rows(item[u].active, slot[u]);
    if (!item[u].active) {  // converted (not stored) by the lane-group stores below
      kv.k[u] = {};
      kv.v[u] = {};
      continue;
    }
    const SlotPosition at = copy_detail::slot_position(slot[u], p.block_div);
    copy_detail::move_cache_item<true, kAccess.key>(p.key_cache, at, item[u].head, item[u].dim,
                                                    rows[u], kv.k[u]);
    copy_detail::move_cache_item<true, kAccess.value>(p.value_cache, at, item[u].head, item[u].dim,
                                                      rows[u], kv.v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (rows[u]) {  // the whole warp: transpose the row pieces into the lanes' tokens
      if (copy_detail::uses_rows<kAccess.key>(p.key_cache, true)) {
        copy_detail::rows_to_tokens(stage, kv.k[u]);
      }
      if (copy_detail::uses_rows<kAccess.value>(p.value_cache, true)) {
        copy_detail::rows_to_tokens(stage, kv.v[u]);
      }
    }
    copy_detail::TokenChunk<Codec> kt;
    copy_detail::TokenChunk<Codec> vt;
    const int head = item[u].head;
    copy_detail::chunk_to_tokens<Codec>(kv.k[u], kt, copy_detail::fp8_scale(scale.k[u]), e5m2);
    copy_detail::chunk_to_tokens<Codec>(kv.v[u], vt, copy_detail::fp8_scale(scale.v[u]), e5m2);
    copy_detail::store_token_chunk_grouped(p.key, item[u].token, head, item[u].dim, item[u].active,
                                           kt);
    copy_detail::store_token_chunk_grouped(p.value, item[u].token, head, item[u].dim,
                                           item[u].active, vt);
  }
}

/// The family's kernel templates for CopyFamily (copy_family.cuh).
template <typename Codec>
using GatherScalar = KernelRef<gather_naive_kernel<Codec>>;
template <typename Codec, int kU, copy_detail::CopyPath kPath>
using GatherVectorized = KernelRef<gather_vectorized_kernel<Codec, kU, kPath>>;

}  // namespace

KernelStatus launch_gather(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                           cudaStream_t stream) {
  return launch_copy<CopyFamily<true, GatherScalar, GatherVectorized>>(variant, codec, p, stream);
}

}  // namespace pagecheck::kernels
