/// Argument checks, workspace layout and launch of the paged-attention variants.
#include "attention/attention_host.h"

#include <algorithm>
#include <limits>
#include <string>

#include "attention/attention_params.h"
#include "attention/attention_rows.h"
#include "attention/attention_shapes.h"
#include "common/attention_batch_fields.h"
#include "common/host_checks.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

constexpr int64_t kMaxGridZ = 65535;

std::string str(int64_t v) {
  return std::to_string(v);
}

int64_t query_bound(const pc_paged_attention_args& a) {
  return a.batch.max_query_len > 1 ? a.batch.max_query_len : 1;
}

/// The window the kernels see: 0 when it covers every context (then it masks nothing).
int64_t effective_window(const pc_paged_attention_args& a) {
  const int64_t w = a.features.window;
  return w > 0 && w < a.batch.max_context_len ? w : 0;
}

/// Bound on every row's hi - base (attention_rows.h): the v1 logits and the v2 partitions.
int64_t span_bound(const pc_paged_attention_args& a) {
  return attention_span_bound(a.batch.max_context_len, effective_window(a), query_bound(a));
}

/// v1 main kernel: logits for a row's whole range plus the static shared memory.
int64_t v1_smem_bytes(const pc_paged_attention_args& a) {
  return attention_v1_dynamic_smem(span_bound(a)) + attention_static_smem_bound(a.cache.head_size);
}

/// v2 partitions per row the workspace holds (workspace_partitions): the most the launcher uses.
int64_t capacity_partitions(const pc_paged_attention_args& a) {
  return workspace_partitions(a.batch.num_query_tokens * a.num_heads, span_bound(a));
}

/// Byte offsets of the v2 workspace sections, each 256-byte aligned: one entry per (query row,
/// head, partition).
struct V2Workspace {
  int64_t max_offset = 0, sum_offset = 0, out_offset = 0, total = 0;
  explicit V2Workspace(const pc_paged_attention_args& a) {
    const int64_t rows = a.batch.num_query_tokens * a.num_heads * capacity_partitions(a);
    auto align = [](int64_t b) { return (b + 255) / 256 * 256; };
    sum_offset = align(rows * 4);
    out_offset = sum_offset + align(rows * 4);
    total = out_offset + align(rows * a.cache.head_size * 4);
  }
};

/// Head and block sizes the variant takes (attention_shapes.h).
KernelStatus check_sizes(AttentionVariant variant, const pc_kv_cache& c) {
  const bool wide = variant != AttentionVariant::kV2Split && c.head_size == kV1WideHeadSize;
  if (!wide && !compiled_head_size(c.head_size)) {
    return KernelStatus::unsupported("unsupported head_size: " + str(c.head_size));
  }
  if (attention_tile(c.head_size, c.block_size) == 0) {
    return KernelStatus::unsupported("unsupported block_size: " + str(c.block_size));
  }
  return KernelStatus::success();
}

/// The cache and the sizes the variant takes, then the batch and features.
KernelStatus check_shapes(AttentionVariant variant, const pc_paged_attention_args& a) {
  KernelStatus st = check_attention_structs(a);
  if (!st.ok()) return st;
  st = check_cache_shape(a.cache, a.dtype);
  if (!st.ok()) return st;
  st = check_sizes(variant, a.cache);
  if (!st.ok()) return st;
  st = check_attention_batch(a, kMaxQueryLen);
  if (!st.ok()) return st;
  if (a.num_heads * query_bound(a) > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("num_heads x batch.max_query_len (" +
                                     str(a.num_heads * query_bound(a)) +
                                     ") exceeds 2^31 - 1 (grid x)");
  }
  return KernelStatus::success();
}

KernelStatus check_pointers_and_strides(const pc_paged_attention_args& a) {
  const int64_t x = a.cache.key.dim_split;  // 16 / element size (check_cache_shape)
  const int64_t elem = abi::dtype_bytes(a.dtype);
  const pc_cache_strides& k = a.cache.key;
  const pc_cache_strides& v = a.cache.value;
  KernelStatus st = check_attention_pointers(a);
  if (!st.ok()) return st;
  if (reinterpret_cast<uintptr_t>(a.out) % static_cast<uintptr_t>(elem) != 0) {
    return KernelStatus::invalid("out is not aligned to its element size");
  }
  return first_failure(require_aligned16(a.query, "query", "16-byte query loads"),
                       require_vector_stride(a.query_stride_token, x, "query_stride_token"),
                       require_vector_stride(a.query_stride_head, x, "query_stride_head"),
                       require_aligned16(a.key_cache, "key_cache", "16-byte key loads"),
                       require_vector_stride(k.block, x, "cache.key.block"),
                       require_vector_stride(k.head, x, "cache.key.head"),
                       require_vector_stride(k.group, x, "cache.key.group"),
                       require_vector_stride(k.slot, x, "cache.key.slot"),
                       require_aligned16(a.value_cache, "value_cache", "16-byte value loads"),
                       require_vector_stride(v.block, x, "cache.value.block"),
                       require_vector_stride(v.head, x, "cache.value.head"),
                       require_vector_stride(v.dim, x, "cache.value.dim"));
}

KernelStatus check_shared_memory(AttentionVariant variant, const pc_device_info* device,
                                 const pc_paged_attention_args& a) {
  const int64_t max_context = a.batch.max_context_len;
  if (variant != AttentionVariant::kV2Split) {
    return require_shared_memory(device, v1_smem_bytes(a),
                                 "batch.max_context_len (" + str(max_context) + ")",
                                 " (use v2_split)");
  }
  const int64_t parts = capacity_partitions(a);  // the most the launcher may use
  if (parts > kMaxGridZ) {
    return KernelStatus::unsupported("batch.max_context_len (" + str(max_context) + ") needs " +
                                     str(parts) + " partitions, more than the reduction handles");
  }
  return require_shared_memory(device, attention_reduce_dynamic_smem(parts) + 64,
                               "batch.max_context_len (" + str(max_context) + ")");
}

}  // namespace

KernelStatus check_read_args(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args& a) {
  KernelStatus st = check_shapes(variant, a);
  if (!st.ok()) return st;
  st = check_pointers_and_strides(a);
  if (!st.ok()) return st;
  return check_shared_memory(variant, device, a);
}

KernelStatus check_attention(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args* args) {
  pc_paged_attention_args a{};
  KernelStatus st = read_attention_args(args, a);
  return st.ok() ? check_read_args(variant, device, a) : st;
}

std::size_t attention_workspace_bytes(AttentionVariant variant,
                                      const pc_paged_attention_args* args) {
  if (variant != AttentionVariant::kV2Split || args == nullptr || args->struct_size == 0) return 0;
  const pc_paged_attention_args a = abi::read(*args);
  if (a.num_heads <= 0 || a.batch.max_context_len < 0 || a.cache.head_size <= 0) return 0;
  return checked_attention_workspace(variant, a);
}

std::size_t checked_attention_workspace(AttentionVariant variant,
                                        const pc_paged_attention_args& a) {
  if (variant != AttentionVariant::kV2Split || a.batch.num_seqs <= 0 ||
      a.batch.num_query_tokens <= 0) {
    return 0;  // v1 needs none; an empty batch launches nothing
  }
  return static_cast<std::size_t>(V2Workspace(a).total);
}

KernelStatus launch_attention(AttentionVariant variant, const pc_device_info* device,
                              const pc_paged_attention_args* args, void* workspace,
                              cudaStream_t stream) {
  pc_paged_attention_args a{};
  KernelStatus st = read_attention_args(args, a);
  if (st.ok()) st = check_read_args(variant, device, a);
  return st.ok() ? launch_checked_attention(variant, a, workspace, stream) : st;
}

KernelStatus launch_checked_attention(AttentionVariant variant, const pc_paged_attention_args& a,
                                      void* workspace, cudaStream_t stream) {
  const pc_ragged_batch& b = a.batch;
  if (b.num_seqs == 0) return KernelStatus::success();

  const int tile = attention_tile(a.cache.head_size, a.cache.block_size);
  AttentionParams p{};
  p.query = a.query;
  p.query_stride_token = a.query_stride_token;
  p.query_stride_head = a.query_stride_head;
  p.key_cache = a.key_cache;
  p.key_stride_block = a.cache.key.block;
  p.key_stride_head = a.cache.key.head;
  p.key_stride_group = a.cache.key.group;
  p.key_stride_slot = a.cache.key.slot;
  p.value_cache = a.value_cache;
  p.value_stride_block = a.cache.value.block;
  p.value_stride_head = a.cache.value.head;
  p.value_stride_dim = a.cache.value.dim;
  fill_batch_fields(p, a);
  p.out = a.out;
  p.out_stride_token = a.out_stride_token;
  p.out_stride_head = a.out_stride_head;
  p.num_seqs = static_cast<int32_t>(b.num_seqs);
  p.num_heads = static_cast<int32_t>(a.num_heads);
  p.queries_per_kv = static_cast<int32_t>(a.num_heads / a.cache.num_kv_heads);
  p.max_context_len = static_cast<int32_t>(b.max_context_len);
  p.max_query_len = static_cast<int32_t>(query_bound(a));
  p.max_span = static_cast<int32_t>(span_bound(a));
  p.window = static_cast<int32_t>(effective_window(a));
  p.causal = a.features.causal != 0 ? 1 : 0;
  p.tile_shift = attention_tile_shift(a.cache.block_size, tile);
  p.tile_size = tile;
  p.soft_cap = a.features.soft_cap;
  p.scale = a.scale;
  if (variant == AttentionVariant::kV2Split) {
    const V2Workspace layout(a);
    if (layout.total > 0 && workspace == nullptr) {
      return KernelStatus::invalid("v2_split needs a workspace (NULL given)");
    }
    if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
      return KernelStatus::invalid("workspace is not 256-byte aligned");
    }
    char* base = static_cast<char*>(workspace);
    // The launcher chooses the size, within the partitions the workspace holds.
    p.partition_size = kPartitionSize;
    p.max_num_partitions = static_cast<int32_t>(capacity_partitions(a));
    p.partition_max = reinterpret_cast<float*>(base + layout.max_offset);
    p.partition_sum = reinterpret_cast<float*>(base + layout.sum_offset);
    p.partition_out = reinterpret_cast<float*>(base + layout.out_offset);
  }
  return dispatch_attention(variant, a.dtype, a.cache.head_size, tile, p, stream);
}

}  // namespace pagecheck::kernels
