#pragma once
/// A variant's declared support (gen::VariantCaps) from Python: the `family` and `caps`
/// arguments of pagecheck.cases and pagecheck.verify. Errors name the argument and key.
#include <pybind11/pybind11.h>

#include "pagecheck/verify/gen/variant_caps.h"

namespace pagecheck::python {

namespace py = pybind11;

/// The caps of `family` ("paged_attention", "gather_cached_kv" or "reshape_and_cache") that
/// `caps` declares: a dict (or an object whose attributes are the keys) with the keys of
/// VariantCaps' JSON form (verify/gen/src/variant_caps.cpp): required "dtypes", "head_sizes",
/// "block_sizes"; optional "name" (default `default_name`), "kv_dtypes", "cache_kinds",
/// "scale_kinds", "caps" (a list of flag names such as "alibi", "token_stride", or the
/// PC_CAP_* bits as an int), "max_query_len", "partition_sizes", "context0",
/// "nondeterministic", "precision" ({"qk_accum", "pv_accum", "rounded",
/// "storage_sum_terms"}). Throws TypeError / ValueError naming `family` or `caps[KEY]`.
verify::gen::VariantCaps read_caps(const py::handle& family, const py::handle& caps,
                                   const std::string& default_name);

}  // namespace pagecheck::python
