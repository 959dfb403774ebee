/// Argument checks, workspace layout and launch of the paged-attention variants.
#include "attention/attention_host.h"

#include <cmath>
#include <limits>
#include <string>

#include "attention/attention_params.h"
#include "common/host_checks.h"
#include "pagecheck/plugin_read.h"

namespace pagecheck::kernels {
namespace {

constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxGridZ = 65535;
constexpr int64_t kMaxContext = int64_t{1} << 30;

/// v1 main kernel: logits for the whole context plus the static shared memory.
int64_t v1_smem_bytes(const pc_paged_attention_args& a) {
  return ((a.batch.max_context_len + 3) / 4) * 4 * 4 + 4 * a.cache.head_size * 4 +
         a.cache.head_size * 4 + 64;
}

int64_t num_partitions(const pc_paged_attention_args& a) {
  return (a.batch.max_context_len + kPartitionSize - 1) / kPartitionSize;
}

/// Byte offsets of the v2 workspace sections, each 256-byte aligned.
struct V2Workspace {
  int64_t max_offset = 0, sum_offset = 0, out_offset = 0, total = 0;
  explicit V2Workspace(const pc_paged_attention_args& a) {
    const int64_t rows = a.batch.num_seqs * a.num_heads * num_partitions(a);
    auto align = [](int64_t b) { return (b + 255) / 256 * 256; };
    sum_offset = align(rows * 4);
    out_offset = sum_offset + align(rows * 4);
    total = out_offset + align(rows * a.cache.head_size * 4);
  }
};

KernelStatus check_shapes(const pc_paged_attention_args& a) {
  KernelStatus st = first_failure(require_struct_size(a.cache.struct_size, "args.cache"),
                                  require_struct_size(a.batch.struct_size, "args.batch"),
                                  require_struct_size(a.features.struct_size, "args.features"));
  if (!st.ok()) return st;
  st = check_cache_shape(a.cache, a.dtype);
  if (!st.ok()) return st;
  st = check_decode_batch(a.batch, a.features);
  if (!st.ok()) return st;
  const pc_ragged_batch& b = a.batch;
  st = first_failure(
      require_min(b.num_seqs, 0, "batch.num_seqs"), require_min(a.num_heads, 1, "num_heads"),
      require_min(b.max_blocks_per_seq, 1, "batch.max_blocks_per_seq"),
      require_min(b.block_table_stride, b.max_blocks_per_seq, "batch.block_table_stride"),
      require_min(b.max_context_len, 1, "batch.max_context_len"));
  if (!st.ok()) return st;
  if (a.num_heads % a.cache.num_kv_heads != 0) {
    return KernelStatus::invalid("num_heads (" + std::to_string(a.num_heads) +
                                 ") is not a multiple of cache.num_kv_heads (" +
                                 std::to_string(a.cache.num_kv_heads) + ")");
  }
  const int64_t capacity = b.max_blocks_per_seq * a.cache.block_size;
  if (b.max_context_len > capacity) {
    return KernelStatus::invalid("batch.max_context_len (" + std::to_string(b.max_context_len) +
                                 ") exceeds max_blocks_per_seq * block_size (" +
                                 std::to_string(capacity) + ")");
  }
  if (!std::isfinite(a.scale)) return KernelStatus::invalid("scale is not finite");
  if (b.num_seqs > kMaxGridY) {
    return KernelStatus::unsupported("batch.num_seqs (" + std::to_string(b.num_seqs) +
                                     ") exceeds 65535 (grid y)");
  }
  if (a.num_heads > std::numeric_limits<int32_t>::max()) {
    return KernelStatus::unsupported("num_heads (" + std::to_string(a.num_heads) +
                                     ") exceeds 2^31 - 1 (grid x)");
  }
  if (b.max_context_len > kMaxContext) {
    return KernelStatus::unsupported("batch.max_context_len (" + std::to_string(b.max_context_len) +
                                     ") exceeds 2^30 tokens");
  }
  return KernelStatus::success();
}

KernelStatus check_pointers_and_strides(const pc_paged_attention_args& a) {
  const int64_t x = a.cache.key.dim_split;  // 16 / element size (check_cache_shape)
  const int64_t elem = abi::dtype_bytes(a.dtype);
  const pc_cache_strides& k = a.cache.key;
  const pc_cache_strides& v = a.cache.value;
  KernelStatus st = first_failure(
      require_pointer(a.query, "query"), require_pointer(a.key_cache, "key_cache"),
      require_pointer(a.value_cache, "value_cache"),
      require_pointer(a.batch.block_table, "batch.block_table"),
      require_pointer(a.batch.context_lens, "batch.context_lens"), require_pointer(a.out, "out"),
      require_min(a.query_stride_head, 1, "query_stride_head"),
      require_min(a.query_stride_token, 1, "query_stride_token"),
      require_min(a.out_stride_head, 1, "out_stride_head"),
      require_min(a.out_stride_token, 1, "out_stride_token"));
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
  int64_t limit = 0;
  KernelStatus st = max_shared_memory_per_block(device, &limit);
  if (!st.ok()) return st;
  const int64_t max_context = a.batch.max_context_len;
  if (variant != AttentionVariant::kV2Split) {
    const int64_t need = v1_smem_bytes(a);
    if (need > limit) {
      return KernelStatus::unsupported("batch.max_context_len (" + std::to_string(max_context) +
                                       ") needs " + std::to_string(need) +
                                       " bytes of shared memory per block, the device allows " +
                                       std::to_string(limit) + " (use v2_split)");
    }
    return KernelStatus::success();
  }
  const int64_t parts = num_partitions(a);
  const int64_t reduce_need = parts * 2 * 4 + 64;
  if (parts > kMaxGridZ || reduce_need > limit) {
    return KernelStatus::unsupported("batch.max_context_len (" + std::to_string(max_context) +
                                     ") needs " + std::to_string(parts) +
                                     " partitions, more than the reduction handles");
  }
  return KernelStatus::success();
}

/// The checks on arguments already read with abi::read.
KernelStatus check_read_args(AttentionVariant variant, const pc_device_info* device,
                             const pc_paged_attention_args& a) {
  KernelStatus st = check_shapes(a);
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
  if (a.batch.num_seqs <= 0 || a.num_heads <= 0 || a.batch.max_context_len <= 0 ||
      a.cache.head_size <= 0) {
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

  AttentionParams p{};
  p.query = a.query;
  p.query_stride_seq = a.query_stride_token;  // one query row per sequence
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
  p.alibi_slopes = a.features.alibi_slopes;
  p.out = a.out;
  p.out_stride_seq = a.out_stride_token;
  p.out_stride_head = a.out_stride_head;
  p.num_seqs = static_cast<int32_t>(b.num_seqs);
  p.num_heads = static_cast<int32_t>(a.num_heads);
  p.queries_per_kv = static_cast<int32_t>(a.num_heads / a.cache.num_kv_heads);
  p.max_context_len = static_cast<int32_t>(b.max_context_len);
  p.scale = a.scale;
  if (variant == AttentionVariant::kV2Split) {
    if (workspace == nullptr)
      return KernelStatus::invalid("v2_split needs a workspace (NULL given)");
    if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
      return KernelStatus::invalid("workspace is not 256-byte aligned");
    }
    const V2Workspace layout(a);
    char* base = static_cast<char*>(workspace);
    p.partition_size = kPartitionSize;  // the launcher may choose larger partitions
    p.max_num_partitions = static_cast<int32_t>(num_partitions(a));
    p.partition_max = reinterpret_cast<float*>(base + layout.max_offset);
    p.partition_sum = reinterpret_cast<float*>(base + layout.sum_offset);
    p.partition_out = reinterpret_cast<float*>(base + layout.out_offset);
  }
  return dispatch_attention(variant, a.dtype, a.cache.head_size, a.cache.block_size, p, stream);
}

}  // namespace pagecheck::kernels
