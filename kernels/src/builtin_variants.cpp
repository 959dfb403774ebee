/// C-ABI descriptors of the built-in variants: names, supported shapes, capabilities and the
/// can_implement / workspace_bytes / launch trampolines into the C++ host code.
#include "builtin_variants.h"

#include <iterator>

#include "attention/attention_host.h"
#include "common/kernel_lists.h"
#include "copy/copy_host.h"

namespace pagecheck::kernels {
namespace {

constexpr uint32_t kAllDtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
constexpr uint32_t kAttentionCaps =
    PC_CAP_ALIBI | PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE | PC_CAP_LARGE_CACHE;
constexpr uint32_t kCopyCaps = PC_CAP_STRIDED_TOKENS | PC_CAP_PADDED_CACHE | PC_CAP_LARGE_CACHE;

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

pc_status attention_can_implement(const pc_variant* self, const void* args, char* msg, size_t len) {
  return report(check_attention(variant_of<AttentionVariant>(self),
                                static_cast<const pc_paged_attention_args*>(args)),
                msg, len);
}
size_t attention_workspace(const pc_variant* self, const void* args) {
  return attention_workspace_bytes(variant_of<AttentionVariant>(self),
                                   static_cast<const pc_paged_attention_args*>(args));
}
pc_status attention_launch(const pc_variant* self, const void* args, void* workspace, void* stream,
                           char* msg, size_t len) {
  return report(launch_attention(variant_of<AttentionVariant>(self),
                                 static_cast<const pc_paged_attention_args*>(args), workspace,
                                 static_cast<cudaStream_t>(stream)),
                msg, len);
}

pc_status gather_can_implement(const pc_variant* self, const void* args, char* msg, size_t len) {
  return report(
      check_gather(variant_of<CopyVariant>(self), static_cast<const pc_gather_args*>(args)), msg,
      len);
}
pc_status gather_launch(const pc_variant* self, const void* args, void*, void* stream, char* msg,
                        size_t len) {
  return report(run_gather(variant_of<CopyVariant>(self), static_cast<const pc_gather_args*>(args),
                           static_cast<cudaStream_t>(stream)),
                msg, len);
}

pc_status reshape_can_implement(const pc_variant* self, const void* args, char* msg, size_t len) {
  return report(check_reshape(variant_of<CopyVariant>(self),
                              static_cast<const pc_reshape_and_cache_args*>(args)),
                msg, len);
}
pc_status reshape_launch(const pc_variant* self, const void* args, void*, void* stream, char* msg,
                         size_t len) {
  return report(run_reshape(variant_of<CopyVariant>(self),
                            static_cast<const pc_reshape_and_cache_args*>(args),
                            static_cast<cudaStream_t>(stream)),
                msg, len);
}

pc_variant attention(const char* name, const char* description, const AttentionVariant* v) {
  return pc_variant{name,
                    description,
                    PC_FAMILY_PAGED_ATTENTION,
                    kAllDtypes,
                    kHeadSizes,
                    kNumHeadSizes,
                    kBlockSizes,
                    kNumBlockSizes,
                    kAttentionCaps,
                    &attention_can_implement,
                    &attention_workspace,
                    &attention_launch,
                    const_cast<AttentionVariant*>(v)};
}

pc_variant gather(const char* name, const char* description, const CopyVariant* v) {
  return pc_variant{name,
                    description,
                    PC_FAMILY_GATHER_CACHED_KV,
                    kAllDtypes,
                    kHeadSizes,
                    kNumHeadSizes,
                    kBlockSizes,
                    kNumBlockSizes,
                    kCopyCaps,
                    &gather_can_implement,
                    nullptr,
                    &gather_launch,
                    const_cast<CopyVariant*>(v)};
}

pc_variant reshape(const char* name, const char* description, const CopyVariant* v) {
  return pc_variant{name,
                    description,
                    PC_FAMILY_RESHAPE_AND_CACHE,
                    kAllDtypes,
                    kHeadSizes,
                    kNumHeadSizes,
                    kBlockSizes,
                    kNumBlockSizes,
                    kCopyCaps,
                    &reshape_can_implement,
                    nullptr,
                    &reshape_launch,
                    const_cast<CopyVariant*>(v)};
}

}  // namespace

const pc_variant* builtin_variants(std::size_t* count) {
  // Function-local: safe to call from other translation units' static initializers.
  static const pc_variant kVariants[] = {
      attention("v1_baseline",
                "one block per (seq, head); each thread group loads the query from global memory",
                &kV1Baseline),
      attention("v1_shared_q",
                "one block per (seq, head); the block loads the query into shared memory once",
                &kV1SharedQ),
      attention("v2_split",
                "split-K: 256+-token partitions sized to the grid, then a reduction kernel",
                &kV2Split),
      gather("naive", "one thread per element, scalar loads and stores", &kScalar),
      gather("vectorized", "threads of a token copy 16-byte key groups; 16-byte coalesced writes",
             &kVectorized),
      reshape("scalar", "one thread per element, scalar loads and stores", &kScalar),
      reshape("vectorized", "16-byte coalesced row reads; 16-byte key-group writes", &kVectorized),
  };

  *count = std::size(kVariants);
  return kVariants;
}

}  // namespace pagecheck::kernels
