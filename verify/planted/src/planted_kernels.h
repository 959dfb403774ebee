#pragma once
/// Host interface of the planted kernels (internal): one simple kernel per family with a
/// runtime bug switch, and the params each reads.
#include <cstddef>
#include <cstdint>

#include "pagecheck/plugin.h"
#include "pagecheck/verify/planted_row.h"

namespace pagecheck::verify::planted {

/// Which bug a launch plants (kNone = the correct control kernel).
enum class Bug : int {
  kNone = 0,
  kSkipLastPartialBlock,
  kContextOffByOne,
  kWrongKvHeadGqa,
  kOtherSeqBlockTableRow,
  kScaleTwice,
  kScaleMissing,
  kPartitionMaxOnly,
  kZeroWeightNan,
  kOffset32,
  kMissingSyncthreads,
  kGatherSlotMinus1,
  kGatherXSplitOffset,
  kReshapeSlotMinus1,
  kAtomicValueRace,
  kCopyOneBlockPerToken,  ///< a token's 16-byte vectors capped at kOneBlockVectors, no loop
  kTableStrideFromWidth,  ///< block-table rows addressed with max_blocks_per_seq
  kFiniteMaskSentinel,    ///< slots past the context in the last block get logit kMaskSentinel
  kPartitionsFromBound,   ///< split-K partition count from max_context_len for every sequence
  kGqaGroupLe8,           ///< a kv head serves at most kGqaSlots query heads
};

/// Tokens per partition of the split-K planted kernel (the v2_split kernel's default size).
inline constexpr int64_t kPlantedPartition = 256;
/// Threads per block of every planted kernel.
inline constexpr int kPlantedThreads = 128;
/// kCopyOneBlockPerToken: threads of the one block a token gets (one 16-byte vector each).
inline constexpr int64_t kOneBlockVectors = 1024;
/// kFiniteMaskSentinel: the finite logit of a masked slot.
inline constexpr float kMaskSentinel = -1.0e4f;
/// kGqaGroupLe8: query-head slots per kv head.
inline constexpr int64_t kGqaSlots = 8;

/// Where the elements of one cache tensor live: element (block, head, slot, dim) at
/// block*block + head*head + slot*slot + (dim / dim_split)*group + (dim % dim_split)*dim
/// (the ABI's pc_cache_strides, read by the kernels through cache_offset()).
using CacheStrides = pc_cache_strides;

/// What every planted attention kernel reads (the one-pass and split-K kernels here and the
/// generic kernel of planted_features_kernels.h), filled on the host from the version-2 arguments
/// by attention_params(). The one-pass and split-K kernels run decode only (one query row per
/// sequence: num_rows == row.num_seqs, can_implement checks it).
struct AttentionParams {
  RowArgs row;                 ///< the arguments a query row reads (planted_row.h)
  int64_t num_rows;            ///< query rows of the batch
  int64_t max_context_len;     ///< host bound on every context (shared memory or scratch size)
  int64_t max_blocks_per_seq;  ///< block-table columns (<= row.block_table_stride)
  void* out;                   ///< [num_rows, num_heads, head_size] in row.dtype
  int64_t out_stride_token;    ///< elements between output rows
  int64_t out_stride_head;     ///< elements between output heads
};

/// What the planted copy kernels read (both directions), filled from the version-2 arguments.
struct CopyParams {
  pc_dtype dtype;               ///< element dtype of every tensor
  int64_t num_tokens;           ///< rows of the token tensors
  void* key_cache;              ///< key tensor
  void* value_cache;            ///< value tensor
  CacheStrides key_strides;     ///< key cache strides
  CacheStrides value_strides;   ///< value cache strides
  int64_t num_kv_heads;         ///< heads per token
  int64_t head_size;            ///< elements per head
  int64_t block_size;           ///< slots per block
  const int64_t* slot_mapping;  ///< [num_tokens], -1 = skip
  void* key;                    ///< [num_tokens, num_kv_heads, head_size] token-side K
  int64_t key_stride_token;     ///< elements between key rows
  int64_t key_stride_head;      ///< elements between key heads
  void* value;                  ///< token-side V
  int64_t value_stride_token;   ///< elements between value rows
  int64_t value_stride_head;    ///< elements between value heads
};

/// The planted kernels' params of version-2 arguments (already checked by can_implement).
AttentionParams attention_params(const pc_paged_attention_args& args);
CopyParams gather_params(const pc_gather_args& args);
CopyParams reshape_params(const pc_reshape_and_cache_args& args);

/// Workspace bytes of the split-K kernel.
size_t planted_attention_workspace(const AttentionParams& p, bool split);
/// Largest context the one-pass kernel holds in shared memory.
int64_t planted_max_context();
/// Enqueues the planted attention kernel(s); returns the launch error text or "" on success.
const char* launch_planted_attention(const AttentionParams& p, Bug bug, bool split, void* workspace,
                                     void* stream);
/// Enqueues the planted gather (cache -> key / value) or reshape (key / value -> cache) kernel.
const char* launch_planted_gather(const CopyParams& p, Bug bug, void* stream);
const char* launch_planted_reshape(const CopyParams& p, Bug bug, void* stream);

}  // namespace pagecheck::verify::planted
