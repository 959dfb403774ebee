#include "my_gather_kernel.h"

namespace othercodebase {
namespace {

template <typename Element>
__global__ void gather_kv_kernel(Element* key_out, Element* value_out, int64_t ok_t, int64_t ok_h,
                                 int64_t ov_t, int64_t ov_h, const Element* key_cache,
                                 const Element* value_cache, CacheGeometry g,
                                 const int64_t* slots, int num_heads, int head_dim) {
  const int token = blockIdx.x;
  const int64_t slot = slots[token];
  if (slot < 0) return;
  const int64_t block = slot / g.block_size;
  const int64_t offset = slot % g.block_size;
  for (int i = threadIdx.x; i < num_heads * head_dim; i += blockDim.x) {
    const int head = i / head_dim;
    const int dim = i % head_dim;
    const int64_t k_src = block * g.key_block + head * g.key_head + (dim / g.x) * g.key_group +
                          offset * g.key_slot + dim % g.x;
    const int64_t v_src = block * g.value_block + head * g.value_head + dim * g.value_dim + offset;
    key_out[token * ok_t + head * ok_h + dim] = key_cache[k_src];
    value_out[token * ov_t + head * ov_h + dim] = value_cache[v_src];
  }
}

}  // namespace

cudaError_t gather_kv_launch(void* key_out, void* value_out, int64_t ok_t, int64_t ok_h,
                             int64_t ov_t, int64_t ov_h, cudaStream_t stream,
                             const void* key_cache, const void* value_cache,
                             const CacheGeometry& g, const int64_t* slots, int num_tokens,
                             int num_heads, int head_dim, int element_bytes) {
  if (num_tokens == 0) return cudaSuccess;
  const dim3 grid(num_tokens);
  const dim3 block(256);
  if (element_bytes == 2) {
    gather_kv_kernel<uint16_t><<<grid, block, 0, stream>>>(
        static_cast<uint16_t*>(key_out), static_cast<uint16_t*>(value_out), ok_t, ok_h, ov_t,
        ov_h, static_cast<const uint16_t*>(key_cache), static_cast<const uint16_t*>(value_cache),
        g, slots, num_heads, head_dim);
  } else if (element_bytes == 4) {
    gather_kv_kernel<uint32_t><<<grid, block, 0, stream>>>(
        static_cast<uint32_t*>(key_out), static_cast<uint32_t*>(value_out), ok_t, ok_h, ov_t,
        ov_h, static_cast<const uint32_t*>(key_cache), static_cast<const uint32_t*>(value_cache),
        g, slots, num_heads, head_dim);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace othercodebase
