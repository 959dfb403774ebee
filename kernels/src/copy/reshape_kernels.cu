/// reshape_and_cache kernels: contiguous key / value rows -> paged cache through the slot
/// mapping, for every cache layout the strides describe. Tokens whose slot is -1 write nothing.
/// Raw copies are bit exact; an fp8 cache receives quantize_fp8(value / scale) (copy_codec.cuh).
#include "copy/copy_dispatch.cuh"
#include "copy/copy_host.h"
#include "copy/copy_kernels.cuh"
#include "copy/copy_slot_rows.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::Chunk;
using copy_detail::SlotPosition;

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
    const copy_detail::Fp8Scale ks =
        copy_detail::fp8_scale(copy_detail::load_scale<Codec>(p.k_scale, p.scale_per_head, e.head));
    const copy_detail::Fp8Scale vs =
        copy_detail::fp8_scale(copy_detail::load_scale<Codec>(p.v_scale, p.scale_per_head, e.head));
    const CacheTensor& kc = p.key_cache;
    const CacheTensor& vc = p.value_cache;
    const copy_detail::SlotPosition at = copy_detail::slot_position(slot, p.block_size);
    static_cast<CacheElem*>(
        kc.data)[copy_detail::row_offset(kc, at, e.head) + copy_detail::dim_offset(kc, e.dim)] =
        copy_detail::to_cache<Codec>(k, ks, e5m2);
    static_cast<CacheElem*>(
        vc.data)[copy_detail::row_offset(vc, at, e.head) + copy_detail::dim_offset(vc, e.dim)] =
        copy_detail::to_cache<Codec>(v, vs, e5m2);
  }
}

/// Stores item u's chunk into cache tensor `c` (the mirror of the gather's load_item): one
/// 16-byte store where chunks are contiguous and aligned, the lane's row pieces (already
/// transposed by tokens_to_rows) where `rows`, else strided scalar stores.
template <typename Elem, int N>
__device__ __forceinline__ void store_item(const CacheTensor& c, const SlotPosition& at, int head,
                                           int dim, bool rows, Chunk<Elem, N>& in) {
  if (!c.vector && rows && c.slot_rows) {
    const SlotPosition first{at.block, at.offset - copy_detail::lane_in_group()};
    copy_detail::store_slot_rows(c, copy_detail::row_offset(c, first, head), dim, in);
  } else {
    copy_detail::store_cache_chunk(c, copy_detail::row_offset(c, at, head), dim, in);
  }
}

/// vectorized: the mirror of the vectorized gather (same items and lane order): kU items per
/// thread; the token-side loads of all of them (one, two or four 16-byte loads per tensor and
/// item) issued together with their slot loads (they do not depend on them), then per item the
/// conversion to cache elements and the store (store_item). Slot -1 writes nothing.
template <typename Codec, int kU>
__global__ void __launch_bounds__(copy_detail::kTileThreads)
    reshape_vectorized_kernel(const __grid_constant__ CopyParams p) {
  using CacheElem = typename Codec::CacheElem;
  using TokenElem = typename Codec::TokenElem;
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  __shared__ copy_detail::SlotRowStage stage;
  const int chunks = p.head_size / kN;
  const int vectors = p.num_kv_heads * chunks;
  const bool e5m2 = p.fp8_e5m2 != 0;
  const bool any_rows = p.token_fastest && (p.key_cache.slot_rows || p.value_cache.slot_rows);
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  float k_scale[kU];  // fp8: issued with the first loads, not after the slot arrived
  float v_scale[kU];
  Chunk<TokenElem, kN> k[kU];
  Chunk<TokenElem, kN> v[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    slot[u] = -1;
    item[u] = copy_detail::tile_item(p, kU, u, kN, chunks, vectors);
    k_scale[u] = copy_detail::load_scale<Codec>(p.k_scale, p.scale_per_head, item[u].head);
    v_scale[u] = copy_detail::load_scale<Codec>(p.v_scale, p.scale_per_head, item[u].head);
    if (!item[u].active) continue;
    slot[u] = __ldg(p.slot_mapping + item[u].token);
    copy_detail::load_token_chunk(p.key, item[u].token, item[u].head, item[u].dim, k[u]);
    copy_detail::load_token_chunk(p.value, item[u].token, item[u].head, item[u].dim, v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const bool active = slot[u] >= 0;
    const bool rows = any_rows && copy_detail::warp_slot_rows(active, slot[u]);
    const int head = item[u].head;
    Chunk<CacheElem, kN> kc;
    Chunk<CacheElem, kN> vc;
    if (active) {
      copy_detail::chunk_to_cache<Codec>(k[u], kc, copy_detail::fp8_scale(k_scale[u]), e5m2);
      copy_detail::chunk_to_cache<Codec>(v[u], vc, copy_detail::fp8_scale(v_scale[u]), e5m2);
    }
    if (rows) {  // the whole warp: transpose the lanes' tokens into row pieces
      if (!p.key_cache.vector && p.key_cache.slot_rows) copy_detail::tokens_to_rows(stage, kc);
      if (!p.value_cache.vector && p.value_cache.slot_rows) {
        copy_detail::tokens_to_rows(stage, vc);
      }
    }
    if (!active) continue;
    const SlotPosition at = copy_detail::slot_position(slot[u], p.block_size);
    store_item(p.key_cache, at, head, item[u].dim, rows, kc);
    store_item(p.value_cache, at, head, item[u].dim, rows, vc);
  }
}

/// Launches the vectorized kernel with p.unroll items per thread (1, or the large unroll).
template <typename Codec>
KernelStatus launch_reshape_vectorized(const CopyParams& p, cudaStream_t stream) {
  constexpr int kLarge = copy_detail::large_unroll(false, Codec::kTokenBytes, Codec::kCacheBytes);
  if (p.unroll != 1 && p.unroll != kLarge) {
    return KernelStatus::invalid("reshape: unroll " + std::to_string(p.unroll) +
                                 " is neither 1 nor " + std::to_string(kLarge));
  }
  const dim3 grid = copy_grid(p, copy_detail::kChunkDims<Codec>);
  if (p.unroll == kLarge) {
    reshape_vectorized_kernel<Codec, kLarge><<<grid, copy_detail::kTileThreads, 0, stream>>>(p);
  } else {
    reshape_vectorized_kernel<Codec, 1><<<grid, copy_detail::kTileThreads, 0, stream>>>(p);
  }
  PAGECHECK_RETURN_IF_LAUNCH_FAILED("reshape_vectorized_kernel launch");
  return KernelStatus::success();
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
    return launch_reshape_vectorized<Codec>(p, stream);
  });
}

}  // namespace pagecheck::kernels
