/// Shared argument checks of the built-in variants.
#include "common/host_checks.h"

#include <cmath>

#include "common/kernel_lists.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {

KernelStatus require_pointer(const void* ptr, const char* name) {
  if (ptr == nullptr) return KernelStatus::invalid(std::string(name) + " is NULL");
  return KernelStatus::success();
}

KernelStatus require_aligned16(const void* ptr, const char* name, const char* why) {
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0) {
    return KernelStatus::unsupported(std::string(name) + " is not 16-byte aligned (" + why + ")");
  }
  return KernelStatus::success();
}

KernelStatus require_min(int64_t value, int64_t min_value, const char* name) {
  if (value < min_value) {
    return KernelStatus::invalid(std::string(name) + " (" + std::to_string(value) +
                                 ") must be >= " + std::to_string(min_value));
  }
  return KernelStatus::success();
}

KernelStatus require_vector_stride(int64_t stride, int64_t x, const char* name) {
  if (stride % x != 0) {
    return KernelStatus::unsupported(std::string(name) + " (" + std::to_string(stride) +
                                     ") is not a multiple of x = " + std::to_string(x) +
                                     " elements (16-byte vector accesses)");
  }
  return KernelStatus::success();
}

KernelStatus require_struct_size(uint32_t struct_size, const char* name) {
  if (struct_size == 0) {
    return KernelStatus::invalid(std::string(name) + ".struct_size is 0 (set it to the sizeof " +
                                 "of the struct)");
  }
  return KernelStatus::success();
}

KernelStatus check_plain_cache(const pc_kv_cache& c, pc_dtype dtype) {
  if (!kernel_dtype(dtype)) {
    return KernelStatus::unsupported(std::string("unsupported dtype: ") + abi::dtype_label(dtype) +
                                     " (the kernels take float32, float16 and bfloat16)");
  }
  if (c.dtype != dtype) {
    return KernelStatus::unsupported(std::string("cache.dtype ") + abi::dtype_label(c.dtype) +
                                     " differs from the token dtype " + abi::dtype_label(dtype) +
                                     " (no fp8 or mixed-dtype caches)");
  }
  if (c.kind != PC_CACHE_X_SPLIT) {
    return KernelStatus::unsupported(std::string("cache.kind ") + abi::cache_kind_label(c.kind) +
                                     ": only x-split caches");
  }
  if (c.scale_kind != PC_SCALE_NONE || c.k_scale != nullptr || c.v_scale != nullptr) {
    return KernelStatus::unsupported("cache scales (scale_kind " +
                                     std::to_string(static_cast<int>(c.scale_kind)) +
                                     "): no scaled caches");
  }
  if (c.combined != 0) {
    return KernelStatus::unsupported("cache.combined: K and V must be separate tensors");
  }
  return KernelStatus::success();
}

KernelStatus check_decode_batch(const pc_ragged_batch& b, const pc_attention_features& f) {
  if (b.query_start != nullptr || b.max_query_len > 1) {
    return KernelStatus::unsupported("batch.query_start / max_query_len (" +
                                     std::to_string(b.max_query_len) +
                                     "): decode only, one query token per sequence");
  }
  if (b.num_query_tokens != b.num_seqs) {
    return KernelStatus::invalid("batch.num_query_tokens (" + std::to_string(b.num_query_tokens) +
                                 ") differs from batch.num_seqs (" + std::to_string(b.num_seqs) +
                                 ") without query_start");
  }
  if (f.sinks != nullptr) return KernelStatus::unsupported("features.sinks: no attention sinks");
  if (f.window != 0) {
    return KernelStatus::unsupported("features.window (" + std::to_string(f.window) +
                                     "): no sliding window");
  }
  if (f.soft_cap != 0.0f) {
    return KernelStatus::unsupported("features.soft_cap (" + std::to_string(f.soft_cap) +
                                     "): no logit soft-cap");
  }
  return KernelStatus::success();
}

KernelStatus check_cache_shape(const pc_kv_cache& c, pc_dtype dtype) {
  KernelStatus st = check_plain_cache(c, dtype);
  if (!st.ok()) return st;
  const int64_t x = 16 / abi::dtype_bytes(dtype);
  if (c.key.dim_split != x) {
    return KernelStatus::invalid("cache.key.dim_split (" + std::to_string(c.key.dim_split) +
                                 ") must be x = 16 / element size = " + std::to_string(x) +
                                 " for " + abi::dtype_label(dtype) + " x-split keys");
  }
  if (c.key.dim != 1) {
    return KernelStatus::unsupported("cache.key.dim (" + std::to_string(c.key.dim) +
                                     ") must be 1 (x-groups of 16 contiguous bytes)");
  }
  if (c.value.slot != 1) {
    return KernelStatus::unsupported("cache.value.slot (" + std::to_string(c.value.slot) +
                                     ") must be 1 (a value row holds the block's slots)");
  }
  if (c.value.dim_split != c.head_size) {
    return KernelStatus::unsupported("cache.value.dim_split (" + std::to_string(c.value.dim_split) +
                                     ") must be head_size (" + std::to_string(c.head_size) +
                                     "): values are not split into dim groups");
  }
  st = first_failure(require_min(c.num_blocks, 1, "cache.num_blocks"),
                     require_min(c.num_kv_heads, 1, "cache.num_kv_heads"),
                     require_min(c.head_size, 1, "cache.head_size"),
                     require_min(c.block_size, 1, "cache.block_size"));
  if (!st.ok()) return st;
  if (c.head_size % x != 0) {
    return KernelStatus::invalid("cache.head_size (" + std::to_string(c.head_size) +
                                 ") is not a multiple of x = " + std::to_string(x));
  }
  return first_failure(
      require_min(c.key.slot, x, "cache.key.slot"), require_min(c.key.group, 1, "cache.key.group"),
      require_min(c.key.head, 1, "cache.key.head"), require_min(c.key.block, 1, "cache.key.block"),
      require_min(c.value.dim, 1, "cache.value.dim"),
      require_min(c.value.head, 1, "cache.value.head"),
      require_min(c.value.block, 1, "cache.value.block"));
}

KernelStatus max_shared_memory_per_block(const pc_device_info* device, int64_t* bytes) {
  if (device != nullptr) {
    const pc_device_info d = abi::read(*device);
    if (d.max_shared_per_block > 0) {
      *bytes = d.max_shared_per_block;
      return KernelStatus::success();
    }
  }
  int current = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(cudaGetDevice(&current));
  int value = 0;
  PAGECHECK_RETURN_IF_CUDA_FAILED(
      cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, current));
  *bytes = value;
  return KernelStatus::success();
}

KernelStatus require_shared_memory(const pc_device_info* device, int64_t need,
                                   const std::string& what, const char* advice) {
  int64_t limit = 0;
  KernelStatus st = max_shared_memory_per_block(device, &limit);
  if (!st.ok()) return st;
  if (need > limit) {
    return KernelStatus::unsupported(what + " needs " + std::to_string(need) +
                                     " bytes of shared memory per block, the device allows " +
                                     std::to_string(limit) + advice);
  }
  return KernelStatus::success();
}

KernelStatus check_attention_pointers(const pc_paged_attention_args& a) {
  return first_failure(require_pointer(a.query, "query"), require_pointer(a.key_cache, "key_cache"),
                       require_pointer(a.value_cache, "value_cache"),
                       require_pointer(a.batch.block_table, "batch.block_table"),
                       require_pointer(a.batch.context_lens, "batch.context_lens"),
                       require_pointer(a.out, "out"),
                       require_min(a.query_stride_head, 1, "query_stride_head"),
                       require_min(a.query_stride_token, 1, "query_stride_token"),
                       require_min(a.out_stride_head, 1, "out_stride_head"),
                       require_min(a.out_stride_token, 1, "out_stride_token"));
}

KernelStatus read_attention_args(const pc_paged_attention_args* args,
                                 pc_paged_attention_args& out) {
  if (args == nullptr) return KernelStatus::invalid("args is NULL");
  KernelStatus st = require_struct_size(args->struct_size, "args");
  if (st.ok()) out = abi::read(*args);
  return st;
}

KernelStatus check_attention_structs(const pc_paged_attention_args& a) {
  return first_failure(require_struct_size(a.cache.struct_size, "args.cache"),
                       require_struct_size(a.batch.struct_size, "args.batch"),
                       require_struct_size(a.features.struct_size, "args.features"));
}

KernelStatus check_attention_batch(const pc_paged_attention_args& a, int64_t max_query_len) {
  constexpr int64_t kMaxGridY = 65535;
  constexpr int64_t kMaxContext = int64_t{1} << 30;
  auto str = [](int64_t v) { return std::to_string(v); };
  const pc_ragged_batch& b = a.batch;
  KernelStatus st = first_failure(
      require_min(b.num_seqs, 0, "batch.num_seqs"), require_min(a.num_heads, 1, "num_heads"),
      require_min(b.num_query_tokens, 0, "batch.num_query_tokens"),
      require_min(b.max_blocks_per_seq, 1, "batch.max_blocks_per_seq"),
      require_min(b.block_table_stride, b.max_blocks_per_seq, "batch.block_table_stride"),
      require_min(b.max_context_len, 0, "batch.max_context_len"),
      require_min(a.cache.num_kv_heads, 1, "cache.num_kv_heads"),
      require_min(a.cache.block_size, 1, "cache.block_size"));
  if (!st.ok()) return st;
  if (b.query_start == nullptr && b.num_query_tokens != b.num_seqs) {
    return KernelStatus::invalid("batch.num_query_tokens (" + str(b.num_query_tokens) +
                                 ") differs from batch.num_seqs (" + str(b.num_seqs) +
                                 ") without query_start");
  }
  if (a.num_heads % a.cache.num_kv_heads != 0) {
    return KernelStatus::invalid("num_heads (" + str(a.num_heads) +
                                 ") is not a multiple of cache.num_kv_heads (" +
                                 str(a.cache.num_kv_heads) + ")");
  }
  const int64_t capacity = b.max_blocks_per_seq * a.cache.block_size;
  if (b.max_context_len > capacity) {
    return KernelStatus::invalid("batch.max_context_len (" + str(b.max_context_len) +
                                 ") exceeds max_blocks_per_seq * block_size (" + str(capacity) +
                                 ")");
  }
  const pc_attention_features& f = a.features;
  if (f.window < 0) return KernelStatus::invalid("features.window (" + str(f.window) + ") < 0");
  if (!(f.soft_cap >= 0.f) || !std::isfinite(f.soft_cap)) {
    return KernelStatus::invalid("features.soft_cap must be finite and >= 0");
  }
  if (!std::isfinite(a.scale)) return KernelStatus::invalid("scale is not finite");
  // What a valid call may still ask beyond the kernels: after every invalid-argument check.
  if (b.max_query_len > max_query_len) {
    return KernelStatus::unsupported("batch.max_query_len (" + str(b.max_query_len) + ") exceeds " +
                                     str(max_query_len));
  }
  if (b.num_seqs > kMaxGridY) {
    return KernelStatus::unsupported("batch.num_seqs (" + str(b.num_seqs) +
                                     ") exceeds 65535 (grid y)");
  }
  if (b.max_context_len > kMaxContext) {
    return KernelStatus::unsupported("batch.max_context_len (" + str(b.max_context_len) +
                                     ") exceeds 2^30 tokens");
  }
  return KernelStatus::success();
}

}  // namespace pagecheck::kernels
