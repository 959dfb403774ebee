#pragma once
/// The reference's problem descriptions built from Python arguments (numpy arrays or objects
/// with __dlpack__), shared by pagecheck.reference and pagecheck.compare_attention.
#include <pybind11/pybind11.h>

#include "pagecheck/reference/problems.h"

namespace pagecheck::python {

namespace py = pybind11;

/// Keyword `name` of `kw`, or None when absent.
py::object keyword(const py::kwargs& kw, const char* name);

/// A paged-attention problem from query [num_query_tokens, num_heads, head_size] (one row per
/// sequence without query_start), the caches in the layout of keyword `kind` (cache_dims),
/// block_table [num_seqs, max_blocks_per_seq] and context_lens [num_seqs], and the keywords
/// (each None when absent): scale (None: 1/sqrt(head_size)), alibi_slopes ([num_heads]),
/// dtype (a dtype name; bfloat16 tensors are uint16/int16 views), the cache keywords kind
/// (None: x-split, "x_split", "nhd", "hnd"), kv_dtype (None: the tokens' dtype, or e.g.
/// "fp8_e4m3"), k_scale / v_scale (fp8 scales: a number or [num_kv_heads]; None: per tensor
/// 1.0; a number next to per-head scales of the other tensor is repeated per head), and the
/// features query_start ([num_seqs + 1] cumulative query rows), sinks ([num_heads]), window
/// (W > 0), soft_cap (> 0), causal (bool; None: causal). Other keywords in `kw` are ignored
/// (the caller's own, e.g. num_threads). Validated: throws TypeError/ValueError naming the
/// offending argument.
ref::PagedAttentionProblem attention_problem(const py::handle& query, const py::handle& key_cache,
                                             const py::handle& value_cache,
                                             const py::handle& block_table,
                                             const py::handle& context_lens, const py::kwargs& kw);

/// A KV-cache copy problem from key and value [num_tokens, num_kv_heads, head_size], the caches
/// (as for attention_problem) and slot_mapping [num_tokens], with the keywords dtype, the cache
/// keywords and dequantize (gather from an fp8 cache into 16/32-bit rows; None: false).
/// Validated likewise.
ref::CacheCopyProblem copy_problem(const py::handle& key, const py::handle& value,
                                   const py::handle& key_cache, const py::handle& value_cache,
                                   const py::handle& slot_mapping, const py::kwargs& kw);

}  // namespace pagecheck::python
