/// Numpy arrays owning C++ result buffers (array_out.h).
#include "array_out.h"

#include <utility>

namespace pagecheck::python {
namespace {

/// An array viewing `buffer`'s data that keeps `buffer` alive through a capsule.
template <typename Buffer>
py::array owning_array(Buffer&& buffer, const py::dtype& dt, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& element_strides) {
  auto* owned = new std::decay_t<Buffer>(std::forward<Buffer>(buffer));
  py::capsule owner(owned, [](void* p) { delete static_cast<std::decay_t<Buffer>*>(p); });
  std::vector<py::ssize_t> byte_strides;
  for (int64_t s : element_strides) byte_strides.push_back(s * dt.itemsize());
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array(dt, dims, byte_strides, owned->data(), owner);
}

}  // namespace

py::dtype storage_numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return py::dtype("<f4");
    case DType::kFloat16:
      return py::dtype("<f2");
    case DType::kBFloat16:
      return py::dtype("<u2");
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
      return py::dtype("u1");
  }
  throw std::invalid_argument("unknown dtype");
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

py::array float64_array(std::vector<double>&& values, const std::vector<int64_t>& shape) {
  return owning_array(std::move(values), py::dtype("<f8"), shape, packed_strides(shape));
}

py::array storage_array(std::vector<std::byte>&& bytes, DType dtype,
                        const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  return owning_array(std::move(bytes), storage_numpy_dtype(dtype), shape, strides);
}

py::array bytes_array(std::vector<std::byte>&& bytes, const py::dtype& dt,
                      const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  return owning_array(std::move(bytes), dt, shape, strides);
}

}  // namespace pagecheck::python
