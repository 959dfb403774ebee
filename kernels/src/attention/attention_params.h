#pragma once
/// Kernel-side parameters of the paged-attention kernels, built on the host from
/// pc_paged_attention_args and passed to every kernel by value (__grid_constant__).
/// All strides are in elements and 64-bit; token counts fit in 32 bits (checked on the host).
#include <cstdint>

namespace pagecheck::kernels {

/// Everything one paged-attention launch reads or writes.
struct AttentionParams {
  const void* query;            ///< [num_seqs, num_heads, head_size], storage dtype
  int64_t query_stride_seq;     ///< elements between sequences
  int64_t query_stride_head;    ///< elements between heads
  const void* key_cache;        ///< [blocks, kv_heads, head_size / x, block_size, x]
  int64_t key_stride_block;     ///< elements between blocks
  int64_t key_stride_head;      ///< elements between kv heads
  int64_t key_stride_group;     ///< elements between x-groups
  int64_t key_stride_slot;      ///< elements between slots
  const void* value_cache;      ///< [blocks, kv_heads, head_size, block_size]
  int64_t value_stride_block;   ///< elements between blocks
  int64_t value_stride_head;    ///< elements between kv heads
  int64_t value_stride_dim;     ///< elements between dims
  const int32_t* block_table;   ///< [num_seqs, block_table_stride]
  int64_t block_table_stride;   ///< elements between block-table rows
  const int32_t* context_lens;  ///< [num_seqs]
  const float* alibi_slopes;    ///< [num_heads] or nullptr
  void* out;                    ///< [num_seqs, num_heads, head_size], storage dtype
  int64_t out_stride_seq;       ///< elements between sequences
  int64_t out_stride_head;      ///< elements between heads
  int32_t num_seqs;             ///< batch size (grid y)
  int32_t num_heads;            ///< query heads (grid x)
  int32_t queries_per_kv;       ///< num_heads / num_kv_heads
  int32_t max_context_len;      ///< host-side bound on every context_lens entry
  float scale;                  ///< logit scale
  // v2_split only: the workspace, [num_seqs, num_heads, max_num_partitions] (x head_size).
  int32_t max_num_partitions;  ///< ceil(max_context_len / partition size)
  float* partition_max;        ///< per-partition max logit
  float* partition_sum;        ///< per-partition sum of exp(logit - partition max)
  float* partition_out;        ///< per-partition output, normalized by partition_sum
};

/// Tokens per v2_split partition (a multiple of every block size).
inline constexpr int kPartitionSize = 256;

}  // namespace pagecheck::kernels
