/// reshape_and_cache kernels: contiguous key / value rows -> paged cache through the slot
/// mapping, for every cache layout the strides describe. Tokens whose slot is -1 write nothing.
/// Raw copies are bit exact; an fp8 cache receives quantize_fp8(value / scale) (copy_codec.cuh).
#include "copy/copy_dispatch.cuh"
#include "copy/copy_host.h"
#include "copy/copy_kernels.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::Chunk;

/// scalar: one thread per (token, head, dim), scalar loads and stores of K and V.
template <typename Codec>
__global__ void reshape_scalar_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const bool e5m2 = p.fp8_e5m2 != 0;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const copy_detail::ElementIndex e = copy_detail::element_index(p, i);
    const int64_t slot = p.slot_mapping[e.token];
    if (slot < 0) continue;
    const TokenElem k = *copy_detail::token_at<const TokenElem>(p.key, e.token, e.head, e.dim);
    const TokenElem v = *copy_detail::token_at<const TokenElem>(p.value, e.token, e.head, e.dim);
    const float ks = copy_detail::scale_of<Codec>(p.k_scale, p.scale_per_head, e.head);
    const float vs = copy_detail::scale_of<Codec>(p.v_scale, p.scale_per_head, e.head);
    const CacheTensor& kc = p.key_cache;
    const CacheTensor& vc = p.value_cache;
    static_cast<CacheElem*>(kc.data)[copy_detail::row_offset(kc, slot, p.block_size, e.head) +
                                     copy_detail::dim_offset(kc, e.dim)] =
        copy_detail::to_cache<Codec>(k, ks, e5m2);
    static_cast<CacheElem*>(vc.data)[copy_detail::row_offset(vc, slot, p.block_size, e.head) +
                                     copy_detail::dim_offset(vc, e.dim)] =
        copy_detail::to_cache<Codec>(v, vs, e5m2);
  }
}

/// vectorized: the mirror of the vectorized gather (same items and lane order): one, two or
/// four 16-byte loads of each token-side chunk, issued together with the item's slot load (they
/// do not depend on it), then one 16-byte store per cache tensor where the chunk is contiguous
/// and aligned, else strided scalar stores (x-split values: lanes of consecutive slots write
/// neighbouring elements).
template <typename Codec>
__global__ void __launch_bounds__(copy_detail::kTileThreads)
    reshape_vectorized_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  constexpr int kU = copy_detail::kTileUnroll;
  const int chunks = p.head_size / kN;
  const int vectors = p.num_kv_heads * chunks;
  const bool e5m2 = p.fp8_e5m2 != 0;
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  Chunk<TokenElem, kN> k[kU];
  Chunk<TokenElem, kN> v[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u].active = false;
    slot[u] = -1;
    if (u >= p.unroll) continue;
    item[u] = copy_detail::tile_item(p, u, kN, chunks, vectors);
    if (!item[u].active) continue;
    slot[u] = __ldg(p.slot_mapping + item[u].token);
    copy_detail::load_token_chunk(p.key, item[u].token, item[u].head, item[u].dim, k[u]);
    copy_detail::load_token_chunk(p.value, item[u].token, item[u].head, item[u].dim, v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (!item[u].active || slot[u] < 0) continue;
    Chunk<CacheElem, kN> kc;
    Chunk<CacheElem, kN> vc;
    const float ks = copy_detail::scale_of<Codec>(p.k_scale, p.scale_per_head, item[u].head);
    const float vs = copy_detail::scale_of<Codec>(p.v_scale, p.scale_per_head, item[u].head);
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      kc.e[j] = copy_detail::to_cache<Codec>(k[u].e[j], ks, e5m2);
      vc.e[j] = copy_detail::to_cache<Codec>(v[u].e[j], vs, e5m2);
    }
    const copy_detail::SlotPosition at = copy_detail::slot_position(slot[u], p.block_size);
    const CacheTensor& kt = p.key_cache;
    const CacheTensor& vt = p.value_cache;
    copy_detail::store_cache_chunk(kt, copy_detail::row_offset(kt, at, item[u].head), item[u].dim,
                                   kc);
    copy_detail::store_cache_chunk(vt, copy_detail::row_offset(vt, at, item[u].head), item[u].dim,
                                   vc);
  }
}

}  // namespace

KernelStatus launch_reshape(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                            cudaStream_t stream) {
  if (p.num_tokens == 0) return KernelStatus::success();
  return dispatch_copy_codec(codec, [&](auto codec_tag) {
    using Codec = typename decltype(codec_tag)::type;
    if (variant == CopyVariant::kScalar) {
      const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
      const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
      reshape_scalar_kernel<Codec><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
      PAGECHECK_RETURN_IF_LAUNCH_FAILED("reshape_scalar_kernel launch");
      return KernelStatus::success();
    }
    const dim3 grid = copy_grid(p, copy_detail::kChunkDims<Codec>);
    reshape_vectorized_kernel<Codec><<<grid, copy_detail::kTileThreads, 0, stream>>>(p);
    PAGECHECK_RETURN_IF_LAUNCH_FAILED("reshape_vectorized_kernel launch");
    return KernelStatus::success();
  });
}

}  // namespace pagecheck::kernels
