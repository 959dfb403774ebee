/// reshape_and_cache kernels: contiguous key / value rows -> paged cache through the slot
/// mapping, for every cache layout the strides describe. Tokens whose slot is -1 write nothing.
/// Raw copies are bit exact; an fp8 cache receives quantize_fp8(value / scale) (copy_codec.cuh).
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

/// vectorized: the mirror of the vectorized gather (same items and lane order): kU items per
/// thread; the token-side loads of all of them (one, two or four 16-byte loads per tensor and
/// item) issued together with their slot loads (they do not depend on them), then per item the
/// conversion to cache elements and the store (move_cache_item: one 16-byte store where chunks
/// are contiguous and aligned, the lane's row pieces, already transposed by tokens_to_rows,
/// where the warp's groups cover whole slot rows, else strided scalar stores). kPath compiles
/// only the accesses of the layout (copy_item_access.cuh). Slot -1 writes nothing.
template <typename Codec, int kU, copy_detail::CopyPath kPath>
__global__ void __launch_bounds__(copy_detail::kThreadsFor<kU>)
    reshape_vectorized_kernel(const __grid_constant__ CopyParams p) {
  constexpr int kN = copy_detail::kChunkDims<Codec>;
  constexpr copy_detail::PathAccess kAccess = copy_detail::path_access<kPath>();
  const auto [stage, e5m2, token_fastest, any_rows] = copy_detail::vectorized_prologue<kPath>(p);
  copy_detail::TileItem item[kU];
  int64_t slot[kU];
  copy_detail::KvScales<Codec, kU> scale;  // fp8: issued with the first loads
  copy_detail::KvChunks<copy_detail::TokenChunk<Codec>, kU> kv;
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    slot[u] = -1;
    item[u] = copy_detail::tile_item<kU>(p, token_fastest, u, kN);
    scale.load(p, u, item[u].head);
    if (!item[u].active) continue;
    slot[u] = __ldg(p.slot_mapping + item[u].token);
    copy_detail::load_token_chunk(p.key, item[u].token, item[u].head, item[u].dim, kv.k[u]);
    copy_detail::load_token_chunk(p.value, item[u].token, item[u].head, item[u].dim, kv.v[u]);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    const bool active = slot[u] >= 0;
    const bool rows = any_rows && copy_detail::warp_slot_rows(active, slot[u]);
    const int head = item[u].head;
    copy_detail::CacheChunk<Codec> kc;
    copy_detail::CacheChunk<Codec> vc;
    if (active) {
      copy_detail::chunk_to_cache<Codec>(kv.k[u], kc, copy_detail::fp8_scale(scale.k[u]), e5m2);
      copy_detail::chunk_to_cache<Codec>(kv.v[u], vc, copy_detail::fp8_scale(scale.v[u]), e5m2);
    }
    if (rows) {  // the whole warp: transpose the lanes' tokens into row pieces
      if (copy_detail::uses_rows<kAccess.key>(p.key_cache, true)) {
        copy_detail::tokens_to_rows(stage, kc);
      }
      if (copy_detail::uses_rows<kAccess.value>(p.value_cache, true)) {
        copy_detail::tokens_to_rows(stage, vc);
      }
    }
    if (!active) continue;
    const SlotPosition at = copy_detail::slot_position(slot[u], p.block_div);
    copy_detail::move_cache_item<false, kAccess.key>(p.key_cache, at, head, item[u].dim, rows, kc);
    copy_detail::move_cache_item<false, kAccess.value>(p.value_cache, at, head, item[u].dim, rows,
                                                       vc);
  }
}

/// The family's kernel templates for CopyFamily (copy_family.cuh).
template <typename Codec>
using ReshapeScalar = KernelRef<reshape_scalar_kernel<Codec>>;
template <typename Codec, int kU, copy_detail::CopyPath kPath>
using ReshapeVectorized = KernelRef<reshape_vectorized_kernel<Codec, kU, kPath>>;

}  // namespace

KernelStatus launch_reshape(CopyVariant variant, const CopyCodecKey& codec, const CopyParams& p,
                            cudaStream_t stream) {
  return launch_copy<CopyFamily<false, ReshapeScalar, ReshapeVectorized>>(variant, codec, p,
                                                                          stream);
}

}  // namespace pagecheck::kernels
