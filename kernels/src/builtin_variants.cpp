/// C-ABI descriptors of the built-in variants: names, supported shapes, capabilities and the
/// can_implement / workspace_bytes / launch trampolines into the C++ host code.
#include "builtin_variants.h"

#include <iterator>

#include "attention/attention_host.h"
#include "attention/attention_params.h"
#include "attention/attention_rows.h"
#include "attention/attention_shapes.h"
#include "attention_gqa/gqa_variant.h"
#include "common/kernel_lists.h"
#include "copy/copy_host.h"

namespace pagecheck::kernels {
namespace {

constexpr uint32_t kAllDtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
/// Strides the host checks accept (multiples of x where 16-byte accesses need it): padded
/// token and head strides of every token tensor, strided outputs, K and V cache strides padded
/// independently, and 64-bit offsets.
constexpr uint64_t kLayoutCaps = PC_CAP_LARGE_CACHE | PC_CAP_TOKEN_STRIDE | PC_CAP_HEAD_STRIDE |
                                 PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD_SHARED | PC_CAP_CACHE_PAD;
constexpr uint64_t kAttentionCaps = kLayoutCaps | PC_CAP_ALIBI;
/// Copies: every layout the strides describe, K and V in one allocation, inputs of every
/// magnitude (bit copies; fp8 conversions saturate as the reference does).
constexpr uint64_t kCopyCaps = kLayoutCaps | PC_CAP_COMBINED_KV | PC_CAP_FULL_RANGE;
constexpr uint32_t kFp8Dtypes = (1u << PC_DTYPE_FP8_E4M3) | (1u << PC_DTYPE_FP8_E5M2);

// user_data points at one of these.
const AttentionVariant kV1Baseline = AttentionVariant::kV1Baseline;
const AttentionVariant kV1SharedQ = AttentionVariant::kV1SharedQ;
const AttentionVariant kV2Split = AttentionVariant::kV2Split;
const CopyVariant kScalar = CopyVariant::kScalar;
const CopyVariant kVectorized = CopyVariant::kVectorized;

template <typename E>
E variant_of(const pc_variant* self) {
  return *static_cast<const E*>(self->user_data);
}

pc_status attention_can_implement(const pc_variant* self, const pc_device_info* device,
                                  const void* args, char* msg, size_t len) {
  return report(check_attention(variant_of<AttentionVariant>(self), device,
                                static_cast<const pc_paged_attention_args*>(args)),
                msg, len);
}
size_t attention_workspace(const pc_variant* self, const pc_device_info*, const void* args) {
  return attention_workspace_bytes(variant_of<AttentionVariant>(self),
                                   static_cast<const pc_paged_attention_args*>(args));
}
pc_status attention_launch(const pc_variant* self, const pc_device_info* device, const void* args,
                           void* workspace, void* stream, char* msg, size_t len) {
  return report(launch_attention(variant_of<AttentionVariant>(self), device,
                                 static_cast<const pc_paged_attention_args*>(args), workspace,
                                 static_cast<cudaStream_t>(stream)),
                msg, len);
}

pc_status gather_can_implement(const pc_variant* self, const pc_device_info*, const void* args,
                               char* msg, size_t len) {
  return report(
      check_gather(variant_of<CopyVariant>(self), static_cast<const pc_gather_args*>(args)), msg,
      len);
}
pc_status gather_launch(const pc_variant* self, const pc_device_info*, const void* args, void*,
                        void* stream, char* msg, size_t len) {
  return report(run_gather(variant_of<CopyVariant>(self), static_cast<const pc_gather_args*>(args),
                           static_cast<cudaStream_t>(stream)),
                msg, len);
}

pc_status reshape_can_implement(const pc_variant* self, const pc_device_info*, const void* args,
                                char* msg, size_t len) {
  return report(check_reshape(variant_of<CopyVariant>(self),
                              static_cast<const pc_reshape_and_cache_args*>(args)),
                msg, len);
}
pc_status reshape_launch(const pc_variant* self, const pc_device_info*, const void* args, void*,
                         void* stream, char* msg, size_t len) {
  return report(run_reshape(variant_of<CopyVariant>(self),
                            static_cast<const pc_reshape_and_cache_args*>(args),
                            static_cast<cudaStream_t>(stream)),
                msg, len);
}

/// The declaration every built-in variant shares: float32 / float16 / bfloat16 with a cache of
/// the same dtype, x-split caches without scales, the compiled head and block sizes, decode only
/// (one query token per sequence), no context-length-0 rows, pagecheck's strict float32 model
/// (fp32 accumulators, one rounding of the output), deterministic.
pc_variant common(const char* name, const char* description, pc_family family, uint64_t caps,
                  const void* user_data) {
  pc_variant v{};
  v.struct_size = sizeof(pc_variant);
  v.name = name;
  v.description = description;
  v.family = family;
  v.dtype_mask = kAllDtypes;
  v.kv_dtype_mask = 0;                         // = dtype
  v.cache_kind_mask = 1u << PC_CACHE_X_SPLIT;  // x-split only
  v.scale_kind_mask = 1u << PC_SCALE_NONE;     // no fp8 scales
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = kNumHeadSizes;
  v.block_sizes = kBlockSizes;
  v.num_block_sizes = kNumBlockSizes;
  v.caps = caps;
  v.max_query_len = 1;
  v.partition_sizes = nullptr;
  v.num_partition_sizes = 0;
  v.precision = pc_precision{};
  v.precision.struct_size = sizeof(pc_precision);
  v.context0 = PC_CONTEXT0_UNSUPPORTED;
  v.nondeterministic = 0;
  v.user_data = const_cast<void*>(user_data);
  return v;
}

/// v1 and v2_split: the features (sinks, window, soft-cap, causal or not), up to kMaxQueryLen
/// new tokens per sequence, context-0 rows written as +0, every power-of-two block size with a
/// tile (attention_shapes.h), and v1 also head size 512.
pc_variant attention(const char* name, const char* description, const AttentionVariant* which) {
  pc_variant v = common(
      name, description, PC_FAMILY_PAGED_ATTENTION,
      kAttentionCaps | PC_CAP_SINKS | PC_CAP_WINDOW | PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL, which);
  v.max_query_len = kMaxQueryLen;
  v.context0 = PC_CONTEXT0_ZEROS;
  v.block_sizes = kAttentionBlockSizes.sizes.data();
  v.num_block_sizes = kAttentionBlockSizes.count;
  if (*which != AttentionVariant::kV2Split) {
    v.head_sizes = kV1HeadSizes.data();
    v.num_head_sizes = static_cast<int32_t>(kV1HeadSizes.size());
  }
  if (*which == AttentionVariant::kV2Split) {
    // The sizes choose_partition_size can pick (attention_params.h).
    v.partition_sizes = kPartitionSizes.data();
    v.num_partition_sizes = static_cast<int32_t>(kPartitionSizes.size());
  }
  v.can_implement = &attention_can_implement;
  v.workspace_bytes = &attention_workspace;
  v.launch = &attention_launch;
  return v;
}

/// The copies' layouts and cache dtypes: x-split, NHD and HND; the token dtype or fp8 (E4M3,
/// E5M2) with per-tensor or per-kv-head scales.
void declare_copy_layouts(pc_variant& v) {
  v.kv_dtype_mask = kAllDtypes | kFp8Dtypes;
  v.cache_kind_mask = (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
  v.scale_kind_mask =
      (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
}

pc_variant gather(const char* name, const char* description, const CopyVariant* which) {
  pc_variant v =
      common(name, description, PC_FAMILY_GATHER_CACHED_KV, kCopyCaps | PC_CAP_DEQUANTIZE, which);
  declare_copy_layouts(v);
  v.dtype_mask |= kFp8Dtypes;  // raw gathers of fp8 codes (token dtype == cache dtype)
  v.can_implement = &gather_can_implement;
  v.launch = &gather_launch;
  return v;
}

pc_variant reshape(const char* name, const char* description, const CopyVariant* which) {
  pc_variant v = common(name, description, PC_FAMILY_RESHAPE_AND_CACHE, kCopyCaps, which);
  declare_copy_layouts(v);
  v.can_implement = &reshape_can_implement;
  v.launch = &reshape_launch;
  return v;
}

}  // namespace
const pc_variant* builtin_variants(std::size_t* count) {
  // Function-local: safe to call from other translation units' static initializers.
  static const pc_variant kVariants[] = {
      attention("v1_baseline",
                "one block per (query row, head); each thread group loads the query from global "
                "memory",
                &kV1Baseline),
      attention("v1_shared_q",
                "one block per (query row, head); the block loads the query into shared memory "
                "once",
                &kV1SharedQ),
      attention("v2_split",
                "split-K: 256+-token partitions sized to the grid, then a reduction kernel",
                &kV2Split),
      gqa_variant(),  // v3_gqa: kernels/src/attention_gqa/gqa_variant.cpp
      gather("naive", "one thread per element, scalar loads and stores", &kScalar),
      gather("vectorized",
             "16-byte cache chunks; slot rows of consecutive slots transposed in shared memory "
             "where slots are contiguous (strided scalar reads otherwise); 16-byte writes",
             &kVectorized),
      reshape("scalar", "one thread per element, scalar loads and stores", &kScalar),
      reshape("vectorized",
              "16-byte row reads; 16-byte cache chunk writes, slot rows of consecutive slots "
              "where slots are contiguous (strided scalar writes otherwise)",
              &kVectorized),
  };

  *count = std::size(kVariants);
  return kVariants;
}

}  // namespace pagecheck::kernels
