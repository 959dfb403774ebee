// pagecheck plugin adapter (ABI version 2) for othercodebase::gather_kv_launch: declares what
// the kernel supports and translates pc_gather_args into the kernel's own launcher call. The
// kernel addresses both cache tensors through their strides, so it takes every page layout
// (x-split, NHD, HND), padded and combined caches, and copies raw elements of any dtype (fp8
// codes included; it never dequantizes).
#include <pagecheck/plugin.h>
#include <pagecheck/plugin_read.h>

#include <cstdio>

#include "my_gather_kernel.h"

PAGECHECK_PLUGIN_DECLARE_ABI()

namespace {

const int32_t kHeadSizes[] = {64, 80, 96, 112, 128, 192, 256};
const int32_t kBlockSizes[] = {8, 16, 32};

othercodebase::TensorGeometry geometry(const pc_cache_strides& s) {
  return {s.block, s.head, s.slot, s.group, s.dim, s.dim_split};
}

pc_status can_implement(const pc_variant*, const pc_device_info*, const void* raw, char* msg,
                        size_t msg_len) {
  const auto* args = static_cast<const pc_gather_args*>(raw);
  if (args == nullptr || args->struct_size == 0) {
    std::snprintf(msg, msg_len, "example_gather: args is NULL or its struct_size is 0");
    return PC_STATUS_INVALID_ARGUMENT;
  }
  // The struct_size rule: fields a smaller writer did not have read as zero.
  const pc_gather_args a = pagecheck::abi::read(*args);
  if (a.dequantize != 0) {
    std::snprintf(msg, msg_len, "example_gather: copies raw elements only (no dequantize)");
    return PC_STATUS_UNSUPPORTED;
  }
  if (a.cache.dtype != a.dtype || pagecheck::abi::dtype_bytes(a.dtype) == 0) {
    std::snprintf(msg, msg_len, "example_gather: a raw copy needs cache.dtype == dtype (%d, %d)",
                  static_cast<int>(a.cache.dtype), static_cast<int>(a.dtype));
    return PC_STATUS_INVALID_ARGUMENT;
  }
  if (a.cache.num_kv_heads * a.cache.head_size > (1 << 30) || a.num_tokens > (1 << 30)) {
    std::snprintf(msg, msg_len, "example_gather: too many tokens or head elements for int");
    return PC_STATUS_UNSUPPORTED;
  }
  if (a.cache.key.dim_split <= 0 || a.cache.value.dim_split <= 0) {
    std::snprintf(msg, msg_len, "example_gather: cache dim_split must be positive");
    return PC_STATUS_INVALID_ARGUMENT;
  }
  return PC_STATUS_OK;
}

pc_status launch(const pc_variant*, const pc_device_info*, const void* raw, void*, void* stream,
                 char* msg, size_t msg_len) {
  const pc_gather_args a = pagecheck::abi::read(*static_cast<const pc_gather_args*>(raw));
  const othercodebase::CacheGeometry g{geometry(a.cache.key), geometry(a.cache.value),
                                       int(a.cache.block_size)};
  // This plugin links its own CUDA runtime: the host cannot see this runtime's error state, so
  // every launch error is returned as a status.
  const cudaError_t err = othercodebase::gather_kv_launch(
      a.key_out, a.value_out, a.key_stride_token, a.key_stride_head, a.value_stride_token,
      a.value_stride_head, static_cast<cudaStream_t>(stream), a.key_cache, a.value_cache, g,
      a.slot_mapping, int(a.num_tokens), int(a.cache.num_kv_heads), int(a.cache.head_size),
      int(pagecheck::abi::dtype_bytes(a.dtype)));
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
  v.struct_size = sizeof v;
  v.name = "example_plugin_gather";
  v.description = "example plugin: othercodebase's byte-wise gather, one block per token";
  v.family = PC_FAMILY_GATHER_CACHED_KV;
  // Raw copies: the token dtype is the cache dtype (kv_dtype_mask 0), fp8 codes included.
  v.dtype_mask = (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16) |
                 (1u << PC_DTYPE_FP8_E4M3) | (1u << PC_DTYPE_FP8_E5M2);
  v.kv_dtype_mask = 0;
  v.cache_kind_mask = (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
  // Scales do not matter to a raw copy: any scale kind.
  v.scale_kind_mask =
      (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = sizeof(kHeadSizes) / sizeof(kHeadSizes[0]);
  v.block_sizes = kBlockSizes;
  v.num_block_sizes = sizeof(kBlockSizes) / sizeof(kBlockSizes[0]);
  v.caps = PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT |
           PC_CAP_CACHE_PAD_SHARED | PC_CAP_CACHE_PAD | PC_CAP_COMBINED_KV | PC_CAP_LARGE_CACHE;
  v.max_query_len = 0;                             // attention only
  v.num_partition_sizes = 0;                       // attention only
  v.precision.struct_size = sizeof(pc_precision);  // attention only; all zero
  v.context0 = PC_CONTEXT0_UNSUPPORTED;            // attention only
  v.nondeterministic = 0;                          // a copy: bit exact, every run
  v.can_implement = &can_implement;
  v.workspace_bytes = nullptr;
  v.launch = &launch;
  return host->add_variant(host->context, &v) == PC_STATUS_OK ? 0 : 2;
}
