/// v3_gqa host side: argument checks, the partition choice, the workspace layout and launch.
#include "attention_gqa/gqa_host.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/attention_batch_fields.h"
#include "common/host_checks.h"
#include "common/kernel_lists.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

bool is_fp8(pc_dtype d) {
  return d == PC_DTYPE_FP8_E4M3 || d == PC_DTYPE_FP8_E5M2;
}

/// The launch geometry both workspace_bytes and launch derive from the arguments alone.
using Plan = GqaLaunchShape;

Plan make_plan(const pc_device_info* device, const pc_paged_attention_args& a) {
  Plan plan;
  const pc_ragged_batch& b = a.batch;
  const int64_t group = a.num_heads / a.cache.num_kv_heads;
  const int64_t q_bound = b.max_query_len > 1 ? b.max_query_len : 1;
  const int64_t rows = group * q_bound;
  plan.tensor_cores = gqa_uses_tensor_cores(a);
  plan.rows_per_block = plan.tensor_cores ? gqa_tc_rows_per_block(rows) : gqa_rows_per_block(rows);
  plan.row_chunks = (rows + plan.rows_per_block - 1) / plan.rows_per_block;
  const int64_t ctx = b.max_context_len;
  plan.window = a.features.window > 0 && a.features.window < ctx ? a.features.window : 0;
  // A windowed row reads at most W keys; the chunk's rows span q_bound - 1 positions more.
  const int64_t work = plan.window > 0 ? std::min(ctx, plan.window + q_bound - 1) : ctx;
  int64_t sms = 0;
  if (device != nullptr) sms = abi::read(*device).sm_count;
  const int64_t row_blocks = b.num_seqs * a.cache.num_kv_heads * plan.row_chunks;
  const GqaKernelFacts facts = gqa_kernel_facts(a.cache.head_size, plan, is_fp8(a.cache.dtype));
  plan.smem_bytes = facts.smem_bytes;
  plan.partition_size = choose_gqa_partition_size(
      row_blocks, work, ctx, sms, plan.tensor_cores ? kGqaTcKeysInFlight : 0, facts.blocks_per_sm);
  if (plan.partition_size > 0 && ctx > 0) {
    plan.partitions = partitions_over(ctx, plan.partition_size);
    // A span of `work` keys starting anywhere touches at most ceil(work / size) + 1 partitions.
    plan.grid_partitions =
        plan.window > 0 ? std::min(plan.partitions, partitions_over(work, plan.partition_size) + 1)
                        : plan.partitions;
  }
  return plan;
}

/// Byte offsets of the workspace sections (max, sum, out), each 256-byte aligned.
struct Workspace {
  int64_t sum_offset = 0, out_offset = 0, total = 0;
  Workspace(const pc_paged_attention_args& a, const Plan& plan) {
    if (plan.partitions <= 1) return;
    const int64_t entries = a.batch.num_query_tokens * a.num_heads * plan.partitions;
    auto align = [](int64_t bytes) { return (bytes + 255) / 256 * 256; };
    sum_offset = align(entries * 4);
    out_offset = sum_offset + align(entries * 4);
    total = out_offset + align(entries * a.cache.head_size * 4);
  }
};

KernelStatus check_cache(const pc_paged_attention_args& a) {
  const pc_kv_cache& c = a.cache;
  if (a.dtype != PC_DTYPE_FLOAT32 && a.dtype != PC_DTYPE_FLOAT16 && a.dtype != PC_DTYPE_BFLOAT16) {
    return KernelStatus::unsupported(std::string("unsupported dtype: ") +
                                     abi::dtype_label(a.dtype) +
                                     " (queries and outputs are float32, float16 or bfloat16)");
  }
  if (c.dtype != a.dtype && !is_fp8(c.dtype)) {
    return KernelStatus::unsupported(std::string("cache.dtype ") + abi::dtype_label(c.dtype) +
                                     " with " + abi::dtype_label(a.dtype) +
                                     " queries: the cache holds the query dtype or fp8");
  }
  if (c.kind != PC_CACHE_X_SPLIT && c.kind != PC_CACHE_NHD && c.kind != PC_CACHE_HND) {
    return KernelStatus::unsupported("cache.kind " + str(static_cast<int>(c.kind)) +
                                     " is not a known page layout");
  }
  if (is_fp8(c.dtype)) {
    if (c.scale_kind != PC_SCALE_NONE && c.scale_kind != PC_SCALE_PER_TENSOR &&
        c.scale_kind != PC_SCALE_PER_KV_HEAD) {
      return KernelStatus::unsupported("cache.scale_kind " + str(static_cast<int>(c.scale_kind)) +
                                       " is not a known scale kind");
    }
    if (c.scale_kind != PC_SCALE_NONE && (c.k_scale == nullptr || c.v_scale == nullptr)) {
      return KernelStatus::invalid("cache.k_scale / cache.v_scale is NULL for an fp8 cache");
    }
  } else if (c.scale_kind != PC_SCALE_NONE) {
    return KernelStatus::unsupported("cache.scale_kind " + str(static_cast<int>(c.scale_kind)) +
                                     ": scales only with fp8 caches");
  }
  KernelStatus st = first_failure(require_min(c.num_blocks, 1, "cache.num_blocks"),
                                  require_min(c.num_kv_heads, 1, "cache.num_kv_heads"),
                                  require_min(c.head_size, 1, "cache.head_size"),
                                  require_min(c.block_size, 1, "cache.block_size"),
                                  require_min(c.key.dim_split, 1, "cache.key.dim_split"),
                                  require_min(c.value.dim_split, 1, "cache.value.dim_split"));
  if (!st.ok()) return st;
  if (!compiled_head_size(c.head_size)) {
    return KernelStatus::unsupported("unsupported head_size: " + str(c.head_size));
  }
  if (c.head_size % c.key.dim_split != 0 || c.head_size % c.value.dim_split != 0) {
    return KernelStatus::invalid(
        "cache.key.dim_split / cache.value.dim_split does not divide "
        "head_size (" +
        str(c.head_size) + ")");
  }
  if (c.block_size > (int64_t{1} << 20)) {
    return KernelStatus::unsupported("cache.block_size (" + str(c.block_size) + ") exceeds 2^20");
  }
  return KernelStatus::success();
}

KernelStatus check_pointers(const pc_paged_attention_args& a) {
  const int64_t elem = abi::dtype_bytes(a.dtype);
  KernelStatus st = check_attention_pointers(a);
  if (!st.ok()) return st;
  if (reinterpret_cast<uintptr_t>(a.out) % static_cast<uintptr_t>(elem) != 0 ||
      reinterpret_cast<uintptr_t>(a.query) % static_cast<uintptr_t>(elem) != 0) {
    return KernelStatus::invalid("query / out is not aligned to its element size");
  }
  return KernelStatus::success();
}

KernelStatus check_device(const pc_device_info* device, const pc_paged_attention_args& a,
                          const Plan& plan) {
  if (plan.partition_size == 0) {
    return KernelStatus::unsupported("batch.max_context_len (" + str(a.batch.max_context_len) +
                                     ") needs more than 65535 partitions");
  }
  return require_shared_memory(device, plan.smem_bytes, "head_size " + str(a.cache.head_size));
}

/// The cache, the batch and features (check_attention_batch), the pointers and the device.
KernelStatus check_read(const pc_device_info* device, const pc_paged_attention_args& a) {
  KernelStatus st = check_attention_structs(a);
  if (!st.ok()) return st;
  st = check_cache(a);
  if (!st.ok()) return st;
  st = check_attention_batch(a, kGqaMaxQueryLen);
  if (!st.ok()) return st;
  if (a.num_heads > (int64_t{1} << 24)) {
    return KernelStatus::unsupported("num_heads (" + str(a.num_heads) + ") exceeds 2^24");
  }
  st = check_pointers(a);
  if (!st.ok()) return st;
  return check_device(device, a, make_plan(device, a));
}

bool multiple(int64_t v, int64_t of) {
  return v % of == 0;
}

GqaTensor tensor(const void* ptr, const pc_cache_strides& s, const pc_kv_cache& c,
                 const float* scale) {
  const int64_t eb = abi::dtype_bytes(c.dtype);
  GqaTensor t{};
  t.base = static_cast<const char*>(ptr);
  t.block = s.block;
  t.head = s.head;
  t.slot = s.slot;
  t.group = s.group;
  t.dim = s.dim;
  t.dim_split = static_cast<int32_t>(s.dim_split);
  t.mode =
      gqa_load_mode(s, c.head_size, c.block_size, eb, reinterpret_cast<uintptr_t>(ptr) % 16 == 0);
  t.scale = is_fp8(c.dtype) && c.scale_kind != PC_SCALE_NONE ? scale : nullptr;
  return t;
}

}  // namespace

GqaLoadMode gqa_load_mode(const pc_cache_strides& s, int64_t head_size, int64_t block_size,
                          int64_t element_bytes, bool aligned16) {
  if (!aligned16 || element_bytes <= 0) return kGqaLoadScalar;
  const int64_t ve = 16 / element_bytes;
  const bool split = s.dim_split < head_size;  // the group stride is used
  const bool common =
      multiple(s.block, ve) && multiple(s.head, ve) && (!split || multiple(s.group, ve));
  if (!common) return kGqaLoadScalar;
  if (s.dim == 1 && multiple(s.dim_split, ve) && multiple(head_size, ve) && multiple(s.slot, ve)) {
    return kGqaLoadDimVector;
  }
  if (s.slot == 1 && multiple(block_size, ve) && multiple(s.dim, ve)) return kGqaLoadSlotVector;
  return kGqaLoadScalar;
}

bool gqa_uses_tensor_cores(const pc_paged_attention_args& a) {
  const pc_kv_cache& c = a.cache;
  if ((a.dtype != PC_DTYPE_FLOAT16 && a.dtype != PC_DTYPE_BFLOAT16) ||
      (c.dtype != a.dtype && !is_fp8(c.dtype))) {
    return false;
  }
  if (c.head_size % 16 != 0) return false;
  const int64_t eb = abi::dtype_bytes(c.dtype);
  auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  const GqaLoadMode k = gqa_load_mode(c.key, c.head_size, c.block_size, eb, aligned(a.key_cache));
  const GqaLoadMode v =
      gqa_load_mode(c.value, c.head_size, c.block_size, eb, aligned(a.value_cache));
  // The kernel keeps the block stride, a slot's offset within its block and each dim's offset
  // within a token in 32 bits (the block term itself is 64-bit).
  auto dims_fit = [&](const pc_cache_strides& s) {
    constexpr int64_t kLimit = int64_t{1} << 31;
    const int64_t groups = (c.head_size + s.dim_split - 1) / s.dim_split;
    const int64_t within = groups * s.group + s.dim_split * s.dim + c.block_size * s.slot;
    return within < kLimit && s.block < kLimit && s.head < kLimit;
  };
  return k == kGqaLoadDimVector && (v == kGqaLoadDimVector || v == kGqaLoadSlotVector) &&
         dims_fit(c.key) && dims_fit(c.value);
}

GqaLaunchShape gqa_launch_shape(const pc_device_info* device, const pc_paged_attention_args& a) {
  return make_plan(device, a);
}

KernelStatus check_gqa(const pc_device_info* device, const pc_paged_attention_args& a) {
  return check_read(device, a);
}

std::size_t gqa_workspace_bytes(const pc_device_info* device, const pc_paged_attention_args& a) {
  return static_cast<std::size_t>(Workspace(a, make_plan(device, a)).total);
}

KernelStatus launch_gqa_attention(const pc_device_info* device, const pc_paged_attention_args& a,
                                  void* workspace, cudaStream_t stream) {
  const pc_ragged_batch& b = a.batch;
  if (b.num_seqs == 0) return KernelStatus::success();
  const Plan plan = make_plan(device, a);
  const Workspace layout(a, plan);

  GqaParams p{};
  p.query = a.query;
  p.query_stride_token = a.query_stride_token;
  p.query_stride_head = a.query_stride_head;
  p.out = a.out;
  p.out_stride_token = a.out_stride_token;
  p.out_stride_head = a.out_stride_head;
  p.key = tensor(a.key_cache, a.cache.key, a.cache, a.cache.k_scale);
  p.value = tensor(a.value_cache, a.cache.value, a.cache, a.cache.v_scale);
  fill_batch_fields(p, a);
  p.io_dtype = a.dtype;
  p.kv_dtype = a.cache.dtype;
  p.scale_per_head = a.cache.scale_kind == PC_SCALE_PER_KV_HEAD ? 1 : 0;
  p.num_seqs = static_cast<int32_t>(b.num_seqs);
  p.num_heads = static_cast<int32_t>(a.num_heads);
  p.num_kv_heads = static_cast<int32_t>(a.cache.num_kv_heads);
  p.group = static_cast<int32_t>(a.num_heads / a.cache.num_kv_heads);
  p.block_size = static_cast<int32_t>(a.cache.block_size);
  p.block_shift = -1;
  for (int32_t shift = 0; shift < 31; ++shift) {
    if ((int64_t{1} << shift) == a.cache.block_size) p.block_shift = shift;
  }
  p.max_context_len = static_cast<int32_t>(b.max_context_len);
  p.max_query_len = static_cast<int32_t>(b.max_query_len > 1 ? b.max_query_len : 1);
  p.row_chunks = static_cast<int32_t>(plan.row_chunks);
  p.window = static_cast<int32_t>(plan.window);
  p.causal = a.features.causal != 0 ? 1 : 0;
  p.soft_cap = a.features.soft_cap;
  p.scale = a.scale;
  p.partition_size = plan.partition_size;
  p.max_partitions = static_cast<int32_t>(plan.partitions);
  p.grid_partitions = static_cast<int32_t>(plan.grid_partitions);
  if (layout.total > 0) {
    if (workspace == nullptr) return KernelStatus::invalid("v3_gqa needs a workspace (NULL given)");
    if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
      return KernelStatus::invalid("workspace is not 256-byte aligned");
    }
    char* base = static_cast<char*>(workspace);
    p.ws_max = reinterpret_cast<float*>(base);
    p.ws_sum = reinterpret_cast<float*>(base + layout.sum_offset);
    p.ws_out = reinterpret_cast<float*>(base + layout.out_offset);
  }
  if (int64_t{p.num_kv_heads} * p.row_chunks > (int64_t{1} << 31) - 1) {
    return KernelStatus::unsupported("num_kv_heads x row chunks exceeds the grid");
  }
  return dispatch_gqa(a.cache.head_size, plan, p, stream);
}

}  // namespace pagecheck::kernels
