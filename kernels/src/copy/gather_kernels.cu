/// gather_cached_kv kernels: paged cache -> contiguous key / value rows, for every cache layout
/// the strides describe. Rows whose slot is -1 are left untouched. Raw copies are bit exact;
/// fp8 caches are copied as codes or dequantized (copy_codec.cuh).
#include "copy/copy_codec_chunk.cuh"
#include "copy/copy_dispatch.cuh"
#include "copy/copy_host.h"
#include "copy/copy_item_access.cuh"
#include "copy/copy_kernels.cuh"
#include "copy/copy_slot_rows.cuh"
#include "copy/copy_xsplit_kernels.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::Chunk;
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
/// (copy_item_access.cuh). Token side: one, two or four 16-byte stores per tensor and item.
/// Inactive items (past the end, slot -1) load and store nothing.
template <typename Codec, int kU, copy_detail::CopyPath kPath>
__global__ void __launch_bounds__(copy_detail::kThreadsFor<kU>)
    gather_vectorized_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  using copy_detail::TensorAccess;
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  constexpr TensorAccess kKey = copy_detail::tensor_access<kPath>(false);
  constexpr TensorAccess kValue = copy_detail::tensor_access<kPath>(true);
  __shared__ copy_detail::SlotRowStage stage;
  const bool e5m2 = p.fp8_e5m2 != 0;
  const bool token_fastest = copy_detail::path_token_fastest<kPath>(p);
  const bool any_rows = copy_detail::path_any_rows<kPath>(p);
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  float k_scale[kU];  // fp8: issued with the slots, not after the data arrived
  float v_scale[kU];
  bool rows[kU];
  Chunk<CacheElem, kN> k[kU];
  Chunk<CacheElem, kN> v[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u] = copy_detail::tile_item<kU>(p, token_fastest, u, kN);
    slot[u] = item[u].active ? __ldg(p.slot_mapping + item[u].token) : -1;
    k_scale[u] = copy_detail::load_scale<Codec>(p.k_scale, p.scale_per_head, item[u].head);
    v_scale[u] = copy_detail::load_scale<Codec>(p.v_scale, p.scale_per_head, item[u].head);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u].active = slot[u] >= 0;
    rows[u] = any_rows && copy_detail::warp_slot_rows(item[u].active, slot[u]);
    if (!item[u].active) continue;
    const SlotPosition at = copy_detail::slot_position(slot[u], p.block_div);
    copy_detail::move_cache_item<true, kKey>(p.key_cache, at, item[u].head, item[u].dim, rows[u],
                                             k[u]);
    copy_detail::move_cache_item<true, kValue>(p.value_cache, at, item[u].head, item[u].dim,
                                               rows[u], v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (rows[u]) {  // the whole warp: transpose the row pieces into the lanes' tokens
      if (copy_detail::uses_rows<kKey>(p.key_cache, true)) copy_detail::rows_to_tokens(stage, k[u]);
      if (copy_detail::uses_rows<kValue>(p.value_cache, true)) {
        copy_detail::rows_to_tokens(stage, v[u]);
      }
    }
    if (!item[u].active) continue;
    Chunk<TokenElem, kN> kt;
    Chunk<TokenElem, kN> vt;
    const int head = item[u].head;
    copy_detail::chunk_to_tokens<Codec>(k[u], kt, copy_detail::fp8_scale(k_scale[u]), e5m2);
    copy_detail::chunk_to_tokens<Codec>(v[u], vt, copy_detail::fp8_scale(v_scale[u]), e5m2);
    copy_detail::store_token_chunk(p.key, item[u].token, head, item[u].dim, kt);
    copy_detail::store_token_chunk(p.value, item[u].token, head, item[u].dim, vt);
  }
}

/// The gather kernels for launch_vectorized_copy.
struct GatherKernels {
  static constexpr bool kGather = true;
  static constexpr const char* kName = "gather_vectorized launch";
  static constexpr const char* kScalarName = "gather_naive_kernel launch";
  template <typename Codec>
  static CopyKernel scalar() {
    return gather_naive_kernel<Codec>;
  }
  template <typename Codec, int kU, copy_detail::CopyPath kPath>
  static CopyKernel vectorized() {
    return gather_vectorized_kernel<Codec, kU, kPath>;
  }
  template <typename Codec, int kU>
  static CopyKernel staged() {
    return copy_detail::gather_xsplit_kernel<Codec, kU>;
  }
};

}  // namespace

KernelStatus launch_gather(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                           cudaStream_t stream) {
  return launch_copy<GatherKernels>(variant, codec, p, stream);
}

}  // namespace pagecheck::kernels
