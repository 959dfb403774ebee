#pragma once
/// Conversion of Python arguments (numpy arrays, objects with __dlpack__, sequences) into the
/// reference's raw storage and layouts. Every error names the argument: TypeError for a wrong
/// kind or dtype, ValueError for a wrong shape or value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "pagecheck/reference/dtype.h"
#include "pagecheck/reference/layout.h"

namespace pagecheck::python {

namespace py = pybind11;

/// `obj` as a numpy array: a numpy array as is, an object with `__dlpack__` through
/// numpy.from_dlpack (zero-copy, CPU only), anything else through numpy.asarray. Throws
/// TypeError naming `name` when the conversion fails (e.g. a GPU tensor).
py::array to_numpy(const py::handle& obj, const std::string& name);

/// The dtype a caller asked for: None, or a name parse_dtype accepts ("float16", "bf16", ...).
/// Throws ValueError naming the `dtype` argument otherwise.
std::optional<DType> requested_dtype(const py::handle& dtype);

/// The cache dtype a caller asked for (kv_dtype): None, or a dtype name. Throws ValueError
/// naming `kv_dtype` otherwise.
std::optional<DType> requested_kv_dtype(const py::handle& kv_dtype);
/// The page layout a caller asked for (kind): None (x-split) or "x_split", "nhd", "hnd".
/// Throws TypeError / ValueError naming `kind`.
ref::CacheKind requested_kind(const py::handle& kind);

/// Storage dtype of tensor argument `name`: float32 and float16 arrays are themselves; uint16
/// and int16 arrays hold bfloat16 bits and need `requested` = bfloat16; uint8 and int8 arrays
/// hold fp8 codes and need `requested` = an fp8 dtype. When `expected` is given (an earlier
/// tensor's dtype), the array must agree with it. Throws TypeError naming the argument on any
/// other dtype, a non-native byte order or a disagreement.
DType tensor_dtype(const py::array& array, const std::string& name, std::optional<DType> requested,
                   std::optional<DType> expected, const std::string& expected_from);

/// A tensor argument in raw storage: its shape, its strides in elements (strides of size-1
/// dimensions replaced by the packed value) and the bytes from its first element to its last.
struct StridedTensor {
  std::vector<int64_t> shape;    ///< extents
  std::vector<int64_t> strides;  ///< element strides; the innermost is 1
  std::vector<std::byte> bytes;  ///< span() elements: the array's memory, gaps included
};

/// Reads tensor argument `name` of `ndim` dimensions (`dims` names them for messages, e.g.
/// "[num_seqs, num_heads, head_size]"). Arrays whose strides can be expressed as element
/// strides (positive, whole elements, innermost 1) are read with their strides unless
/// `packed`; others (Fortran order, broadcast, reversed) and every array when `packed` as a
/// packed copy. Throws ValueError naming the argument on a wrong number of dimensions.
StridedTensor read_tensor(const py::array& array, const std::string& name, std::size_t ndim,
                          const std::string& dims, DType dtype, bool packed = false);

/// Integer argument `name` (any integer dtype or a sequence of ints) of exactly `shape`,
/// converted to int64. Throws TypeError for a non-integer array, ValueError for another shape.
std::vector<int64_t> read_integers(const py::handle& obj, const std::string& name,
                                   const std::vector<int64_t>& shape, const std::string& dims);

/// As read_integers, each value checked to fit in int32 (ValueError naming the element).
std::vector<int32_t> read_int32(const py::handle& obj, const std::string& name,
                                const std::vector<int64_t>& shape, const std::string& dims);

/// Floating argument `name` of exactly `shape`, rounded to float32.
std::vector<float> read_float32(const py::handle& obj, const std::string& name,
                                const std::vector<int64_t>& shape, const std::string& dims);

/// Floating argument `name` of exactly `shape`, as float64 (row-major).
std::vector<double> read_float64(const py::handle& obj, const std::string& name,
                                 const std::vector<int64_t>& shape, const std::string& dims);

/// Array argument `name` of exactly `shape` (`dims` for messages) as densely packed bytes
/// (the caller has checked its dtype). Throws ValueError naming the argument on another shape.
std::vector<std::byte> packed_bytes(const py::array& array, const std::string& name,
                                    const std::vector<int64_t>& shape, const std::string& dims);

/// "(2, 8, 128)": a shape for messages.
std::string shape_text(const std::vector<int64_t>& shape);

/// A token tensor [num_tokens, num_heads, head_size] with its layout.
struct TokenTensor {
  ref::TokenLayout layout;       ///< its strides
  std::vector<std::byte> bytes;  ///< raw storage, layout.span() elements
};

/// Reads token tensor argument `name` (`dims` for messages) with its strides, or as a packed
/// copy when its strides are not a valid token layout (e.g. a transposed [heads, tokens, dim]
/// array: the result is the same). Throws ValueError naming the argument on a wrong shape.
TokenTensor read_tokens(const py::array& array, const std::string& name, const std::string& dims,
                        DType dtype);

}  // namespace pagecheck::python
