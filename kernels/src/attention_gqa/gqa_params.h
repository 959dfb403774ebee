#pragma once
/// Kernel-side parameters of v3_gqa (one thread block per (sequence, KV head, row chunk,
/// partition) computing every query row of the KV head's group), built on the host from
/// pc_paged_attention_args and passed by value (__grid_constant__). Strides are in elements of
/// the tensor's own dtype and 64-bit; token counts and positions fit in 32 bits (host checks).
#include <array>
#include <cstdint>

#include "attention/attention_rows.h"

namespace pagecheck::kernels {

/// How the loader reads one cache tensor into a shared-memory tile (chosen on the host from
/// the strides and the pointer's alignment).
enum GqaLoadMode : int32_t {
  kGqaLoadDimVector = 0,   ///< 16-byte vectors along the dims (dim stride 1: x-split K, NHD, HND)
  kGqaLoadSlotVector = 1,  ///< 16-byte vectors along the slots (slot stride 1: x-split V)
  kGqaLoadScalar = 2,      ///< one element at a time (any strides)
};

/// One cache tensor (K or V) as the loader sees it.
struct GqaTensor {
  const char* base;    ///< the tensor's device pointer (bytes)
  int64_t block;       ///< elements between blocks
  int64_t head;        ///< elements between kv heads
  int64_t slot;        ///< elements between slots
  int64_t group;       ///< elements between dim groups (0 when dim_split == head_size)
  int64_t dim;         ///< elements between dims of a group
  int32_t dim_split;   ///< dims per group
  int32_t mode;        ///< GqaLoadMode
  const float* scale;  ///< fp8 scales (k_scale / v_scale) or nullptr (= 1)
};

/// Everything one v3_gqa launch reads or writes.
struct GqaParams {
  const void* query;            ///< [num_query_tokens, num_heads, head_size], io dtype
  int64_t query_stride_token;   ///< elements between query rows
  int64_t query_stride_head;    ///< elements between query heads
  void* out;                    ///< [num_query_tokens, num_heads, head_size], io dtype
  int64_t out_stride_token;     ///< elements between output rows
  int64_t out_stride_head;      ///< elements between output heads
  GqaTensor key;                ///< key tensor
  GqaTensor value;              ///< value tensor
  const int32_t* block_table;   ///< [num_seqs, block_table_stride]
  int64_t block_table_stride;   ///< elements between block-table rows
  const int32_t* context_lens;  ///< [num_seqs]
  const int32_t* query_start;   ///< [num_seqs + 1] or nullptr (one row per sequence)
  const float* alibi_slopes;    ///< [num_heads] or nullptr
  const float* sinks;           ///< [num_heads] or nullptr
  float* ws_max;                ///< [rows, num_heads, max_partitions] partition max logit
  float* ws_sum;                ///< [rows, num_heads, max_partitions] sum of exp(l - max)
  float* ws_out;                ///< [rows, num_heads, max_partitions, head_size] sum of exp * v
  int32_t io_dtype;             ///< pc_dtype of query and output
  int32_t kv_dtype;             ///< pc_dtype of the cache
  int32_t scale_per_head;       ///< non-zero: scale[kv_head], else scale[0]
  int32_t num_seqs;             ///< batch size (grid y)
  int32_t num_heads;            ///< query heads
  int32_t num_kv_heads;         ///< kv heads
  int32_t group;                ///< num_heads / num_kv_heads
  int32_t block_size;           ///< slots per block (runtime)
  int32_t block_shift;          ///< log2(block_size) when it is a power of two, else -1
  int32_t max_context_len;      ///< host-side bound on every context length
  int32_t max_query_len;        ///< host-side bound on every q_len
  int32_t row_chunks;           ///< blocks per (sequence, kv head) along the rows
  int32_t window;               ///< 0 = none, else W < max_context_len
  int32_t causal;               ///< non-zero: causal among the new tokens
  float soft_cap;               ///< 0 = none
  float scale;                  ///< logit scale
  int32_t partition_size;       ///< tokens per partition (one of kGqaPartitionSizes)
  int32_t max_partitions;       ///< ceil(max_context_len / partition_size), >= 1
  int32_t grid_partitions;      ///< grid z: max_partitions, or with a window the partitions one
                                ///< chunk's span (W + q_len - 1 keys) can touch
};

/// Split-K partition sizes v3_gqa may use (tokens, multiples of every tile size);
/// choose_gqa_partition_size picks one per launch. v3_gqa declares this list.
inline constexpr std::array<int32_t, 9> kGqaPartitionSizes = {64,   128,  256,  512,  1024,
                                                              2048, 4096, 8192, 16384};
/// Query rows of one row tile of the tensor-core kernel: the N = 8 of its mma.m16n8k16 (S^T = K
/// Q^T). A block takes one tile, or two where a (sequence, kv head) has more than 8 rows
/// (gqa_tc_rows_per_block).
inline constexpr int kGqaTensorCoreRows = 8;
/// Query rows per block of the tensor-core kernel for `rows` = group * max_query_len rows per
/// (sequence, kv head): 8, or 16 above 8 rows (two tiles sharing every K/V fragment, so that
/// 16 rows read the cache once, not twice).
inline constexpr int gqa_tc_rows_per_block(int64_t rows) {
  return rows <= kGqaTensorCoreRows ? kGqaTensorCoreRows : 2 * kGqaTensorCoreRows;
}
/// Largest q_len per sequence v3_gqa accepts.
inline constexpr int kGqaMaxQueryLen = 16;
/// Warps (one per row) per block of the merge kernel.
inline constexpr int kGqaMergeWarps = 4;
/// Largest grid z (partitions per sequence).
inline constexpr int64_t kGqaMaxGridZ = 65535;

/// Query rows per thread block for `rows` = group * max_query_len rows per (sequence, kv head):
/// 4 for up to 4 rows (MHA, small groups), else 8 (more rows take several row chunks).
inline constexpr int gqa_rows_per_block(int64_t rows) {
  return rows <= 4 ? 4 : 8;
}

/// Keys a block of the tensor-core kernel has in flight at once at the least: its pipeline's
/// stages (GqaTcTraits::kStages >= 2, asserted there) of 64 keys.
inline constexpr int64_t kGqaTcKeysInFlight = 128;
/// Blocks per SM the partition rule aims at on tensor cores, where the kernel keeps that many
/// resident: one block (4 warps) an SM leaves each scheduler a single warp, whose chain of
/// copies, mma and softmax then bounds the stage rate below the memory's (docs/performance.md,
/// sixteenth and seventeenth sessions).
inline constexpr int kGqaTcTargetBlocksPerSm = 2;
/// The shortest partition (keys) for which the rule aims at more than one block an SM. Aiming
/// at two halves the partitions; below this length a block's prologue, its workspace row and
/// the merge over twice the partitions cost more than the second block gains (H100, side by
/// side: batch 1 at contexts 2048 and 4096, partitions of 64 and 128 keys, ran 2-12% slower;
/// batch 8 at 1024-4096, partitions of 256-1024 keys, 3-4% faster).
inline constexpr int32_t kGqaMinKeysForMoreBlocks = 256;

namespace detail {
/// The largest listed size whose grid gives at least `target` blocks (rows x partitions of
/// the work), else the smallest size the grid bound allows; the largest allowed when `whole`.
inline constexpr int32_t gqa_partition_size_for(int64_t row_blocks, int64_t work_len,
                                                int64_t max_context_len, int64_t target,
                                                bool whole) {
  int32_t chosen = 0;
  for (int32_t size : kGqaPartitionSizes) {
    if (partitions_over(max_context_len, size) > kGqaMaxGridZ) continue;
    if (chosen == 0 || whole) chosen = size;  // the smallest allowed size, or the largest
    const int64_t work_parts = partitions_over(work_len, size);
    if (row_blocks * (work_parts > 0 ? work_parts : 1) >= target) chosen = size;
  }
  return chosen;
}
}  // namespace detail

/// Partition size for `row_blocks` thread blocks per partition index (sequences x kv heads x
/// row chunks) over `work_len` tokens (the longest context, or the window plus the query
/// tokens) with a grid z bound of ceil(max_context_len / size) <= kGqaMaxGridZ: the largest
/// listed size whose grid still gives `blocks_per_sm` blocks (>= 1: as many as the kernel keeps
/// resident on an SM, at most) to at least 7/8 of the `sm_count` SMs, else the smallest size
/// the grid bound allows. Fewer, longer partitions win as long as nearly every SM has its
/// blocks: a partition block's prologue (its first stage's latency), its workspace row and the
/// merge cost as much as several stages (H200 measurements, docs/performance.md). So more than
/// one block an SM is aimed at only where that size keeps kGqaMinKeysForMoreBlocks keys;
/// otherwise the size is the one-block size.
/// A span of at most `in_flight_keys` keys (> 0: the keys a block loads at once) is not split
/// at all: the largest size is taken, so that a block reads the whole span and writes its
/// rows without the merge. Split, its keys would be loaded side by side all the same, and the
/// merge kernel and the workspace round trip would come on top (docs/performance.md).
/// Returns 0 when even the largest size needs more than kGqaMaxGridZ partitions.
inline constexpr int32_t choose_gqa_partition_size(int64_t row_blocks, int64_t work_len,
                                                   int64_t max_context_len, int64_t sm_count,
                                                   int64_t in_flight_keys = 0,
                                                   int64_t blocks_per_sm = 1) {
  const int64_t sms = sm_count > 0 ? sm_count : 132;
  const int64_t one_block = sms - sms / 8;
  const bool whole = in_flight_keys > 0 && work_len <= in_flight_keys;
  const int32_t one =
      detail::gqa_partition_size_for(row_blocks, work_len, max_context_len, one_block, whole);
  if (blocks_per_sm <= 1) return one;
  const int32_t more = detail::gqa_partition_size_for(row_blocks, work_len, max_context_len,
                                                      one_block * blocks_per_sm, whole);
  return more >= kGqaMinKeysForMoreBlocks ? more : one;
}

}  // namespace pagecheck::kernels
