#pragma once
/// The reference's problem descriptions built from Python arguments (numpy arrays or objects
/// with __dlpack__), shared by pagecheck.reference and pagecheck.compare_attention.
#include <pybind11/pybind11.h>

#include "pagecheck/reference/problems.h"

namespace pagecheck::python {

namespace py = pybind11;

/// A paged-attention problem from query [num_seqs, num_heads, head_size], key_cache
/// [num_blocks, num_kv_heads, head_size / x, block_size, x], value_cache [num_blocks,
/// num_kv_heads, head_size, block_size], block_table [num_seqs, max_blocks_per_seq],
/// context_lens [num_seqs], `scale` (None: 1/sqrt(head_size)), `alibi_slopes` (None or
/// [num_heads]) and `dtype` (None or a dtype name; bfloat16 tensors are uint16/int16 views).
/// Validated: throws TypeError/ValueError naming the offending argument.
ref::PagedAttentionProblem attention_problem(
    const py::handle& query, const py::handle& key_cache, const py::handle& value_cache,
    const py::handle& block_table, const py::handle& context_lens, const py::handle& scale,
    const py::handle& alibi_slopes, const py::handle& dtype);

/// A KV-cache copy problem from key and value [num_tokens, num_kv_heads, head_size], the
/// caches (as for attention_problem) and slot_mapping [num_tokens]. Validated likewise.
ref::CacheCopyProblem copy_problem(const py::handle& key, const py::handle& value,
                                   const py::handle& key_cache, const py::handle& value_cache,
                                   const py::handle& slot_mapping, const py::handle& dtype);

}  // namespace pagecheck::python
