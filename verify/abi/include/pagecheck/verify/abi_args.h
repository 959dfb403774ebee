#pragma once
/// The one conversion from pagecheck's problem vocabulary (ref::PagedAttentionProblem,
/// ref::CacheCopyProblem, ref::PagedCacheLayout) to the plugin ABI v2 argument structs. It reads
/// descriptors only (dtypes, layouts, the batch's small host vectors for its bounds), never a
/// tensor's contents, so callers may pass problems whose data buffers are empty (the bench
/// builds its tensors on the device). The caller supplies the device pointers; every struct_size
/// is set.
#include <cstdint>

#include "pagecheck/plugin.h"
#include "pagecheck/reference/layout.h"
#include "pagecheck/reference/problems.h"

namespace pagecheck::verify {

/// pc_dtype of a DType (the values agree; checked at compile time).
pc_dtype to_abi(DType dtype);
/// pc_cache_kind of a CacheKind.
pc_cache_kind to_abi(ref::CacheKind kind);
/// pc_scale_kind of a ScaleKind.
pc_scale_kind to_abi(ref::ScaleKind kind);
/// The cache descriptor: sizes, kind, dtype, scale kind, K and V strides, combined + value_base,
/// and the device scale pointers (NULL where the layout has no scales; throws
/// std::invalid_argument naming the pointer when the scale kind needs one that is NULL).
pc_kv_cache to_abi(const ref::PagedCacheLayout& layout, const float* k_scale_dev,
                   const float* v_scale_dev);

/// Device pointers of one attention call. For a combined cache value_cache is ignored (the
/// value tensor starts cache.value_base elements after key_cache).
struct AttentionPointers {
  const void* query = nullptr;            ///< query rows
  const void* key_cache = nullptr;        ///< key tensor (both halves when combined)
  const void* value_cache = nullptr;      ///< value tensor (separate caches only)
  const int32_t* query_start = nullptr;   ///< [num_seqs + 1]; needed when batch.query_start is set
  const int32_t* context_lens = nullptr;  ///< [num_seqs]
  const int32_t* block_table = nullptr;   ///< [num_seqs, batch.table_stride()]
  const float* alibi_slopes = nullptr;    ///< needed when features.alibi_slopes is set
  const float* sinks = nullptr;           ///< needed when features.sinks is set
  const float* k_scale = nullptr;         ///< needed when the cache has scales
  const float* v_scale = nullptr;         ///< as k_scale
  void* out = nullptr;                    ///< output rows, layout `out_layout`
};

/// pc_paged_attention_args of `problem` (its descriptors only) writing into `out_layout`
/// ([num_query_tokens, num_heads, head_size], any strides). Throws std::invalid_argument naming
/// the argument when out_layout does not match the problem's rows, heads or head size, or a
/// pointer the problem needs is NULL.
pc_paged_attention_args attention_args(const ref::PagedAttentionProblem& problem,
                                       const ref::TokenLayout& out_layout,
                                       const AttentionPointers& pointers);

/// Device pointers of one copy call (mutable: either side may be the output). For a combined
/// cache value_cache is ignored.
struct CopyPointers {
  void* key_cache = nullptr;              ///< key tensor (both halves when combined)
  void* value_cache = nullptr;            ///< value tensor (separate caches only)
  const int64_t* slot_mapping = nullptr;  ///< [num_tokens]
  void* key = nullptr;                    ///< contiguous K (gather: the output)
  void* value = nullptr;                  ///< contiguous V (gather: the output)
  const float* k_scale = nullptr;         ///< needed when the cache has scales
  const float* v_scale = nullptr;         ///< as k_scale
};

/// pc_gather_args of `problem` (cache -> key / value). Throws as attention_args.
pc_gather_args gather_args(const ref::CacheCopyProblem& problem, const CopyPointers& pointers);
/// pc_reshape_and_cache_args of `problem` (key / value -> cache). Throws as attention_args.
pc_reshape_and_cache_args reshape_args(const ref::CacheCopyProblem& problem,
                                       const CopyPointers& pointers);

}  // namespace pagecheck::verify
