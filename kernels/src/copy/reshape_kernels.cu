/// reshape_and_cache kernels: contiguous key / value rows -> paged cache through the slot
/// mapping. Tokens whose slot is -1 write nothing. Bit exact (raw element copies).
#include "common/dispatch.h"
#include "common/vec.cuh"
#include "copy/copy_host.h"
#include "copy/copy_kernels.cuh"

namespace pagecheck::kernels {
namespace {

using copy_detail::Element;

/// scalar: one thread per (token, head, dim), scalar loads and stores of K and V.
template <int E>
__global__ void reshape_scalar_kernel(const __grid_constant__ CopyParams p) {
  using Elem = typename Element<E>::type;
  constexpr int kX = 16 / E;
  const int64_t per_token = int64_t{p.num_kv_heads} * p.head_size;
  const int64_t total = p.num_tokens * per_token;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t token = i / per_token;
    const int64_t rem = i - token * per_token;
    const int head = static_cast<int>(rem / p.head_size);
    const int dim = static_cast<int>(rem - int64_t{head} * p.head_size);
    const int64_t slot = p.slot_mapping[token];
    if (slot < 0) continue;
    const copy_detail::CacheOffsets dst = copy_detail::cache_offsets(p, slot, head, dim, kX);
    const Elem k = static_cast<const Elem*>(
        p.key)[token * p.key_stride_token + head * p.key_stride_head + dim];
    const Elem v = static_cast<const Elem*>(
        p.value)[token * p.value_stride_token + head * p.value_stride_head + dim];
    static_cast<Elem*>(p.key_cache)[dst.key] = k;
    static_cast<Elem*>(p.value_cache)[dst.value] = v;
  }
}

/// vectorized: the mirror of the vectorized gather (same tiles): two 16-byte loads of the
/// contiguous rows per item (a warp reads 64 contiguous bytes of each of 8 rows), one 16-byte
/// store of the key x-group and x scalar stores of the value dims (value_stride_dim apart;
/// lanes of consecutive slots write neighbouring elements). Inactive items read row 0 and
/// store nothing.
template <int E>
__global__ void __launch_bounds__(copy_detail::kTileThreads)
    reshape_vectorized_kernel(const __grid_constant__ CopyParams p) {
  using Elem = typename Element<E>::type;
  constexpr int kX = 16 / E;
  constexpr int kU = copy_detail::kTileUnroll;
  __shared__ int64_t slots[copy_detail::kTileTokens];
  copy_detail::load_tile_slots(p, slots);
  const int groups = p.head_size / kX;
  const int vectors = p.num_kv_heads * groups;
  copy_detail::TileItem item[kU];
  uint4 kv[kU];
  uint4 vv[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    item[u] = copy_detail::tile_item(p, slots, u, groups, vectors);
    const int64_t token = item[u].active ? item[u].token : 0;
    kv[u] = load16(static_cast<const Elem*>(p.key) + token * p.key_stride_token +
                   item[u].head * p.key_stride_head + item[u].group * kX);
    vv[u] = load16(static_cast<const Elem*>(p.value) + token * p.value_stride_token +
                   item[u].head * p.value_stride_head + item[u].group * kX);
  }
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (!item[u].active) continue;
    const int64_t block = item[u].slot / p.block_size;
    const int64_t offset = item[u].slot - block * p.block_size;
    Elem* k_dst = static_cast<Elem*>(p.key_cache) + block * p.kc_stride_block +
                  offset * p.kc_stride_slot + item[u].head * p.kc_stride_head +
                  item[u].group * p.kc_stride_group;
    *reinterpret_cast<uint4*>(k_dst) = kv[u];
    Elem vals[kX];
    copy_detail::unpack16<E>(vv[u], vals);
    Elem* v_dst = static_cast<Elem*>(p.value_cache) + block * p.vc_stride_block + offset +
                  item[u].head * p.vc_stride_head + int64_t{item[u].group} * kX * p.vc_stride_dim;
#pragma unroll
    for (int j = 0; j < kX; ++j) v_dst[j * p.vc_stride_dim] = vals[j];
  }
}

}  // namespace

KernelStatus launch_reshape(CopyVariant variant, pc_dtype dtype, const CopyParams& p,
                            cudaStream_t stream) {
  if (p.num_tokens == 0) return KernelStatus::success();
  return dispatch_element_bytes(dtype, [&](auto bytes_tag) {
    constexpr int kE = decltype(bytes_tag)::value;
    if (variant == CopyVariant::kScalar) {
      const int64_t total = p.num_tokens * p.num_kv_heads * p.head_size;
      const int64_t blocks = std::min<int64_t>((total + 255) / 256, int64_t{1} << 20);
      reshape_scalar_kernel<kE><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(p);
      PAGECHECK_RETURN_IF_LAUNCH_FAILED("reshape_scalar_kernel launch");
      return KernelStatus::success();
    }
    const dim3 grid =
        copy_detail::tile_grid(p.num_tokens, p.num_kv_heads * (p.head_size / (16 / kE)));
    reshape_vectorized_kernel<kE><<<grid, copy_detail::kTileThreads, 0, stream>>>(p);
    PAGECHECK_RETURN_IF_LAUNCH_FAILED("reshape_vectorized_kernel launch");
    return KernelStatus::success();
  });
}

}  // namespace pagecheck::kernels
