/// Argument checks and launch of the gather_cached_kv and reshape_and_cache variants.
#include "copy/copy_host.h"

#include <limits>
#include <string>

#include "common/host_checks.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

/// The token-side tensors and the common checks of both directions. `dir` names the
/// fields ("key_out" for gather, "key" for reshape).
struct TokenSide {
  const void* key;
  int64_t key_stride_token;
  int64_t key_stride_head;
  const void* value;
  int64_t value_stride_token;
  int64_t value_stride_head;
  const char* key_name;
  const char* value_name;
};

KernelStatus check_copy(CopyVariant variant, pc_dtype dtype, int64_t num_tokens,
                        const pc_kv_cache& c, const void* key_cache, const void* value_cache,
                        const int64_t* slot_mapping, const TokenSide& t) {
  KernelStatus st = require_struct_size(c.struct_size, "args.cache");
  if (!st.ok()) return st;
  st = check_cache_shape(c, dtype);
  if (!st.ok()) return st;
  st = first_failure(
      require_min(num_tokens, 0, "num_tokens"), require_pointer(key_cache, "key_cache"),
      require_pointer(value_cache, "value_cache"), require_pointer(slot_mapping, "slot_mapping"),
      require_pointer(t.key, t.key_name), require_pointer(t.value, t.value_name),
      require_min(t.key_stride_head, 1, "key_stride_head"),
      require_min(t.key_stride_token, 1, "key_stride_token"),
      require_min(t.value_stride_head, 1, "value_stride_head"),
      require_min(t.value_stride_token, 1, "value_stride_token"));
  if (!st.ok()) return st;
  if (num_tokens > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("num_tokens (" + std::to_string(num_tokens) +
                                     ") exceeds 2^31 - 1");
  }
  if (variant == CopyVariant::kScalar) return KernelStatus::success();
  const int64_t x = c.key.dim_split;  // 16 / element size (check_cache_shape)
  return first_failure(require_aligned16(key_cache, "key_cache", "16-byte key x-group accesses"),
                       require_vector_stride(c.key.block, x, "cache.key.block"),
                       require_vector_stride(c.key.head, x, "cache.key.head"),
                       require_vector_stride(c.key.group, x, "cache.key.group"),
                       require_vector_stride(c.key.slot, x, "cache.key.slot"),
                       require_aligned16(t.key, t.key_name, "16-byte row accesses"),
                       require_vector_stride(t.key_stride_token, x, "key_stride_token"),
                       require_vector_stride(t.key_stride_head, x, "key_stride_head"),
                       require_aligned16(t.value, t.value_name, "16-byte row accesses"),
                       require_vector_stride(t.value_stride_token, x, "value_stride_token"),
                       require_vector_stride(t.value_stride_head, x, "value_stride_head"));
}

CopyParams make_params(int64_t num_tokens, const pc_kv_cache& c, const void* key_cache,
                       const void* value_cache, const int64_t* slot_mapping, const TokenSide& t) {
  CopyParams p{};
  p.num_tokens = num_tokens;
  p.num_kv_heads = static_cast<int32_t>(c.num_kv_heads);
  p.head_size = static_cast<int32_t>(c.head_size);
  p.block_size = static_cast<int32_t>(c.block_size);
  p.key_cache = const_cast<void*>(key_cache);
  p.kc_stride_block = c.key.block;
  p.kc_stride_head = c.key.head;
  p.kc_stride_group = c.key.group;
  p.kc_stride_slot = c.key.slot;
  p.value_cache = const_cast<void*>(value_cache);
  p.vc_stride_block = c.value.block;
  p.vc_stride_head = c.value.head;
  p.vc_stride_dim = c.value.dim;
  p.key = const_cast<void*>(t.key);
  p.key_stride_token = t.key_stride_token;
  p.key_stride_head = t.key_stride_head;
  p.value = const_cast<void*>(t.value);
  p.value_stride_token = t.value_stride_token;
  p.value_stride_head = t.value_stride_head;
  p.slot_mapping = slot_mapping;
  return p;
}

TokenSide gather_side(const pc_gather_args& a) {
  return {a.key_out,   a.key_stride_token,   a.key_stride_head,
          a.value_out, a.value_stride_token, a.value_stride_head,
          "key_out",   "value_out"};
}

TokenSide reshape_side(const pc_reshape_and_cache_args& a) {
  return {a.key,
          a.key_stride_token,
          a.key_stride_head,
          a.value,
          a.value_stride_token,
          a.value_stride_head,
          "key",
          "value"};
}

/// can_implement on arguments already read with abi::read.
KernelStatus check_read_gather(CopyVariant variant, const pc_gather_args& a) {
  if (a.dequantize != 0) {
    return KernelStatus::unsupported("dequantize: the gather copies raw elements only");
  }
  return check_copy(variant, a.dtype, a.num_tokens, a.cache, a.key_cache, a.value_cache,
                    a.slot_mapping, gather_side(a));
}

KernelStatus check_read_reshape(CopyVariant variant, const pc_reshape_and_cache_args& a) {
  return check_copy(variant, a.dtype, a.num_tokens, a.cache, a.key_cache, a.value_cache,
                    a.slot_mapping, reshape_side(a));
}

}  // namespace

KernelStatus check_gather(CopyVariant variant, const pc_gather_args* a) {
  if (a == nullptr) return KernelStatus::invalid("args is NULL");
  const KernelStatus st = require_struct_size(a->struct_size, "args");
  return st.ok() ? check_read_gather(variant, abi::read(*a)) : st;
}

KernelStatus check_reshape(CopyVariant variant, const pc_reshape_and_cache_args* a) {
  if (a == nullptr) return KernelStatus::invalid("args is NULL");
  const KernelStatus st = require_struct_size(a->struct_size, "args");
  return st.ok() ? check_read_reshape(variant, abi::read(*a)) : st;
}

KernelStatus run_gather(CopyVariant variant, const pc_gather_args* args, cudaStream_t stream) {
  KernelStatus st = check_gather(variant, args);
  if (!st.ok()) return st;
  const pc_gather_args a = abi::read(*args);
  const CopyParams p = make_params(a.num_tokens, a.cache, a.key_cache, a.value_cache,
                                   a.slot_mapping, gather_side(a));
  return launch_gather(variant, a.dtype, p, stream);
}

KernelStatus run_reshape(CopyVariant variant, const pc_reshape_and_cache_args* args,
                         cudaStream_t stream) {
  KernelStatus st = check_reshape(variant, args);
  if (!st.ok()) return st;
  const pc_reshape_and_cache_args a = abi::read(*args);
  const CopyParams p = make_params(a.num_tokens, a.cache, a.key_cache, a.value_cache,
                                   a.slot_mapping, reshape_side(a));
  return launch_reshape(variant, a.dtype, p, stream);
}

}  // namespace pagecheck::kernels
