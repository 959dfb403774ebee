// pagecheck plugin adapter for othercodebase::gather_kv_launch: declares what the kernel
// supports and translates pc_gather_args into the kernel's own launcher call.
#include <pagecheck/plugin.h>

#include <cstdio>

#include "my_gather_kernel.h"

PAGECHECK_PLUGIN_DECLARE_ABI()

namespace {

const int32_t kHeadSizes[] = {64, 80, 96, 112, 128, 192, 256};
const int32_t kBlockSizes[] = {8, 16, 32};

int element_bytes(pc_dtype dtype) { return dtype == PC_DTYPE_FLOAT32 ? 4 : 2; }

pc_status can_implement(const pc_variant*, const void* raw, char* msg, size_t msg_len) {
  const auto* a = static_cast<const pc_gather_args*>(raw);
  if (a->cache.num_kv_heads * a->cache.head_size > (1 << 30) || a->num_tokens > (1 << 30)) {
    std::snprintf(msg, msg_len, "example_gather: too many tokens or head elements for int");
    return PC_STATUS_UNSUPPORTED;
  }
  if (a->cache.x * element_bytes(a->dtype) != 16) {
    std::snprintf(msg, msg_len, "example_gather: x = %lld does not match the dtype",
                  static_cast<long long>(a->cache.x));
    return PC_STATUS_INVALID_ARGUMENT;
  }
  return PC_STATUS_OK;
}

pc_status launch(const pc_variant*, const void* raw, void*, void* stream, char* msg,
                 size_t msg_len) {
  const auto* a = static_cast<const pc_gather_args*>(raw);
  const othercodebase::CacheGeometry g{a->cache.key_stride_block,   a->cache.key_stride_head,
                                       a->cache.key_stride_group,   a->cache.key_stride_slot,
                                       a->cache.value_stride_block, a->cache.value_stride_head,
                                       a->cache.value_stride_dim,   int(a->cache.block_size),
                                       int(a->cache.x)};
  const cudaError_t err = othercodebase::gather_kv_launch(
      a->key_out, a->value_out, a->key_stride_token, a->key_stride_head, a->value_stride_token,
      a->value_stride_head, static_cast<cudaStream_t>(stream), a->key_cache, a->value_cache, g,
      a->slot_mapping, int(a->num_tokens), int(a->cache.num_kv_heads), int(a->cache.head_size),
      element_bytes(a->dtype));
  if (err != cudaSuccess) {
    std::snprintf(msg, msg_len, "example_gather: launch failed: %s", cudaGetErrorString(err));
    return PC_STATUS_CUDA_ERROR;
  }
  return PC_STATUS_OK;
}

}  // namespace

extern "C" PAGECHECK_PLUGIN_VISIBLE int pagecheck_plugin_register(const pc_host* host) {
  if (host == nullptr || host->abi_version != PAGECHECK_PLUGIN_ABI_VERSION) return 1;
  pc_variant v{};
  v.name = "example_plugin_gather";
  v.description = "example plugin: othercodebase's byte-wise gather, one block per token";
  v.family = PC_FAMILY_GATHER_CACHED_KV;
  v.dtype_mask = (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = sizeof(kHeadSizes) / sizeof(kHeadSizes[0]);
  v.block_sizes = kBlockSizes;
  v.num_block_sizes = sizeof(kBlockSizes) / sizeof(kBlockSizes[0]);
  v.caps = PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE | PC_CAP_LARGE_CACHE;
  v.can_implement = &can_implement;
  v.workspace_bytes = nullptr;
  v.launch = &launch;
  return host->add_variant(host->context, &v) == PC_STATUS_OK ? 0 : 2;
}
