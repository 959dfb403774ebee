/// v3_gqa's C-ABI declaration and trampolines into gqa_host.cpp.
#include "attention_gqa/gqa_variant.h"

#include <array>
#include <iterator>

#include "attention/attention_host.h"
#include "attention/attention_params.h"
#include "attention_gqa/gqa_host.h"
#include "attention_gqa/gqa_params.h"
#include "common/host_checks.h"
#include "common/kernel_lists.h"

namespace pagecheck::kernels {
namespace {

constexpr uint32_t kQueryDtypes =
    (1u << PC_DTYPE_FLOAT32) | (1u << PC_DTYPE_FLOAT16) | (1u << PC_DTYPE_BFLOAT16);
constexpr uint32_t kKvDtypes = kQueryDtypes | (1u << PC_DTYPE_FP8_E4M3) | (1u << PC_DTYPE_FP8_E5M2);
constexpr uint32_t kCacheKinds =
    (1u << PC_CACHE_X_SPLIT) | (1u << PC_CACHE_NHD) | (1u << PC_CACHE_HND);
constexpr uint32_t kScaleKinds =
    (1u << PC_SCALE_NONE) | (1u << PC_SCALE_PER_TENSOR) | (1u << PC_SCALE_PER_KV_HEAD);
/// Every offset is 64-bit and every stride is read from the descriptor (any padding, combined
/// K/V through value_cache); query and output are read and written element by element with
/// their strides.
constexpr uint64_t kCaps = PC_CAP_ALIBI | PC_CAP_LARGE_CACHE | PC_CAP_TOKEN_STRIDE |
                           PC_CAP_HEAD_STRIDE | PC_CAP_STRIDED_OUTPUT | PC_CAP_CACHE_PAD_SHARED |
                           PC_CAP_CACHE_PAD | PC_CAP_COMBINED_KV | PC_CAP_SINKS | PC_CAP_WINDOW |
                           PC_CAP_SOFT_CAP | PC_CAP_NON_CAUSAL;

/// Block size is a runtime parameter: the compiled list of the other variants plus 1, 64, 128
/// and 256.
constexpr int32_t kGqaBlockSizes[] = {1, 8, 16, 32, 64, 128, 256};

/// Groups below this many query heads per KV head run on v2_split's kernels where those can
/// run the call: reading K/V once per group saves little there, and v2_split's one block per
/// (row, head, partition) keeps more loads in flight (docs/kernels.md, "v3_gqa").
constexpr int64_t kSmallGroup = 4;

/// How v3_gqa runs a call: its arguments read once, the outcome of its checks, and whether the
/// call is a small group that v2_split's kernels run (their own checks accept it).
struct Route {
  pc_paged_attention_args args{};                 ///< read with read_attention_args
  KernelStatus status = KernelStatus::success();  ///< v3_gqa's checks
  bool split = false;                             ///< runs on v2_split's kernels
};
Route route(const pc_device_info* device, const void* args) {
  Route r;
  r.status = read_attention_args(static_cast<const pc_paged_attention_args*>(args), r.args);
  if (r.status.ok()) r.status = check_gqa(device, r.args);
  if (r.status.ok()) {
    r.split = r.args.num_heads / r.args.cache.num_kv_heads < kSmallGroup &&
              check_read_args(AttentionVariant::kV2Split, device, r.args).ok();
  }
  return r;
}

/// Every partition size a launch may use, ascending and once each: the tensor-core and
/// CUDA-core kernels' list and, for small groups, v2_split's.
struct PartitionSizeList {
  std::array<int32_t, kGqaPartitionSizes.size() + kPartitionSizes.size()> sizes{};  ///< sorted
  int32_t count = 0;  ///< distinct sizes
};
constexpr PartitionSizeList kDeclaredPartitionSizes = [] {
  PartitionSizeList list;
  auto insert = [&list](int32_t size) {  // keeps the list sorted and distinct
    int32_t i = 0;
    while (i < list.count && list.sizes[i] < size) ++i;
    if (i < list.count && list.sizes[i] == size) return;
    for (int32_t j = list.count; j > i; --j) list.sizes[j] = list.sizes[j - 1];
    list.sizes[i] = size;
    ++list.count;
  };
  for (int32_t s : kGqaPartitionSizes) insert(s);
  for (int32_t s : kPartitionSizes) insert(s);
  return list;
}();

pc_status can_implement(const pc_variant*, const pc_device_info* device, const void* args,
                        char* msg, size_t len) {
  return report(route(device, args).status, msg, len);
}
size_t workspace(const pc_variant*, const pc_device_info* device, const void* args) {
  const Route r = route(device, args);
  if (!r.status.ok()) return 0;
  return r.split ? checked_attention_workspace(AttentionVariant::kV2Split, r.args)
                 : gqa_workspace_bytes(device, r.args);
}
pc_status launch(const pc_variant*, const pc_device_info* device, const void* args,
                 void* workspace_ptr, void* stream, char* msg, size_t len) {
  const Route r = route(device, args);
  if (!r.status.ok()) return report(r.status, msg, len);
  const auto s = static_cast<cudaStream_t>(stream);
  return report(r.split
                    ? launch_checked_attention(AttentionVariant::kV2Split, r.args, workspace_ptr, s)
                    : launch_gqa_attention(device, r.args, workspace_ptr, s),
                msg, len);
}

}  // namespace

pc_variant gqa_variant() {
  pc_variant v{};
  v.struct_size = sizeof(pc_variant);
  v.name = "v3_gqa";
  v.description =
      "one block per (seq, kv head, split) for all query rows of the group, tensor cores for "
      "fp16/bf16; fp8 KV, every layout, sinks/window/soft-cap, q_len <= 16";
  v.family = PC_FAMILY_PAGED_ATTENTION;
  v.dtype_mask = kQueryDtypes;
  v.kv_dtype_mask = kKvDtypes;
  v.cache_kind_mask = kCacheKinds;
  v.scale_kind_mask = kScaleKinds;
  v.head_sizes = kHeadSizes;
  v.num_head_sizes = kNumHeadSizes;
  v.block_sizes = kGqaBlockSizes;
  v.num_block_sizes = static_cast<int32_t>(std::size(kGqaBlockSizes));
  v.caps = kCaps;
  v.max_query_len = kGqaMaxQueryLen;
  v.partition_sizes = kDeclaredPartitionSizes.sizes.data();
  v.num_partition_sizes = kDeclaredPartitionSizes.count;
  v.precision = pc_precision{};
  v.precision.struct_size = sizeof(pc_precision);
  // float32 logits, sums and accumulators; the tensor-core path rounds the softmax weights
  // exp(l - m) to the query dtype before P.V (docs/kernels.md).
  v.precision.rounded = PC_ROUND_WEIGHTS;
  v.context0 = PC_CONTEXT0_ZEROS;
  v.nondeterministic = 0;
  v.can_implement = &can_implement;
  v.workspace_bytes = &workspace;
  v.launch = &launch;
  v.user_data = nullptr;
  return v;
}

}  // namespace pagecheck::kernels
