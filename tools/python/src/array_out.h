#pragma once
/// Results handed to Python as numpy arrays that own the C++ buffers (no copy).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "pagecheck/reference/dtype.h"

namespace pagecheck::python {

namespace py = pybind11;

/// The numpy dtype that stores `dtype`: float32, float16, uint16 holding bfloat16 bits, or
/// uint8 holding fp8 codes.
py::dtype storage_numpy_dtype(DType dtype);

/// A float64 array of `shape` (row-major) that takes over `values`.
py::array float64_array(std::vector<double>&& values, const std::vector<int64_t>& shape);

/// A storage-dtype array of `shape` with element `strides` over raw `bytes`, which it takes
/// over (a padded layout keeps its gaps).
py::array storage_array(std::vector<std::byte>&& bytes, DType dtype,
                        const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

/// An array of numpy dtype `dt`, `shape` and element `strides` over raw `bytes`, which it takes
/// over.
py::array bytes_array(std::vector<std::byte>&& bytes, const py::dtype& dt,
                      const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

/// Packed row-major element strides of `shape`.
std::vector<int64_t> packed_strides(const std::vector<int64_t>& shape);

}  // namespace pagecheck::python
