#pragma once
/// A materialized case (gen::materialize's problem, poison included) as the keyword arguments
/// a Python kernel receives, and that kernel's outputs read back into the problem's raw
/// storage (the form the case runner compares).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "pagecheck/reference/problems.h"

namespace pagecheck::python {

namespace py = pybind11;

/// The inputs of an attention problem as a dict of writable numpy arrays in the problem's own
/// strides (padding and unused cache slots hold their poison): query, key_cache, value_cache
/// (views of one buffer for a combined cache), block_table [num_seqs, max_blocks_per_seq] (its
/// row stride the kernel's table stride; entries past a sequence's last block lie outside the
/// pool), context_lens, max_context_len, scale, alibi_slopes / sinks / query_start (None when
/// absent), window, soft_cap, causal, dtype, kind, kv_dtype, k_scale / v_scale (None for a
/// 16/32-bit cache), and out: the output buffer in `out_layout`, every element the dtype's
/// output poison.
py::dict attention_arrays(const ref::PagedAttentionProblem& p, const ref::TokenLayout& out_layout);

/// The inputs of a copy problem: key, value, key_cache, value_cache, slot_mapping (int64),
/// dtype, kind, kv_dtype, k_scale, v_scale, and for gather `dequantize`. For gather, key and
/// value are the output buffers (their initial contents); for reshape_and_cache, the caches.
py::dict copy_arrays(const ref::CacheCopyProblem& p, bool gather);

/// A kernel's attention output [num_query_tokens, num_heads, head_size] in the problem's
/// dtype, densely packed; `requested` as for tensor_dtype (the dtype the caller named).
/// Throws TypeError / ValueError naming `name`.
std::vector<std::byte> attention_output(const py::handle& out, const ref::PagedAttentionProblem& p,
                                        const std::string& name, std::optional<DType> requested);

/// A copy kernel's two outputs in their logical shapes (gather: key, value; reshape: key_cache,
/// value_cache) written over the problem's initial buffers in the problem's layouts (so gaps
/// keep their poison): `first` / `second` as in verify::CopyRun (second empty for a combined
/// cache). Throws TypeError / ValueError naming `names`.
void copy_outputs(const py::handle& first, const py::handle& second, const ref::CacheCopyProblem& p,
                  bool gather, std::vector<std::byte>* first_out,
                  std::vector<std::byte>* second_out);

}  // namespace pagecheck::python
