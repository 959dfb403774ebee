/// Python arguments into raw storage and layouts (array_args.h).
#include "array_args.h"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace pagecheck::python {
namespace {

std::string dtype_text(const py::array& array) {
  return py::str(array.dtype()).cast<std::string>();
}

/// Requires `array` to have exactly `shape`.
void require_shape(const py::array& array, const std::string& name,
                   const std::vector<int64_t>& shape, const std::string& dims) {
  std::vector<int64_t> got(array.shape(), array.shape() + array.ndim());
  if (got != shape) {
    throw py::value_error(name + ": expected shape " + shape_text(shape) + " " + dims + ", got " +
                          shape_text(got));
  }
}

/// "[3][2]": the row-major index of flat element `flat` of `shape`, for messages.
std::string index_text(int64_t flat, const std::vector<int64_t>& shape) {
  std::string text;
  for (std::size_t i = shape.size(); i-- > 0;) {
    text = "[" + std::to_string(flat % shape[i]) + "]" + text;
    flat /= shape[i];
  }
  return text;
}

/// Requires a numeric array of one of the numpy kinds in `kinds`.
py::array numeric(const py::handle& obj, const std::string& name, const char* kinds,
                  const char* what) {
  py::array array = to_numpy(obj, name);
  const char kind = array.dtype().kind();
  if (std::strchr(kinds, kind) == nullptr) {
    throw py::type_error(name + ": expected " + what + ", got dtype " + dtype_text(array));
  }
  return array;
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

py::array to_numpy(const py::handle& obj, const std::string& name) {
  if (py::isinstance<py::array>(obj)) return py::reinterpret_borrow<py::array>(obj);
  if (obj.is_none()) throw py::type_error(name + ": expected an array, got None");
  py::module_ np = py::module_::import("numpy");
  if (py::hasattr(obj, "__dlpack__")) {
    try {
      return np.attr("from_dlpack")(obj);
    } catch (py::error_already_set& e) {
      throw py::type_error(name + ": cannot read it as a CPU array through __dlpack__ (" +
                           std::string(e.what()) + "); pass a CPU tensor (e.g. tensor.cpu())");
    }
  }
  try {
    return np.attr("asarray")(obj);
  } catch (py::error_already_set& e) {
    throw py::type_error(name +
                         ": expected an array, numpy.asarray failed: " + std::string(e.what()));
  }
}

std::optional<DType> requested_dtype(const py::handle& dtype) {
  if (dtype.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(dtype)) {
    throw py::type_error("dtype: expected None or a name such as 'float16' or 'bfloat16', got " +
                         py::repr(dtype).cast<std::string>());
  }
  try {
    return parse_dtype(dtype.cast<std::string>());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("dtype: ") + e.what());
  }
}

DType tensor_dtype(const py::array& array, const std::string& name, std::optional<DType> requested,
                   std::optional<DType> expected, const std::string& expected_from) {
  const py::dtype dt = array.dtype();
  if (dt.attr("byteorder").cast<std::string>() == ">") {
    throw py::type_error(name + ": big-endian dtype " + dtype_text(array) +
                         " (convert it with .astype(its native dtype))");
  }
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  DType natural;
  if (kind == 'f' && size == 4) {
    natural = DType::kFloat32;
  } else if (kind == 'f' && size == 2) {
    natural = DType::kFloat16;
  } else if ((kind == 'u' || kind == 'i') && size == 2) {
    natural = DType::kBFloat16;
    if (requested != DType::kBFloat16) {
      throw py::type_error(name + ": " + dtype_text(array) +
                           " arrays are taken as bfloat16 bits only with dtype='bfloat16'");
    }
  } else {
    throw py::type_error(name + ": dtype " + dtype_text(array) +
                         " is not a storage dtype (float32, float16, or bfloat16 bits as a "
                         "uint16/int16 view with dtype='bfloat16')");
  }
  if (requested && *requested != natural) {
    throw py::type_error(name + ": array dtype " + dtype_text(array) + " does not match dtype='" +
                         dtype_name(*requested) + "'" +
                         (*requested == DType::kBFloat16
                              ? " (pass bfloat16 as its bits: a uint16 or int16 view)"
                              : ""));
  }
  if (expected && *expected != natural) {
    throw py::type_error(name + ": dtype " + dtype_name(natural) + " differs from " +
                         expected_from + "'s " + dtype_name(*expected));
  }
  return natural;
}

StridedTensor read_tensor(const py::array& given, const std::string& name, std::size_t ndim,
                          const std::string& dims, DType dtype) {
  if (static_cast<std::size_t>(given.ndim()) != ndim) {
    std::vector<int64_t> got(given.shape(), given.shape() + given.ndim());
    throw py::value_error(name + ": expected " + std::to_string(ndim) + " dimensions " + dims +
                          ", got shape " + shape_text(got));
  }
  const auto item = static_cast<int64_t>(dtype_size(dtype));
  py::array array = given;
  StridedTensor t;
  t.shape.assign(array.shape(), array.shape() + ndim);
  auto expressible = [&](const py::array& a) {
    for (std::size_t i = 0; i < ndim; ++i) {
      const int64_t bytes = a.strides(i);
      if (a.shape(i) <= 1) continue;
      if (bytes <= 0 || bytes % item != 0) return false;
      if (i + 1 == ndim && bytes != item) return false;
    }
    return true;
  };
  if (!expressible(array)) {
    array = py::module_::import("numpy").attr("ascontiguousarray")(array);
  }
  t.strides.resize(ndim);
  for (std::size_t i = 0; i < ndim; ++i) t.strides[i] = array.strides(i) / item;
  for (int64_t extent : t.shape) {
    if (extent <= 0) return t;  // empty: no bytes; the layout checks report the size
  }
  // Size-1 dimensions: numpy's stride is arbitrary there; use the packed value.
  int64_t inner = 1;
  for (std::size_t i = ndim; i-- > 0;) {
    if (t.shape[i] == 1) t.strides[i] = i + 1 == ndim ? 1 : inner;
    inner += (t.shape[i] - 1) * t.strides[i];
  }
  t.bytes.resize(static_cast<std::size_t>(inner * item));
  std::memcpy(t.bytes.data(), array.data(), t.bytes.size());
  return t;
}

std::vector<int64_t> read_integers(const py::handle& obj, const std::string& name,
                                   const std::vector<int64_t>& shape, const std::string& dims) {
  py::array array = numeric(obj, name, "iu", "integers");
  require_shape(array, name, shape, dims);
  auto values = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
  return std::vector<int64_t>(values.data(), values.data() + values.size());
}

std::vector<int32_t> read_int32(const py::handle& obj, const std::string& name,
                                const std::vector<int64_t>& shape, const std::string& dims) {
  const std::vector<int64_t> wide = read_integers(obj, name, shape, dims);
  std::vector<int32_t> values(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    if (wide[i] < std::numeric_limits<int32_t>::min() ||
        wide[i] > std::numeric_limits<int32_t>::max()) {
      throw py::value_error(name + index_text(static_cast<int64_t>(i), shape) + " = " +
                            std::to_string(wide[i]) + " does not fit in int32");
    }
    values[i] = static_cast<int32_t>(wide[i]);
  }
  return values;
}

std::vector<float> read_float32(const py::handle& obj, const std::string& name,
                                const std::vector<int64_t>& shape, const std::string& dims) {
  py::array array = numeric(obj, name, "fiu", "real numbers");
  require_shape(array, name, shape, dims);
  auto values = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  return std::vector<float>(values.data(), values.data() + values.size());
}

std::vector<double> read_float64(const py::handle& obj, const std::string& name,
                                 const std::vector<int64_t>& shape, const std::string& dims) {
  py::array array = numeric(obj, name, "fiu", "real numbers");
  require_shape(array, name, shape, dims);
  auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  return std::vector<double>(values.data(), values.data() + values.size());
}

ref::TokenLayout token_layout(const StridedTensor& t) {
  ref::TokenLayout layout;
  layout.num_tokens = t.shape[0];
  layout.num_heads = t.shape[1];
  layout.head_size = t.shape[2];
  layout.stride_token = t.strides[0];
  layout.stride_head = t.strides[1];
  return layout;
}

ref::PagedCacheLayout cache_layout(const StridedTensor& key, const StridedTensor& value,
                                   DType dtype, int64_t head_size) {
  const int64_t x = dtype_x(dtype);
  if (key.shape[4] != x) {
    throw py::value_error("key_cache: last dimension is " + std::to_string(key.shape[4]) +
                          ", but x = 16 bytes / element size = " + std::to_string(x) + " for " +
                          dtype_name(dtype) +
                          " (the key cache is [num_blocks, num_kv_heads, head_size / x, "
                          "block_size, x])");
  }
  const int64_t key_head_size = key.shape[2] * x;
  if (head_size >= 0 && key_head_size != head_size) {
    throw py::value_error("key_cache: head_size / x = " + std::to_string(key.shape[2]) +
                          " gives head_size " + std::to_string(key_head_size) +
                          ", but the head_size of the tokens is " + std::to_string(head_size));
  }
  const std::vector<int64_t> want{key.shape[0], key.shape[1], key_head_size, key.shape[3]};
  if (value.shape != want) {
    throw py::value_error("value_cache: expected shape " + shape_text(want) +
                          " [num_blocks, num_kv_heads, head_size, block_size] to match "
                          "key_cache " +
                          shape_text(key.shape) + ", got " + shape_text(value.shape));
  }
  ref::PagedCacheLayout c;
  c.num_blocks = key.shape[0];
  c.num_kv_heads = key.shape[1];
  c.head_size = key_head_size;
  c.block_size = key.shape[3];
  c.x = x;
  c.key_stride_block = key.strides[0];
  c.key_stride_head = key.strides[1];
  c.key_stride_group = key.strides[2];
  c.key_stride_slot = key.strides[3];
  c.value_stride_block = value.strides[0];
  c.value_stride_head = value.strides[1];
  c.value_stride_dim = value.strides[2];
  try {
    c.validate(dtype);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("key_cache, value_cache: ") + e.what());
  }
  return c;
}

}  // namespace pagecheck::python
