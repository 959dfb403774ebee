#pragma once
/// The parts of the _pagecheck extension, each adding its functions to a submodule.
#include <pybind11/pybind11.h>

namespace pagecheck::python {

namespace py = pybind11;

/// pagecheck.reference: paged_attention, gather_cached_kv, reshape_and_cache, to_storage,
/// to_float64.
void bind_reference(py::module_& m);
/// ToleranceModel, AttentionComparison and compare_attention.
void bind_compare(py::module_& m);
/// cases and verify_runner (pagecheck.cases, pagecheck.verify).
void bind_verify(py::module_& m);
/// pagecheck.golden: load.
void bind_golden(py::module_& m);

}  // namespace pagecheck::python
