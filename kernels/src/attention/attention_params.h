#pragma once
/// Kernel-side parameters of the paged-attention kernels, built on the host from
/// pc_paged_attention_args and passed to every kernel by value (__grid_constant__).
/// All strides are in elements and 64-bit; token counts fit in 32 bits (checked on the host).
#include <array>
#include <cstdint>

#include "attention/attention_rows.h"

namespace pagecheck::kernels {

/// Everything one paged-attention launch reads or writes. The kernels walk the cache in tiles of
/// BLOCK_SIZE slots (their compiled block size); a cache block holds 2^tile_shift tiles.
struct AttentionParams {
  const void* query;            ///< [num_query_tokens, num_heads, head_size], storage dtype
  int64_t query_stride_token;   ///< elements between query rows
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
  const int32_t* query_start;   ///< [num_seqs + 1] cumulative query rows, or nullptr (one each)
  const float* alibi_slopes;    ///< [num_heads] or nullptr
  const float* sinks;           ///< [num_heads] or nullptr: a logit in the denominator only
  void* out;                    ///< [num_query_tokens, num_heads, head_size], storage dtype
  int64_t out_stride_token;     ///< elements between output rows
  int64_t out_stride_head;      ///< elements between heads
  int32_t num_seqs;             ///< batch size (grid y)
  int32_t num_heads;            ///< query heads (grid x = num_heads * max_query_len)
  int32_t queries_per_kv;       ///< num_heads / num_kv_heads
  int32_t max_context_len;      ///< host-side bound on every context_lens entry
  int32_t max_query_len;        ///< host-side bound on every q_len, >= 1
  int32_t max_span;             ///< attention_span_bound: bound on a row's hi - base
  int32_t window;               ///< 0 = none, else W < max_context_len
  int32_t causal;               ///< non-zero: causal among the new tokens
  int32_t tile_shift;           ///< log2(block_size / BLOCK_SIZE)
  int32_t tile_size;            ///< BLOCK_SIZE of the instantiation (set by the launcher)
  float soft_cap;               ///< 0 = none, else cap * tanh(x / cap)
  float scale;                  ///< logit scale
  // v2_split only: the workspace, [num_query_tokens, num_heads, max_num_partitions] (x head_size).
  int32_t partition_size;  ///< tokens per partition (choose_partition_size)
  /// partitions_over(max_span, partition_size), >= 1 (grid z); from the host: the partitions per
  /// row the workspace holds (workspace_partitions), a bound on the launcher's choice. When it
  /// is 1, one partition covers every row's range: the partition kernel writes the output
  /// itself (the sink folded into its normalization, as v1 does), no reduction runs and the
  /// workspace is not touched.
  int32_t max_num_partitions;
  float* partition_max;  ///< per-partition max logit
  float* partition_sum;  ///< per-partition sum of exp(logit - partition max)
  float* partition_out;  ///< per-partition output, normalized by partition_sum
};

/// Tokens per v2_split partition (a multiple of every tile): the default.
inline constexpr int kPartitionSize = 256;
/// Largest partition choose_partition_size picks (its logits live in shared memory).
inline constexpr int kMaxPartitionSize = 1024;
/// Partition sizes choose_partition_size picks are multiples of this (and so of every block
/// size, and of the 4 warps x 2 blocks a thread block's warps take per step at block size 16).
inline constexpr int kPartitionGranule = 128;
/// Smallest partition choose_partition_size picks: its first case halves kPartitionSize where
/// the grid of halves still fits one wave.
inline constexpr int kSmallPartitionSize = kPartitionGranule;
/// The host sizes the workspace for kSmallPartitionSize-token partitions when their grid has at
/// most this many blocks (more than any device holds at once: 16 blocks of 128 threads per SM
/// on 256 SMs), else for kPartitionSize; the launcher never picks a size whose partitions
/// exceed what the workspace holds (AttentionParams::max_num_partitions on entry).
inline constexpr int64_t kSmallPartitionGridLimit = 4096;

/// Largest size choose_partition_size's third case reaches. With k = slots / rows >= 2
/// partitions per row in one wave and at most two waves of kPartitionSize partitions,
/// ceil(ctx / kPartitionSize) <= 2 * slots / rows < 2 (k + 1), so ctx <= kPartitionSize (2k + 1)
/// and ctx / k <= 2 kPartitionSize + kPartitionSize / k: at k = 2, 2.5 kPartitionSize. With one
/// partition per row (k = 1, rows > slots / 2), ceil(ctx / kPartitionSize) <= 2 * slots / rows
/// < 4, so ctx <= 3 kPartitionSize. Rounded up to the granule (768 tokens), and never more than
/// kMaxPartitionSize.
inline constexpr int kLargestChosenPartitionSize = [] {
  const int reach = 3 * kPartitionSize;
  const int rounded = (reach + kPartitionGranule - 1) / kPartitionGranule * kPartitionGranule;
  return rounded < kMaxPartitionSize ? rounded : kMaxPartitionSize;
}();
/// Every size choose_partition_size can return: kSmallPartitionSize, kPartitionSize and each
/// multiple of kPartitionGranule above it up to kLargestChosenPartitionSize (2 * kPartitionSize
/// among them; the third case never goes below kPartitionSize + kPartitionGranule, as it runs
/// only when a row needs more than slots / rows partitions of kPartitionSize). v2_split declares
/// this list (pc_variant::partition_sizes); partition_size_test checks that it is exactly the
/// function's range.
inline constexpr int kNumPartitionSizes =
    (kLargestChosenPartitionSize - kPartitionSize) / kPartitionGranule + 2;
inline constexpr std::array<int32_t, kNumPartitionSizes> kPartitionSizes = [] {
  std::array<int32_t, kNumPartitionSizes> sizes{};
  sizes[0] = kSmallPartitionSize;
  for (int i = 1; i < kNumPartitionSizes; ++i) {
    sizes[i] = kPartitionSize + (i - 1) * kPartitionGranule;
  }
  return sizes;
}();
static_assert(kPartitionSize % kPartitionGranule == 0, "partition sizes are granule multiples");
static_assert(kSmallPartitionSize < kPartitionSize && 2 * kSmallPartitionSize == kPartitionSize,
              "the small size halves the default");
static_assert(2 * kPartitionSize <= kLargestChosenPartitionSize, "2 * kPartitionSize is listed");

/// Tokens per v2_split partition for `rows` (sequence, head) pairs of contexts up to
/// `max_context_len`, when `slots` thread blocks of the partition kernel fit on the device at
/// once (measured on the H200 and the H100, docs/performance.md), before the workspace's bound
/// (choose_partition_size applies it):
///  - when the grid of kPartitionSize partitions fits into one wave: kSmallPartitionSize where
///    a row needs more than one partition and the grid of halves still fits the wave (twice
///    the blocks, each half the chain of dependent loads), else kPartitionSize (a row within
///    one partition keeps the single-kernel path);
///  - 2 * kPartitionSize when that still leaves at least two full waves: many waves either way,
///    and fewer, longer blocks spend less on their prologue and on the reduction;
///  - for a grid of at most two waves, the smallest multiple of kPartitionGranule (at most
///    kMaxPartitionSize, at least two partitions per row) whose grid fits into a single wave
///    that fills at least half of the slots: a second, mostly empty wave costs a whole block's
///    chain of dependent loads; where the rows alone fill more than half a wave (but fit one),
///    one partition per row, the context rounded up to the granule (the partition kernel then
///    writes the output, no reduction);
///  - else kPartitionSize.
inline constexpr int preferred_partition_size(int64_t rows, int64_t max_context_len,
                                              int64_t slots) {
  const auto blocks = [&](int64_t size) { return rows * partitions_over(max_context_len, size); };
  const auto granules = [&](int64_t tokens) {
    return partitions_over(tokens, kPartitionGranule) * kPartitionGranule;
  };
  if (rows <= 0 || slots <= 0) return kPartitionSize;
  if (blocks(kPartitionSize) <= slots) {
    const bool split = max_context_len > kPartitionSize && blocks(kSmallPartitionSize) <= slots;
    return split ? kSmallPartitionSize : kPartitionSize;
  }
  if (blocks(2 * kPartitionSize) >= 2 * slots) return 2 * kPartitionSize;
  if (blocks(kPartitionSize) > 2 * slots) return kPartitionSize;
  const int64_t per_row = slots / rows;  // partitions per (sequence, head) in one wave
  if (per_row < 2) {
    // rows in (slots / 2, slots]: one partition per row, a single wave at least half full and
    // no reduction, where the row fits the largest partition.
    const int64_t whole = granules(max_context_len);
    return per_row == 1 && whole <= kMaxPartitionSize ? static_cast<int>(whole) : kPartitionSize;
  }
  const int64_t size = granules(partitions_over(max_context_len, per_row));
  if (size > kMaxPartitionSize || 2 * blocks(size) < slots) return kPartitionSize;
  return static_cast<int>(size);
}

/// Partitions per row the v2_split workspace holds for `rows` (query row, head) pairs whose
/// ranges are at most `span` tokens: those of kSmallPartitionSize where that grid has at most
/// kSmallPartitionGridLimit blocks, else those of kPartitionSize (the most any other size
/// needs); at least 1.
inline constexpr int64_t workspace_partitions(int64_t rows, int64_t span) {
  const int64_t small = partitions_over(span, kSmallPartitionSize);
  const int64_t n =
      rows * small <= kSmallPartitionGridLimit ? small : partitions_over(span, kPartitionSize);
  return n > 1 ? n : 1;
}

/// The v2_split launcher's partition size: preferred_partition_size where its partitions of a
/// `max_context_len`-token range fit the `capacity` partitions per row the workspace holds
/// (workspace_partitions), else kPartitionSize (every workspace holds those; only
/// kSmallPartitionSize can need more).
inline constexpr int choose_partition_size(int64_t rows, int64_t max_context_len, int64_t slots,
                                           int64_t capacity) {
  const int size = preferred_partition_size(rows, max_context_len, slots);
  return partitions_over(max_context_len, size) <= capacity ? size : kPartitionSize;
}

/// Dynamic shared memory (logits) of the v1 kernels: one float per token of a row's range.
inline constexpr int64_t attention_v1_dynamic_smem(int64_t max_span) {
  return ((max_span + 3) / 4) * 4 * 4;
}
/// Dynamic shared memory of the v2 kernels: one float per partition token.
inline constexpr int64_t attention_v2_dynamic_smem(int64_t partition_size) {
  return partition_size * 4;
}
/// Dynamic shared memory of the v2 reduction: two floats per partition.
inline constexpr int64_t attention_reduce_dynamic_smem(int64_t max_num_partitions) {
  return max_num_partitions * 2 * 4;
}
/// Upper bound of the static shared memory of the main kernels for any dtype.
inline constexpr int64_t attention_static_smem_bound(int64_t head_size) {
  return 4 * head_size * 4 + head_size * 4 + 64;
}

}  // namespace pagecheck::kernels
