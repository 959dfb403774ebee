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

namespace {

/// An optional keyword naming a value: None gives nullopt; anything but a str is a TypeError
/// "NAME: expected None or EXPECTED, got REPR"; a str `parse` refuses is a ValueError
/// "NAME: <parse's message>".
template <typename T, typename Parse>
std::optional<T> optional_name(const py::handle& value, const char* name, const char* expected,
                               Parse parse) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(std::string(name) + ": expected None or " + expected + ", got " +
                         py::repr(value).cast<std::string>());
  }
  try {
    return parse(value.cast<std::string>());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string(name) + ": " + e.what());
  }
}

}  // namespace

std::optional<DType> requested_dtype(const py::handle& dtype) {
  return optional_name<DType>(dtype, "dtype", "a name such as 'float16' or 'bfloat16'",
                              parse_dtype);
}

std::optional<DType> requested_kv_dtype(const py::handle& kv_dtype) {
  return optional_name<DType>(kv_dtype, "kv_dtype", "a name such as 'fp8_e4m3'", parse_dtype);
}

ref::CacheKind requested_kind(const py::handle& kind) {
  return optional_name<ref::CacheKind>(
             kind, "kind", "'x_split', 'nhd' or 'hnd'",
             [](const std::string& text) { return ref::parse_cache_kind(text.c_str()); })
      .value_or(ref::CacheKind::kXSplit);
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
  } else if ((kind == 'u' || kind == 'i') && size == 1) {
    if (!requested || !dtype_info(*requested).fp8) {
      throw py::type_error(name + ": " + dtype_text(array) +
                           " arrays are taken as fp8 codes only with kv_dtype='fp8_e4m3' or "
                           "'fp8_e5m2'");
    }
    natural = *requested;
  } else {
    throw py::type_error(name + ": dtype " + dtype_text(array) +
                         " is not a storage dtype (float32, float16, bfloat16 bits as a "
                         "uint16/int16 view with dtype='bfloat16', or fp8 codes as uint8 with "
                         "kv_dtype='fp8_e4m3' / 'fp8_e5m2')");
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
                          const std::string& dims, DType dtype, bool packed) {
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
  if (packed || !expressible(array)) {
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

namespace {

/// Numeric argument `name` of one of the numpy `kinds` ("iu", "fiu") and exactly `shape`,
/// converted to T (row-major).
template <typename T>
std::vector<T> read_values(const py::handle& obj, const std::string& name,
                           const std::vector<int64_t>& shape, const std::string& dims,
                           const char* kinds, const char* what) {
  py::array array = numeric(obj, name, kinds, what);
  require_shape(array, name, shape, dims);
  auto values = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
  return std::vector<T>(values.data(), values.data() + values.size());
}

}  // namespace

std::vector<int64_t> read_integers(const py::handle& obj, const std::string& name,
                                   const std::vector<int64_t>& shape, const std::string& dims) {
  return read_values<int64_t>(obj, name, shape, dims, "iu", "integers");
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
  return read_values<float>(obj, name, shape, dims, "fiu", "real numbers");
}

std::vector<double> read_float64(const py::handle& obj, const std::string& name,
                                 const std::vector<int64_t>& shape, const std::string& dims) {
  return read_values<double>(obj, name, shape, dims, "fiu", "real numbers");
}

std::vector<std::byte> packed_bytes(const py::array& given, const std::string& name,
                                    const std::vector<int64_t>& shape, const std::string& dims) {
  require_shape(given, name, shape, dims);
  const py::array a = py::module_::import("numpy").attr("ascontiguousarray")(given);
  std::vector<std::byte> bytes(static_cast<std::size_t>(a.nbytes()));
  std::memcpy(bytes.data(), a.data(), bytes.size());
  return bytes;
}

namespace {

ref::TokenLayout token_layout(const StridedTensor& t) {
  ref::TokenLayout layout;
  layout.num_tokens = t.shape[0];
  layout.num_heads = t.shape[1];
  layout.head_size = t.shape[2];
  layout.stride_token = t.strides[0];
  layout.stride_head = t.strides[1];
  return layout;
}

}  // namespace

TokenTensor read_tokens(const py::array& array, const std::string& name, const std::string& dims,
                        DType dtype) {
  for (bool packed : {false, true}) {
    StridedTensor t = read_tensor(array, name, 3, dims, dtype, packed);
    TokenTensor out{token_layout(t), std::move(t.bytes)};
    try {
      out.layout.validate(name.c_str());
      return out;
    } catch (const std::invalid_argument& e) {
      // Strides numpy can express but a token layout cannot (a transposed array): a packed
      // copy holds the same tensor.
      if (packed) throw py::value_error(e.what());
    }
  }
  throw std::logic_error("read_tokens: unreachable");
}

}  // namespace pagecheck::python
