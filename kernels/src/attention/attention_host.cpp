/// Argument checks, workspace layout and launch of the paged-attention variants.
#include "attention/attention_host.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attention/attention_params.h"
#include "attention/attention_rows.h"
#include "attention/attention_shapes.h"
#include "common/host_checks.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxGridZ = 65535;
constexpr int64_t kMaxContext = int64_t{1} << 30;

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

/// v2 partitions per row at kPartitionSize (the most the launcher uses), >= 1.
int64_t num_partitions(const pc_paged_attention_args& a) {
  return std::max<int64_t>(1, (span_bound(a) + kPartitionSize - 1) / kPartitionSize);
}

/// Byte offsets of the v2 workspace sections, each 256-byte aligned: one entry per (query row,
/// head, partition).
struct V2Workspace {
  int64_t max_offset = 0, sum_offset = 0, out_offset = 0, total = 0;
  explicit V2Workspace(const pc_paged_attention_args& a) {
    const int64_t rows = a.batch.num_query_tokens * a.num_heads * num_partitions(a);
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

/// The ragged batch (q_len <= kMaxQueryLen through query_start) and the features.
KernelStatus check_batch(const pc_paged_attention_args& a) {
  const pc_ragged_batch& b = a.batch;
  KernelStatus st = first_failure(
      require_min(b.num_seqs, 0, "batch.num_seqs"), require_min(a.num_heads, 1, "num_heads"),
      require_min(b.num_query_tokens, 0, "batch.num_query_tokens"),
      require_min(b.max_blocks_per_seq, 1, "batch.max_blocks_per_seq"),
      require_min(b.block_table_stride, b.max_blocks_per_seq, "batch.block_table_stride"),
      require_min(b.max_context_len, 0, "batch.max_context_len"));
  if (!st.ok()) return st;
  if (b.max_query_len > kMaxQueryLen) {
    return KernelStatus::unsupported("batch.max_query_len (" + str(b.max_query_len) + ") exceeds " +
                                     str(kMaxQueryLen));
  }
  if (b.query_start == nullptr && b.num_query_tokens != b.num_seqs) {
    return KernelStatus::invalid("batch.num_query_tokens (" + str(b.num_query_tokens) +
                                 ") differs from batch.num_seqs (" + str(b.num_seqs) +
                                 ") without query_start");
  }
  const pc_attention_features& f = a.features;
  if (f.window < 0) return KernelStatus::invalid("features.window (" + str(f.window) + ") < 0");
  if (!(f.soft_cap >= 0.f) || !std::isfinite(f.soft_cap)) {
    return KernelStatus::invalid("features.soft_cap must be finite and >= 0");
  }
  return KernelStatus::success();
}

KernelStatus check_shapes(AttentionVariant variant, const pc_paged_attention_args& a) {
  KernelStatus st = first_failure(require_struct_size(a.cache.struct_size, "args.cache"),
                                  require_struct_size(a.batch.struct_size, "args.batch"),
                                  require_struct_size(a.features.struct_size, "args.features"));
  if (!st.ok()) return st;
  st = check_cache_shape(a.cache, a.dtype);
  if (!st.ok()) return st;
  st = check_sizes(variant, a.cache);
  if (!st.ok()) return st;
  st = check_batch(a);
  if (!st.ok()) return st;
  const pc_ragged_batch& b = a.batch;
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
  if (!std::isfinite(a.scale)) return KernelStatus::invalid("scale is not finite");
  if (b.num_seqs > kMaxGridY) {
    return KernelStatus::unsupported("batch.num_seqs (" + str(b.num_seqs) +
                                     ") exceeds 65535 (grid y)");
  }
  if (a.num_heads * query_bound(a) > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("num_heads x batch.max_query_len (" +
                                     str(a.num_heads * query_bound(a)) +
                                     ") exceeds 2^31 - 1 (grid x)");
  }
  if (b.max_context_len > kMaxContext) {
    return KernelStatus::unsupported("batch.max_context_len (" + str(b.max_context_len) +
                                     ") exceeds 2^30 tokens");
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
  const int64_t parts = num_partitions(a);
  if (parts > kMaxGridZ) {
    return KernelStatus::unsupported("batch.max_context_len (" + str(max_context) + ") needs " +
                                     str(parts) + " partitions, more than the reduction handles");
  }
  return require_shared_memory(device, attention_reduce_dynamic_smem(parts) + 64,
                               "batch.max_context_len (" + str(max_context) + ")");
}

/// The checks on arguments already read with abi::read.
KernelStatus check_read_args(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args& a) {
  KernelStatus st = check_shapes(variant, a);
  if (!st.ok()) return st;
  st = check_pointers_and_strides(a);
  if (!st.ok()) return st;
  return check_shared_memory(variant, device, a);
}

}  // namespace

KernelStatus check_attention(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args* args) {
  if (args == nullptr) return KernelStatus::invalid("args is NULL");
  KernelStatus st = require_struct_size(args->struct_size, "args");
  if (!st.ok()) return st;
  return check_read_args(variant, device, abi::read(*args));
}

std::size_t attention_workspace_bytes(AttentionVariant variant,
                                      const pc_paged_attention_args* args) {
  if (variant != AttentionVariant::kV2Split || args == nullptr || args->struct_size == 0) return 0;
  const pc_paged_attention_args a = abi::read(*args);
  if (a.batch.num_seqs <= 0 || a.batch.num_query_tokens <= 0 || a.num_heads <= 0 ||
      a.batch.max_context_len < 0 || a.cache.head_size <= 0) {
    return 0;
  }
  return static_cast<std::size_t>(V2Workspace(a).total);
}

KernelStatus launch_attention(AttentionVariant variant, const pc_device_info* device,
                              const pc_paged_attention_args* args, void* workspace,
                              cudaStream_t stream) {
  if (args == nullptr) return KernelStatus::invalid("args is NULL");
  KernelStatus st = require_struct_size(args->struct_size, "args");
  if (!st.ok()) return st;
  const pc_paged_attention_args a = abi::read(*args);
  st = check_read_args(variant, device, a);
  if (!st.ok()) return st;
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
  p.block_table = b.block_table;
  p.block_table_stride = b.block_table_stride;
  p.context_lens = b.context_lens;
  p.query_start = b.query_start;
  p.alibi_slopes = a.features.alibi_slopes;
  p.sinks = a.features.sinks;
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
    p.partition_size = kPartitionSize;  // the launcher may choose larger partitions
    p.max_num_partitions = static_cast<int32_t>(num_partitions(a));
    p.partition_max = reinterpret_cast<float*>(base + layout.max_offset);
    p.partition_sum = reinterpret_cast<float*>(base + layout.sum_offset);
    p.partition_out = reinterpret_cast<float*>(base + layout.out_offset);
  }
  return dispatch_attention(variant, a.dtype, a.cache.head_size, tile, p, stream);
}

}  // namespace pagecheck::kernels
