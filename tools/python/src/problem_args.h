#pragma once
/// The reference's problem descriptions built from Python arguments (numpy arrays or objects
/// with __dlpack__), shared by pagecheck.reference and pagecheck.compare_attention.
#include <pybind11/pybind11.h>

#include "pagecheck/reference/problems.h"

namespace pagecheck::python {

namespace py = pybind11;

/// The cache keywords every function taking a paged cache accepts (each None by default).
struct CacheArgs {
  py::handle kind;      ///< page layout: None (x-split), "x_split", "nhd" or "hnd"
  py::handle kv_dtype;  ///< cache dtype: None (the tokens' dtype) or e.g. "fp8_e4m3"
  /// fp8 scales: a number or [num_kv_heads] (None: per tensor 1.0; a number next to per-head
  /// scales of the other tensor is repeated per head)
  py::handle k_scale;
  py::handle v_scale;  ///< as k_scale, for V
};

/// The attention keywords beyond the decode problem (each None by default).
struct FeatureArgs {
  py::handle query_start;  ///< [num_seqs + 1] cumulative query rows (None: one per sequence)
  py::handle sinks;        ///< [num_heads] sink logits
  py::handle window;       ///< sliding window W > 0
  py::handle soft_cap;     ///< logit soft-cap > 0
  py::handle causal;       ///< bool (None: causal)
};

/// A paged-attention problem from query [num_query_tokens, num_heads, head_size] (one row per
/// sequence without query_start), the caches in the layout of `cache.kind` (cache_dims),
/// block_table [num_seqs, max_blocks_per_seq], context_lens [num_seqs], `scale` (None:
/// 1/sqrt(head_size)), `alibi_slopes` (None or [num_heads]), `dtype` (None or a dtype name;
/// bfloat16 tensors are uint16/int16 views), the cache keywords and the features. Validated:
/// throws TypeError/ValueError naming the offending argument.
ref::PagedAttentionProblem attention_problem(
    const py::handle& query, const py::handle& key_cache, const py::handle& value_cache,
    const py::handle& block_table, const py::handle& context_lens, const py::handle& scale,
    const py::handle& alibi_slopes, const py::handle& dtype, const CacheArgs& cache,
    const FeatureArgs& features);

/// A KV-cache copy problem from key and value [num_tokens, num_kv_heads, head_size], the caches
/// (as for attention_problem) and slot_mapping [num_tokens]; `dequantize` (gather from an fp8
/// cache into 16/32-bit rows). Validated likewise.
ref::CacheCopyProblem copy_problem(const py::handle& key, const py::handle& value,
                                   const py::handle& key_cache, const py::handle& value_cache,
                                   const py::handle& slot_mapping, const py::handle& dtype,
                                   const CacheArgs& cache, bool dequantize);

}  // namespace pagecheck::python
