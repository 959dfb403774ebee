/// gather_cached_kv kernels: paged cache -> contiguous key / value rows, for every cache layout
/// the strides describe. Rows whose slot is -1 are left untouched. Raw copies are bit exact;
/// fp8 caches are copied as codes or dequantized (copy_codec.cuh).
#include "copy/copy_dispatch.cuh"
#include "copy/copy_host.h"
#include "copy/copy_kernels.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::Chunk;

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
    const CacheElem k = static_cast<const CacheElem*>(
        kc.data)[copy_detail::row_offset(kc, slot, p.block_size, e.head) +
                 copy_detail::dim_offset(kc, e.dim)];
    const CacheElem v = static_cast<const CacheElem*>(
        vc.data)[copy_detail::row_offset(vc, slot, p.block_size, e.head) +
                 copy_detail::dim_offset(vc, e.dim)];
    const float ks = copy_detail::scale_of<Codec>(p.k_scale, p.scale_per_head, e.head);
    const float vs = copy_detail::scale_of<Codec>(p.v_scale, p.scale_per_head, e.head);
    *copy_detail::token_at<TokenElem>(p.key, e.token, e.head, e.dim) =
        copy_detail::to_token<Codec>(k, ks, e5m2);
    *copy_detail::token_at<TokenElem>(p.value, e.token, e.head, e.dim) =
        copy_detail::to_token<Codec>(v, vs, e5m2);
  }
}

/// vectorized: each item is one 16-byte chunk of cache elements of one (token, head) (see
/// copy_kernels.cuh for the lane order). Cache side: one 16-byte load per tensor where the
/// chunk is contiguous and aligned (x-split keys, NHD, HND), else strided scalar loads
/// (x-split values: lanes of consecutive slots read neighbouring elements). Token side: one,
/// two or four 16-byte stores. The slot of each item is read by its own thread (no shared
/// memory, no barrier): first the slots of all the thread's items (issued together), then the
/// cache loads of all of them, then the stores, so a thread waits for two round trips to
/// memory, not two per item; inactive items (past the end, slot -1) load and store nothing.
template <typename Codec>
__global__ void __launch_bounds__(copy_detail::kTileThreads)
    gather_vectorized_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  constexpr int kU = copy_detail::kTileUnroll;
  const int chunks = p.head_size / kN;
  const int vectors = p.num_kv_heads * chunks;
  const bool e5m2 = p.fp8_e5m2 != 0;
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  Chunk<CacheElem, kN> k[kU];
  Chunk<CacheElem, kN> v[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u] = copy_detail::tile_item(p, u, kN, chunks, vectors);
    item[u].active = item[u].active && u < p.unroll;
    slot[u] = item[u].active ? __ldg(p.slot_mapping + item[u].token) : -1;
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u].active = slot[u] >= 0;
    if (!item[u].active) continue;
    const copy_detail::SlotPosition at = copy_detail::slot_position(slot[u], p.block_size);
    const CacheTensor& kc = p.key_cache;
    const CacheTensor& vc = p.value_cache;
    copy_detail::load_cache_chunk(kc, copy_detail::row_offset(kc, at, item[u].head), item[u].dim,
                                  k[u]);
    copy_detail::load_cache_chunk(vc, copy_detail::row_offset(vc, at, item[u].head), item[u].dim,
                                  v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (!item[u].active) continue;
    Chunk<TokenElem, kN> kt;
    Chunk<TokenElem, kN> vt;
    const float ks = copy_detail::scale_of<Codec>(p.k_scale, p.scale_per_head, item[u].head);
    const float vs = copy_detail::scale_of<Codec>(p.v_scale, p.scale_per_head, item[u].head);
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      kt.e[j] = copy_detail::to_token<Codec>(k[u].e[j], ks, e5m2);
      vt.e[j] = copy_detail::to_token<Codec>(v[u].e[j], vs, e5m2);
    }
    copy_detail::store_token_chunk(p.key, item[u].token, item[u].head, item[u].dim, kt);
    copy_detail::store_token_chunk(p.value, item[u].token, item[u].head, item[u].dim, vt);
  }
}

}  // namespace

KernelStatus launch_gather(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                           cudaStream_t stream) {
  if (p.num_tokens == 0) return KernelStatus::success();
  return dispatch_copy_codec(codec, [&](auto codec_tag) {
    using Codec = typename decltype(codec_tag)::type;
    if (variant == CopyVariant::kScalar) {
      const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
      const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
      gather_naive_kernel<Codec><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
      PAGECHECK_RETURN_IF_LAUNCH_FAILED("gather_naive_kernel launch");
      return KernelStatus::success();
    }
    const dim3 grid = copy_grid(p, copy_detail::kChunkDims<Codec>);
    gather_vectorized_kernel<Codec><<<grid, copy_detail::kTileThreads, 0, stream>>>(p);
    PAGECHECK_RETURN_IF_LAUNCH_FAILED("gather_vectorized_kernel launch");
    return KernelStatus::success();
  });
}

}  // namespace pagecheck::kernels
