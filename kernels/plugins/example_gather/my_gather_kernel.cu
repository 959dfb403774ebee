#include "my_gather_kernel.h"

namespace othercodebase {
namespace {

__device__ __forceinline__ int64_t element_offset(const TensorGeometry& t, int64_t block,
                                                  int64_t head, int64_t slot, int64_t dim) {
  return block * t.block + head * t.head + slot * t.slot + (dim / t.split) * t.group +
         (dim % t.split) * t.dim;
}

template <typename Element>
__global__ void gather_kv_kernel(Element* key_out, Element* value_out, int64_t ok_t, int64_t ok_h,
                                 int64_t ov_t, int64_t ov_h, const Element* key_cache,
                                 const Element* value_cache, CacheGeometry g, const int64_t* slots,
                                 int num_heads, int head_dim) {
  const int token = blockIdx.x;
  const int64_t slot = slots[token];
  if (slot < 0) return;
  const int64_t block = slot / g.block_size;
  const int64_t offset = slot % g.block_size;
  for (int i = threadIdx.x; i < num_heads * head_dim; i += blockDim.x) {
    const int head = i / head_dim;
    const int dim = i % head_dim;
    key_out[token * ok_t + head * ok_h + dim] =
        key_cache[element_offset(g.key, block, head, offset, dim)];
    value_out[token * ov_t + head * ov_h + dim] =
        value_cache[element_offset(g.value, block, head, offset, dim)];
  }
}

template <typename Element>
void launch_typed(void* key_out, void* value_out, int64_t ok_t, int64_t ok_h, int64_t ov_t,
                  int64_t ov_h, cudaStream_t stream, const void* key_cache, const void* value_cache,
                  const CacheGeometry& g, const int64_t* slots, int num_tokens, int num_heads,
                  int head_dim) {
  gather_kv_kernel<Element><<<dim3(num_tokens), dim3(256), 0, stream>>>(
      static_cast<Element*>(key_out), static_cast<Element*>(value_out), ok_t, ok_h, ov_t, ov_h,
      static_cast<const Element*>(key_cache), static_cast<const Element*>(value_cache), g, slots,
      num_heads, head_dim);
}

}  // namespace

cudaError_t gather_kv_launch(void* key_out, void* value_out, int64_t ok_t, int64_t ok_h,
                             int64_t ov_t, int64_t ov_h, cudaStream_t stream, const void* key_cache,
                             const void* value_cache, const CacheGeometry& g, const int64_t* slots,
                             int num_tokens, int num_heads, int head_dim, int element_bytes) {
  if (num_tokens == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1:
      launch_typed<uint8_t>(key_out, value_out, ok_t, ok_h, ov_t, ov_h, stream, key_cache,
                            value_cache, g, slots, num_tokens, num_heads, head_dim);
      break;
    case 2:
      launch_typed<uint16_t>(key_out, value_out, ok_t, ok_h, ov_t, ov_h, stream, key_cache,
                             value_cache, g, slots, num_tokens, num_heads, head_dim);
      break;
    case 4:
      launch_typed<uint32_t>(key_out, value_out, ok_t, ok_h, ov_t, ov_h, stream, key_cache,
                             value_cache, g, slots, num_tokens, num_heads, head_dim);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace othercodebase
