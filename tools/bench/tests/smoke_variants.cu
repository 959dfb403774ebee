/// Test-only gather variants for the GPU smoke test (see smoke_variants.h).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

#include "smoke_variants.h"

namespace pagecheck::bench::testing {
namespace {

__global__ void smoke_gather_kernel(pc_gather_args a) {
  const pc_kv_cache& c = a.cache;
  const int64_t per_token = c.num_kv_heads * c.head_size;
  const int64_t n = a.num_tokens * per_token;
  const auto* kc = static_cast<const uint16_t*>(a.key_cache);
  const auto* vc = static_cast<const uint16_t*>(a.value_cache);
  auto* ko = static_cast<uint16_t*>(a.key_out);
  auto* vo = static_cast<uint16_t*>(a.value_out);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / per_token;
    const int64_t h = (i / c.head_size) % c.num_kv_heads;
    const int64_t d = i % c.head_size;
    const int64_t slot = a.slot_mapping[t];
    if (slot < 0) continue;
    const int64_t block = slot / c.block_size;
    const int64_t off = slot % c.block_size;
    const pc_cache_strides& k = c.key;
    const pc_cache_strides& v = c.value;
    ko[t * a.key_stride_token + h * a.key_stride_head + d] =
        kc[block * k.block + h * k.head + off * k.slot + (d / k.dim_split) * k.group +
           (d % k.dim_split) * k.dim];
    vo[t * a.value_stride_token + h * a.value_stride_head + d] =
        vc[block * v.block + h * v.head + off * v.slot + (d / v.dim_split) * v.group +
           (d % v.dim_split) * v.dim];
  }
}

const int32_t kHeads[] = {64, 128};
const int32_t kBlocks[] = {8, 16};

pc_status launch_gather(const pc_variant*, const pc_device_info*, const void* args, void*,
                        void* stream, char* msg, size_t msg_len) {
  const auto* a = static_cast<const pc_gather_args*>(args);
  const int64_t n = a->num_tokens * a->cache.num_kv_heads * a->cache.head_size;
  const int64_t blocks = (n + 255) / 256;
  smoke_gather_kernel<<<static_cast<unsigned>(blocks > 65535 ? 65535 : blocks), 256, 0,
                        static_cast<cudaStream_t>(stream)>>>(*a);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::snprintf(msg, msg_len, "%s", cudaGetErrorString(err));
    return PC_STATUS_CUDA_ERROR;
  }
  return PC_STATUS_OK;
}

pc_status launch_nothing(const pc_variant*, const pc_device_info*, const void*, void*, void*,
                         char*, size_t) {
  return PC_STATUS_OK;
}

pc_variant make(const char* name, const char* description,
                pc_status (*launch)(const pc_variant*, const pc_device_info*, const void*, void*,
                                    void*, char*, size_t)) {
  pc_variant v{};
  v.struct_size = sizeof v;
  v.name = name;
  v.description = description;
  v.family = PC_FAMILY_GATHER_CACHED_KV;
  v.dtype_mask = (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
  v.head_sizes = kHeads;
  v.num_head_sizes = 2;
  v.block_sizes = kBlocks;
  v.num_block_sizes = 2;
  v.launch = launch;
  return v;
}

}  // namespace

pc_variant smoke_gather_variant() {
  return make("smoke_gather", "test: element-wise gather", &launch_gather);
}
pc_variant smoke_lazy_variant() {
  return make("smoke_lazy", "test: writes nothing", &launch_nothing);
}

}  // namespace pagecheck::bench::testing
